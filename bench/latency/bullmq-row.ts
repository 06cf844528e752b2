/**
 * Only the `2 replicas, BullMQ` rows of the latency section (issue 15), for working on them
 * without the whole bench: `node --import ./bench/loader/register.mjs bench/latency/bullmq-row.ts
 * [--rates=500,100] [--compare] [--duration=S]`. Prints one line per rate (the figures of the
 * RESULTS.md row); writes nothing. Same load and measurement as `npm run bench -- --only=latency`.
 * Without options, the runner's default (every run a BullMQ job). `--compare`: each rate also with
 * `firstRunHere: true` (first runs on the receiving replica), alternating.
 */
import { parseArgs } from '../lib/config.js';
import { percentile } from '../lib/stats.js';
import { measureBullmqReplicas } from './bullmq-replicas.js';

const own = process.argv.slice(2).filter((arg) => arg.startsWith('--rates=') || arg === '--compare');
const ratesArg = own.find((arg) => arg.startsWith('--rates='));
const rates = (ratesArg?.slice('--rates='.length) ?? '500,100').split(',').map(Number);
const settings: Array<[string, Record<string, string>]> = own.includes('--compare')
  ? [
      ['default, every run a BullMQ job', {}],
      ['firstRunHere: true', { FIRST_RUN_HERE: '1' }],
    ]
  : [['', {}]];
const config = parseArgs(
  process.argv.slice(2).filter((arg) => !own.includes(arg)),
  '/dev/null',
);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const rate of rates)
  for (const [name, env] of settings) {
    const result = await measureBullmqReplicas({ ...config, latency: { ...config.latency, rate } }, env);
    const requests = result.http.reduce((sum, run) => sum + run.requests, 0);
    const elapsed = Math.max(...result.http.map((run) => run.elapsedSec));
    const f = (n: number) => n.toFixed(2);
    const http = Float64Array.from(result.http.flatMap((run) => [...run.latenciesMs])).sort();
    console.log(
      `${name ? `${name}: ` : ''}${rate} req/s offered, ${(requests / elapsed).toFixed(0)} sent: ${result.count} handled, lost ${result.lost}; ` +
        `p50 ${f(result.p50)} p90 ${f(result.p90)} p99 ${f(result.p99)} max ${f(result.max)} ms; ` +
        `p99 per third ${result.windowP99.map(f).join(' / ')} (median ${f(median(result.windowP99))}); ` +
        `HTTP p50 ${f(percentile(http, 50))} p99 ${f(percentile(http, 99))} ms`,
    );
  }
