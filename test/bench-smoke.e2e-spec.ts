import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * The benchmark harness starts, drives a server child for about a second and writes its table.
 * No timing is asserted (benchmarks never gate tests); only that real rows with numbers appear.
 */
const repo = path.resolve(import.meta.dirname, '..');

function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', './bench/loader/register.mjs', 'bench/run.ts', ...args],
      {
        cwd: repo,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('bench harness (smoke)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hubtel-bench-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs one inbound scenario in child processes and writes a Markdown table row per server', async () => {
    const out = path.join(dir, 'RESULTS.md');
    const { code, output } = await runBench([
      '--smoke',
      '--only=inbound',
      '--shapes=fulfillment',
      '--adapters=express',
      '--variants=bare,plain,module',
      `--out=${out}`,
    ]);
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });
    const markdown = await readFile(out, 'utf8');
    expect(markdown).toContain('## Machine');
    expect(markdown).toContain(`Node ${process.version}`);
    // A row per server: name, then req/s, p50, p99 and CPU/req as numbers.
    const row = (label: string) =>
      new RegExp(
        `^\\| [a-z]+ \\| ${label.replace(/[()]/g, '\\$&')}[^|]* \\| [\\d,]+ \\| [\\d,]+ \\| [\\d,]+ \\| [\\d,]+ \\|`,
        'm',
      );
    expect(markdown).toMatch(row('(a) bare node:http'));
    expect(markdown).toMatch(row('(b) Nest controller, no validation'));
    expect(markdown).toMatch(row('(d) nestjs-hubtel endpoint'));
    // The module's goal lines are judged (met or not), not left unmeasured.
    expect(markdown).toMatch(
      /fulfillment request, express \| ≥ 0\.85x req\/s of \(b\) plain Nest \| [\d.]+x by req\/s/,
    );
  }, 120_000);

  it('runs the SMS, session and latency sections on a tiny scale and judges every goal', async () => {
    const out = path.join(dir, 'RESULTS-other.md');
    const { code, output } = await runBench([
      '--smoke',
      '--only=sms,sessions,latency',
      '--adapters=fastify',
      `--out=${out}`,
    ]);
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });
    const markdown = await readFile(out, 'utf8');
    // SMS: both senders delivered every recipient (the fake API checks) and have numbers.
    expect(markdown).toMatch(/^\| hand-written loop over undici\.request \| [\d,]+ \| [\d,]+ \|/m);
    expect(markdown).toMatch(/^\| nestjs-hubtel SmsService\.sendBatch \| [\d,]+ \| [\d,]+ \|/m);
    expect(markdown).toMatch(/SMS fan-out \| ≥ 0\.9x the undici loop's throughput[^|]*\| [\d.]+x \|/);
    // Sessions: memory per session measured, step latency measured with every answer as expected.
    expect(markdown).toMatch(/^\| [\d,]+ \| [\d.]+ \| [\d,]+ \| [\d.]+ \|/m);
    expect(markdown).toMatch(
      /^\| fastify \| [\d,]+ \| [\d,]+ \| [\d,]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| [\d.]+ \| [\d,]+ \| all answers as expected \|/m,
    );
    // Latency: every callback reached its handler.
    expect(markdown).toMatch(
      /^\| fastify \| checkout callback \| [\d,]+ \| [\d,]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \/ [\d.]+ \/ [\d.]+ \| [\d.]+ \| [\d.]+ \/ [\d.]+ \| {2}\|/m,
    );
    expect(markdown).toMatch(/^\| fastify \| fulfillment request \| [\d,]+ \| [\d,]+ \| [\d.]+ \|/m);
    expect(markdown).not.toMatch(/section failed/);
  }, 180_000);

  it('rejects an unknown option with a clear message and a non-zero exit', async () => {
    const { code, output } = await runBench(['--no-such-flag']);
    expect(code).not.toBe(0);
    expect(output).toContain('unknown argument "--no-such-flag"');
  });
});
