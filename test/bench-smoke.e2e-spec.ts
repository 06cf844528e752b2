import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { tsNodeArgs } from '../bench/loader/entry.mjs';
import { redisBinary } from './support/redis-server.js';

/**
 * The benchmark harness starts, drives a server child for half a second and writes its table.
 * No timing is asserted (benchmarks never gate tests); only that real rows with numbers appear.
 */
const repo = path.resolve(import.meta.dirname, '..');
/** Runs still going (a test that timed out): stopped after the file, not left to load the machine. */
const running = new Set<ChildProcess>();

function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...tsNodeArgs('bench/run.ts'), ...args], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, output });
    });
  });
}

/** Every Markdown table row of the file, as trimmed cells (the file is formatted by Prettier). */
function tableRows(markdown: string): string[][] {
  return markdown
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s:|-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    );
}

/** The row whose first cells are `prefix` (its remaining cells follow). */
function rowStarting(markdown: string, ...prefix: (string | RegExp)[]): string[] {
  const row = tableRows(markdown).find((cells) =>
    prefix.every((p, i) => (typeof p === 'string' ? cells[i] === p : p.test(cells[i] ?? ''))),
  );
  if (!row) throw new Error(`no table row starts with ${prefix.join(' | ')}`);
  return row;
}

const NUMBER = /^-?[\d,]+(\.\d+)?$/;
const THIRDS = /^[\d.]+ \/ [\d.]+ \/ [\d.]+$/;

