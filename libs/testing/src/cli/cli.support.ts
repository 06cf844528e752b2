import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { styleText } from 'node:util';
import { HubtelApiError, HubtelNetworkError, tryNormalizeMsisdn } from '#light/core';
import type { ServiceAppChannel } from '#internal';
import type { RecordServicePaymentOptions } from 'nestjs-hubtel/sandbox';
import { request } from '../testing.http.js';
import { CliUsageError, jsonOrText } from '#light/sandbox';

/** Where a command reads and writes (process streams, or in-memory streams in tests). */
export interface CliStreams {
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /** Environment for NO_COLOR / FORCE_COLOR. Default process.env. */
  env?: Record<string, string | undefined>;
}

/** The reason an error body gives: `message`, and each `errors`/`Errors` entry it does not carry. */
export function reasonOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim().slice(0, 500) || undefined;
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const message = [b.message, b.Message].find((m): m is string => typeof m === 'string' && m !== '');
  const list = [b.errors, b.Errors].find(Array.isArray) as unknown[] | undefined;
  const details: string[] = [];
  for (const entry of list ?? []) {
    const e = (typeof entry === 'string' ? { message: entry } : (entry ?? {})) as Record<string, unknown>;
    const { field, message: text } = e;
    // A message that already says it (the sandbox's DTO answers list their issues in it) is enough.
    if (typeof text !== 'string' || text === '' || message?.includes(text)) continue;
    details.push(typeof field === 'string' && field !== '' ? `${field} ${text}` : text);
  }
  const reason = [message, details.join('; ')].filter(Boolean).join(': ');
  return reason === '' ? undefined : reason.slice(0, 1000);
}

export type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';

/** ANSI styling when writing to a terminal (NO_COLOR and FORCE_COLOR honoured, https://no-color.org). */
export function painter(
  stream: { isTTY?: boolean },
  env: Record<string, string | undefined> = process.env,
  forceOff = false,
): (text: string, ...styles: Style[]) => string {
  const force = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  const enabled =
    !forceOff && (env.NO_COLOR === undefined || env.NO_COLOR === '') && (force || stream.isTTY === true);
  if (!enabled) return (text) => text;
  // Whether to colour is decided above (the stream given, not process.stdout): styleText only paints.
  return (text, ...styles) => styles.reduce((t, s) => styleText(s, t, { validateStream: false }), text);
}

/** A USSD screen's title: its size, marked when over the limit. */
export function ussdTitle(
  screen: { length: number; limit: number; fits: boolean },
  p: ReturnType<typeof painter>,
): string {
  const size = `── USSD ${screen.length}/${screen.limit}`;
  return screen.fits ? p(`${size} ──`, 'dim') : p(`${size} TOO LONG ──`, 'bold', 'yellow');
}

/**
 * Reads answers line by line; lines typed before a question are queued, not lost as readline's
 * question() would lose them. On a pipe the answer is echoed after the prompt.
 */
export class LineReader {
  private readonly rl: Interface;
  private readonly lines: string[] = [];
  private waiting: ((line: string | null) => void) | undefined;
  private ended = false;
  private interruptHandler: (() => void) | undefined;
  readonly terminal: boolean;

  constructor(
    input: Readable & { isTTY?: boolean },
    private readonly output: Writable,
  ) {
    this.terminal = input.isTTY === true && (output as { isTTY?: boolean }).isTTY === true;
    this.rl = createInterface({
      input,
      output: this.terminal ? output : undefined,
      terminal: this.terminal,
      historySize: 0,
    });
    this.rl.on('line', (line) => (this.waiting ? this.answer(line) : this.lines.push(line)));
    this.rl.on('close', () => {
      this.ended = true;
      this.answer(null);
    });
    // Ctrl+C in a terminal reaches readline (raw mode), not the process.
    this.rl.on('SIGINT', () => this.interruptHandler?.());
  }

  /** Called on Ctrl+C typed in the terminal. */
  onInterrupt(handler: () => void): void {
    this.interruptHandler = handler;
  }

