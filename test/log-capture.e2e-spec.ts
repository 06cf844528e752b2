/**
 * What a real Nest app prints: test/support/log-capture.app.ts runs as its own process with Nest's
 * ConsoleLogger (every level on) and makes the sandbox, SMS, checkout and service-app modules
 * write warnings and debug lines (retries after faults, a refused batch, rejected and duplicate
 * callbacks, an unknown service code, a forged fulfillment request). This test reads its stdout
 * and stderr as they are, line by line, and checks that
 *   - no line holds only a logger context (`DEBUG [HubtelCheckout] HubtelCheckout`: a context
 *     passed again to a Logger that already has one is printed as a message of its own);
 *   - each module wrote both a warning and a debug line;
 *   - no credential appears, neither as text nor as a Basic auth header, and no phone number
 *     appears whole (masked ones do).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsNodeArgs } from '../bench/loader/entry.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CREDENTIALS = {
  LOG_CAPTURE_SMS_ID: 'lc-sms-id-7f3a',
  LOG_CAPTURE_SMS_SECRET: 'lc-sms-secret-9c1e',
  LOG_CAPTURE_API_ID: 'lc-api-id-2b8d',
  LOG_CAPTURE_API_SECRET: 'lc-api-secret-5e07',
};
const PHONES = ['0244123456', '0209876543'];
const CONTEXTS = ['SmsService', 'HubtelCheckout', 'HubtelServiceApp', 'HubtelSandbox'];
/** `[Nest] 123  - 11/23/2026, 6:55:42 PM   DEBUG [Context] message` (colours removed). */
const NEST_LINE = /^\[Nest\] \d+\s+- .+?\s+(LOG|ERROR|WARN|DEBUG|VERBOSE|FATAL) \[([^\]]*)\] ?(.*)$/;
const ANSI = /\x1b\[[0-9;]*m/g; // eslint-disable-line no-control-regex

interface NestLine {
  level: string;
  context: string;
  message: string;
  text: string;
}

function runApp(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, tsNodeArgs(path.join(root, 'test/support/log-capture.app.ts')), {
      cwd: root,
      env: { ...process.env, ...CREDENTIALS, LOG_CAPTURE_PHONES: PHONES.join(','), FORCE_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('log capture: what a real Nest app prints for each module', () => {
  let output = '';
  let lines: NestLine[] = [];

  beforeAll(async () => {
    const run = await runApp();
    output = run.output.replace(ANSI, '');
    if (run.code !== 0 || !output.includes('LOG-CAPTURE DONE'))
      throw new Error(`the app exited with ${run.code}:\n${output.slice(-4000)}`);
    lines = output
      .split('\n')
      .map((text) => ({ text, match: NEST_LINE.exec(text) }))
      .filter(({ match }) => match !== null)
      .map(({ text, match }) => ({ level: match![1]!, context: match![2]!, message: match![3]!, text }));
  }, 120_000);

  it('prints no line that holds only a logger context', () => {
    const contexts = new Set(lines.map((l) => l.context));
    const stray = lines.filter((l) => l.message.trim() === '' || contexts.has(l.message.trim()));
    expect(stray.map((l) => l.text)).toEqual([]);
  });

  it.each(CONTEXTS)('%s wrote a warning and a debug line', (context) => {
    const levels = new Set(lines.filter((l) => l.context === context).map((l) => l.level));
    expect({ context, warn: levels.has('WARN'), debug: levels.has('DEBUG') }).toEqual({
      context,
      warn: true,
      debug: true,
    });
  });

  it('the HTTP layer logged each call with its retries under the module context', () => {
    for (const context of ['SmsService', 'HubtelCheckout']) {
      expect(
        lines.some((l) => l.context === context && l.level === 'DEBUG' && l.message.startsWith('→ ')),
      ).toBe(true);
      expect(
        lines.some((l) => l.context === context && l.level === 'WARN' && /retrying in/.test(l.message)),
      ).toBe(true);
    }
  });

  it('names no credential and no whole phone number; masked numbers are there', () => {
    const secrets = Object.values(CREDENTIALS);
    const basic = [
      [CREDENTIALS.LOG_CAPTURE_SMS_ID, CREDENTIALS.LOG_CAPTURE_SMS_SECRET],
      [CREDENTIALS.LOG_CAPTURE_API_ID, CREDENTIALS.LOG_CAPTURE_API_SECRET],
    ].map(([id, secret]) => Buffer.from(`${id}:${secret}`).toString('base64'));
    const phones = PHONES.flatMap((p) => [p, `233${p.slice(1)}`, p.slice(1)]);
    for (const needle of [...secrets, ...basic, ...phones, 'Authorization', 'Basic ']) {
      expect({ needle, found: output.includes(needle) }).toEqual({ needle, found: false });
    }
    expect(output).toContain('233******456');
    expect(output).toContain('024****456');
  });

  it('masks a phone number split by zero-width characters, "/", "_" or tabs (the UNKNOWN_REFERENCE warning)', () => {
    const forged = lines.filter((l) => l.level === 'WARN' && l.message.includes('UNKNOWN_REFERENCE'));
    expect(forged.length).toBeGreaterThanOrEqual(5);
    // As a reader sees it: the invisible characters, separators and escapes (\t) taken out.
    const seen = (text: string) => text.replace(/\\t/g, '').replace(/[\s/_\p{Cf}]/gu, '');
    for (const phone of PHONES)
      expect({ phone, found: seen(output).includes(phone) }).toEqual({ phone, found: false });
    for (const masked of [
      '024\u200b***\u200b*456',
      '024\u2060\u200d***\u2060\u200d*456',
      '024/***/*456',
      '024_***_*456',
      '024\\t***\\t*456',
    ])
      expect({ masked, found: forged.some((l) => l.message.includes(masked)) }).toEqual({
        masked,
        found: true,
      });
  });
});