describe('bench harness (smoke)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'hubtel-bench-'));
  });
  afterAll(async () => {
    for (const child of running) child.kill('SIGKILL');
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
    // The modules' start-up configuration warnings the bench's setup chooses on purpose stay out.
    expect(output).not.toMatch(/\bWARN\b/);
    const markdown = await readFile(out, 'utf8');
    expect(markdown).toContain('## Machine');
    expect(markdown).toContain(`Node ${process.version}`);
    // A row per server: adapter, name, then req/s, p50, p99 and CPU/req as numbers.
    for (const [adapter, label] of [
      ['any', '(a) bare node:http + JSON.parse'],
      ['express', '(b) Nest controller, no validation'],
      ['express', '(d) nestjs-hubtel endpoint'],
    ]) {
      expect(rowStarting(markdown, adapter!, label!).slice(2, 6)).toEqual([
        expect.stringMatching(NUMBER),
        expect.stringMatching(NUMBER),
        expect.stringMatching(NUMBER),
        expect.stringMatching(NUMBER),
      ]);
    }
    // The module's ratio against (b) is computed, and its goal line judged (met or not).
    expect(rowStarting(markdown, 'express', '(d) nestjs-hubtel endpoint')[6]).toMatch(
      /^[\d.]+x \(CPU [\d.]+x\)$/,
    );
    const goal = rowStarting(
      markdown,
      'Inbound fulfillment request, express',
      '≥ 0.85x req/s of (b) plain Nest',
    );
    expect(goal[2]).toMatch(/^[\d.]+x by req\/s; [\d.]+x by CPU per request$/);
    expect(goal[3]).toMatch(/^(✅ met|❌ not met)$/);
    // The retired goal (issue 23) is gone; the ratio to (c) stays a table column.
    expect(markdown).not.toMatch(/≥ 1\.5x req\/s of \(c\)/);
  }, 120_000);

  /**
   * One run of every section on fastify, read by the two tests below: the inbound section with
   * only the Redis server (store + BullMQ runner) on the checkout callback, and the others whole.
   * The latency section's two-replica rows at one rate: each rate runs the same code (a fresh
   * redis-server and two replicas per side); the default rates are bench/lib/config.spec.ts's.
   */
  let sectionsRun: Promise<{ code: number | null; output: string; markdown: string }> | undefined;
  const runSections = () =>
    (sectionsRun ??= (async () => {
      const out = path.join(dir, 'RESULTS-other.md');
      const run = await runBench([
        '--smoke',
        '--only=inbound,sms,sessions,latency',
        '--shapes=checkout-callback',
        '--adapters=fastify',
        '--variants=redis',
        '--rates=100',
        `--out=${out}`,
      ]);
      return { ...run, markdown: await readFile(out, 'utf8').catch(() => '') };
    })());

  it('runs the SMS, session (in memory and on Redis) and latency sections on a tiny scale and judges every goal', async () => {
    const { code, output, markdown } = await runSections();
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });
    expect(output).not.toMatch(/\bWARN\b/);
    expect(markdown).not.toMatch(/section failed/);
    // No row of the retired `firstRunHere` option (issue 23).
    expect(markdown).not.toMatch(/firstRunHere/);
    // SMS: both senders ran (the fake API checks every recipient arrived once) and were compared.
    expect(rowStarting(markdown, 'hand-written loop over undici.request', NUMBER)[2]).toMatch(NUMBER);
    expect(rowStarting(markdown, 'nestjs-hubtel SmsService.sendBatch', NUMBER)[6]).toMatch(/^[\d.]+x$/);
    // Goals (issue 23): the 0.9x throughput goal retired, SMS memory kept (1,000,000 recipients:
    // full mode only); memory per session judged.
    expect(markdown).not.toMatch(/the undici loop's throughput/);
    expect(rowStarting(markdown, 'SMS memory', /^peak memory growth < 100 MB/)[3]).toBe('— not measured');
    expect(rowStarting(markdown, 'Memory per session', /live sessions < 100 MB$/)[3]).toMatch(
      /^(✅ met|❌ not met)$/,
    );
    // Sessions: memory per live session measured; step latency with every answer as expected.
    expect(rowStarting(markdown, '1,000', NUMBER, NUMBER)).toHaveLength(5);
    const steps = rowStarting(markdown, 'fastify', NUMBER, NUMBER, NUMBER, NUMBER, NUMBER, THIRDS);
    expect(steps[9]).toBe('all answers as expected');
    // The same section measures Redis memory per live session: INFO used_memory growth over the
    // sessions, one key each.
    const judged = redisBinary.available ? /^(✅ met|❌ not met)$/ : /^— not measured$/;
    expect(rowStarting(markdown, 'Service-flow sessions on Redis')[3]).toMatch(judged);
    if (redisBinary.available)
      expect(rowStarting(markdown, '1,000', NUMBER, NUMBER, /^\d+\.\d\d$/)).toHaveLength(6);
    // Latency: every callback reached its handler (nothing in the note column).
    for (const callback of ['checkout callback', 'fulfillment request']) {
      const row = rowStarting(markdown, 'fastify', callback);
      // req/s, handled, p50, p90, p99; p99 per third; max; HTTP p50 / p99; note.
      expect(row.slice(2, 7)).toEqual(Array(5).fill(expect.stringMatching(NUMBER)));
      expect(row[7]).toMatch(THIRDS);
      expect(row[8]).toMatch(NUMBER);
      expect(row[10]).toBe('');
    }
    expect(rowStarting(markdown, /^Callback → handler, checkout callback, fastify$/)[3]).toMatch(
      /^(✅ met|❌ not met)$/,
    );
    // Two replicas at the rate, the suite's and the bare BullMQ baseline's, judged as ratios (p99
    // and CPU per request: the median of the rounds, with each round's and the spread);
    // awaited Redis round trips before the 2xx per endpoint with the BullMQ runner.
    for (const rate of [100]) {
      for (const area of ['Callback → handler', 'CPU per request'])
        expect(rowStarting(markdown, `${area}, 2 replicas on BullMQ, ${rate} req/s`)[3]).toMatch(judged);
      if (!redisBinary.available) continue;
      expect(rowStarting(markdown, `Callback → handler, 2 replicas on BullMQ, ${rate} req/s`)[2]).toMatch(
        /^[\d.]+x \(rounds [\d.]+; spread [\d.]+\): suite p99 [\d.]+ ms, bare [\d.]+ ms/,
      );
      expect(rowStarting(markdown, `CPU per request, 2 replicas on BullMQ, ${rate} req/s`)[2]).toMatch(
        /^[\d.]+x \(rounds [\d.]+; spread [\d.]+\): suite [\d.]+ µs, bare [\d.]+ µs per request/,
      );
      for (const label of [
        'nestjs-hubtel, Redis store + BullMQ runner (defaults)',
        'bare: controller adds 1 BullMQ job, Worker',
      ]) {
        // req/s, server, sent req/s, handled, p50, p99 per round, p99, CPU per round, CPU, Redis CPU.
        const row = rowStarting(markdown, `${rate}`, label);
        expect(row.slice(2, 10)).toEqual(Array(8).fill(expect.stringMatching(NUMBER)));
      }
    }
    // Round trips (issue 23): the checkout callback in the production default (`posSalesId` set,
    // status check on: judged) and in trust mode (no `posSalesId`: for information), counted in
    // the same run; the other endpoints judged.
    const defaultCallback = 'checkout callback, `posSalesId` set (status check on, the default)';
    const trustCallback = 'checkout callback, trust mode (no `posSalesId`)';
    const tripGoals = {
      [defaultCallback]:
        'Redis round trips, checkout callback with `posSalesId` (status check on, the default), Redis store + BullMQ',
      [trustCallback]:
        'Redis round trips, checkout callback in trust mode (no `posSalesId`), Redis store + BullMQ',
      'service-flow step': 'Redis round trips, service-flow step, Redis store + BullMQ',
      'fulfillment request': 'Redis round trips, fulfillment request, Redis store + BullMQ',
    };
    for (const [endpoint, area] of Object.entries(tripGoals)) {
      const goal = rowStarting(markdown, area);
      if (endpoint === trustCallback) {
        expect(goal[1]).toMatch(/^for information/);
        expect(goal[3]).toBe(redisBinary.available ? 'ℹ️ information, not judged' : '— not measured');
      } else {
        expect(goal[1]).toBe('≤ 3 awaited before the 2xx (BullMQ add included)');
        expect(goal[3]).toMatch(judged);
      }
      if (!redisBinary.available) continue;
      const trips = rowStarting(markdown, endpoint, NUMBER, /^\d+(–\d+)?$/);
      expect(trips[4]).toMatch(/^all 2xx($|;)/);
    }
    // The old single checkout row is gone: both configurations are named.
    expect(markdown).not.toContain('Redis round trips, checkout callback, Redis store + BullMQ');
    if (redisBinary.available) {
      // A callback's awaited trips are its record's set-if-absent and its BullMQ job's add (both
      // counted: the store's client and the runner's queue clients are recorded), besides reads;
      // each is a round trip of its own (not sent while another was in flight, not pipelined).
      for (const [area, record] of [
        [tripGoals[defaultCallback], 'SET hubtel:checkout:job:hubtel.checkout.confirm:'],
        [tripGoals[trustCallback], 'SET hubtel:checkout:job:hubtel.checkout.paid:'],
        [tripGoals['fulfillment request'], 'SET hubtel:service-app:job:'],
      ] as const) {
        const measured = rowStarting(markdown, area)[2]!;
        const commands = measured.replace(/^\d+: /, '').split(', ');
        const awaitedAlone = (pattern: RegExp) =>
          commands.filter(
            (c) => pattern.test(c) && !/\((sent while another was in flight|pipelined)\)$/.test(c),
          );
        expect(awaitedAlone(new RegExp(`^\`${record}`))).toHaveLength(1);
        expect(awaitedAlone(/^`EVALSHA addStandardJob\S* \S*:bull:\S+:wait`$/)).toHaveLength(1);
        expect(Number(/^(\d+):/.exec(measured)?.[1])).toBeGreaterThanOrEqual(2);
      }
      // With `posSalesId` the status check is not awaited by the answer: it runs in the
      // confirmation job, against the bench's stub on 127.0.0.1, which confirmed every callback
      // (3 in smoke mode), and each paid event reached the host's handler.
      expect(rowStarting(markdown, defaultCallback, NUMBER)[4]).toBe(
        'all 2xx; 3 status checks answered "Paid" by the stub, 3 handler runs',
      );
      // Trust mode also marks the invoice paid before the 2xx, and says why that costs one more.
      expect(rowStarting(markdown, tripGoals[trustCallback])[2]).toContain(
        '`EVALSHA hubtelStoreCompareAndSet hubtel:checkout:invoice:<id>`',
      );
      expect(rowStarting(markdown, tripGoals[trustCallback])[4]).toContain(
        'the invoice is marked paid after the job is queued, so a crash in between can never leave a paid invoice whose event was never queued',
      );
    }
  }, 240_000);

  redisBinary.it(
    'runs the Redis server (store + BullMQ runner) beside the others: req/s, CPU and Redis CPU, round trips per callback',
    async () => {
      const { code, output, markdown } = await runSections();
      expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });
      expect(output).not.toMatch(/\bWARN\b/);
      expect(markdown).not.toMatch(/section failed/);
      // The Redis server's row (Redis store + BullMQ runner, the only Redis deployment): req/s,
      // p50, p99, its own CPU/req and Redis's CPU/req.
      expect(
        rowStarting(markdown, 'fastify', '(d) nestjs-hubtel endpoint, Redis store + BullMQ').slice(2, 7),
      ).toEqual(Array(5).fill(expect.stringMatching(NUMBER)));
      // Every answered callback ran the host's handler on the BullMQ worker (drained before counting).
      expect(markdown).toMatch(
        /fastify \(Redis \+ BullMQ\) checkout callback: [\d,]+ handler runs for [\d,]+ answers[;.]/,
      );
      // Round trips of a paid callback, counted one request at a time, every answer a 2xx: awaited,
      // the request's own, the job's run's before the answer, after the answer.
      const trips = rowStarting(markdown, 'checkout callback', 'fastify', NUMBER);
      expect(trips.slice(3, 7)).toEqual(Array(4).fill(expect.stringMatching(/^\d+(–\d+)?$/)));
      expect(trips[7]).toBe('all 2xx');
      // At least the record's set-if-absent and the BullMQ add, sent in sequence, are awaited.
      expect(Number(/^\d+/.exec(trips[3]!)?.[0])).toBeGreaterThanOrEqual(2);
      // The job's run (the worker's record read, handler, outcome) is told apart from the request.
      expect(markdown).toMatch(/- checkout callback, fastify: .*\(the job's run\)/);
      // The round-trip goal is judged once, in the latency section; no separate Redis-without-BullMQ goal.
      expect(markdown).not.toMatch(/Checkout callback on Redis, fastify/);
    },
    180_000,
  );

  it('rejects an unknown option with a clear message and a non-zero exit', async () => {
    const { code, output } = await runBench(['--no-such-flag']);
    expect(code).not.toBe(0);
    expect(output).toContain('unknown argument "--no-such-flag"');
  });
});