  /** Shows `prompt` and resolves with the next line, or null at the end of the input. */
  ask(prompt: string): Promise<string | null> {
    const queued = this.lines.shift();
    if (queued !== undefined || this.ended) {
      this.output.write(`${prompt}${queued ?? ''}\n`);
      return Promise.resolve(queued ?? null);
    }
    // A terminal shows the prompt and echoes what is typed; on a pipe both are written here.
    if (this.terminal) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    } else this.output.write(prompt);
    return new Promise((resolve) => {
      this.waiting = (line) => {
        if (!this.terminal) this.output.write(`${line ?? ''}\n`);
        resolve(line);
      };
    });
  }

  private answer(line: string | null): void {
    const resolve = this.waiting;
    this.waiting = undefined;
    resolve?.(line);
  }

  close(): void {
    this.rl.close();
  }
}

/** A service-flow session's `--operator`, `--service-code`, `--mobile` and `--channel`, checked. */
export function sessionOptions(
  values: Partial<Record<'operator' | 'service-code' | 'mobile' | 'channel', string>>,
  channelOf = '',
): { mobile?: string; channel?: ServiceAppChannel } {
  for (const name of ['operator', 'service-code'] as const)
    if (values[name]?.trim() === '') throw new CliUsageError(`--${name} must not be empty`);
  const mobile = values.mobile === undefined ? undefined : tryNormalizeMsisdn(values.mobile);
  if (mobile?.ok === false)
    throw new CliUsageError(
      `--mobile must be a phone number (233241234567 or 0241234567), got "${values.mobile}"`,
    );
  const channel = values.channel?.trim().toLowerCase();
  if (channel !== undefined && channel !== 'ussd' && channel !== 'app')
    throw new CliUsageError(`--channel must be ussd or app${channelOf}, got "${values.channel}"`);
  return { mobile: mobile?.msisdn, channel };
}

/**
 * Records a session's payment in a running sandbox (its status check then confirms the order).
 * Unreachable: HubtelNetworkError (start it); refused: HubtelApiError (fix the input).
 */
export async function markServicePaidInSandbox(
  sandboxUrl: string,
  sessionId: string,
  payment: RecordServicePaymentOptions,
  timeoutMs: number,
): Promise<void> {
  const path = `/_sandbox/sessions/${encodeURIComponent(sessionId)}/pay`;
  const answer = await callSandbox(sandboxUrl, path, timeoutMs, payment);
  if (!answer.ok)
    throw sandboxRefused(`did not record the payment of session ${sessionId}`, sandboxUrl, answer);
}

export interface SandboxAnswer {
  status: number;
  ok: boolean;
  /** The answer's JSON, or its text when it is not JSON (a proxy's page: its text is the reason). */
  body: unknown;
}

/** A GET (or, with a body, a JSON POST) to a running sandbox's admin API; unreachable: HubtelNetworkError. */
export async function callSandbox(
  sandboxUrl: string,
  path: string,
  timeoutMs: number,
  body?: unknown,
): Promise<SandboxAnswer> {
  const [method, payload] = body === undefined ? ['GET', ''] : ['POST', JSON.stringify(body)];
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  let answer: { status: number; text: string };
  try {
    answer = await request(method, `${sandboxUrl}${path}`, payload, headers, timeoutMs);
  } catch (err) {
    // Its message names the request and the cause (ECONNREFUSED…), which is what helps.
    throw new HubtelNetworkError(`Could not reach the sandbox at ${sandboxUrl}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const ok = answer.status >= 200 && answer.status < 300;
  return { status: answer.status, ok, body: jsonOrText(answer.text) };
}

/** The sandbox's refusal, with the reason it gave. */
export function sandboxRefused(what: string, sandboxUrl: string, answer: SandboxAnswer): HubtelApiError {
  const reason = reasonOf(answer.body);
  return new HubtelApiError(
    `The sandbox at ${sandboxUrl} ${what} (HTTP ${answer.status})${reason ? `: ${reason}` : ''}`,
    { httpStatus: answer.status, body: answer.body },
  );
}
