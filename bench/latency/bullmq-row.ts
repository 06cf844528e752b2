/**
 * Only the `2 replicas` rows of the latency section (issue 23), for working on them without the
 * whole bench: `node --import ./bench/loader/register.mjs bench/latency/bullmq-row.ts
 * [--rates=100,300,500] [--suite-only | --bare-only] [--quick | --smoke]` (BENCH_REPLICA_PROFILE=DIR
 * writes a CPU profile of each replica there). At each rate, the suite's
 * two replicas (Redis store + BullMQ runner, its defaults) and the bare BullMQ baseline's (a
 * controller adding one BullMQ job per request, a Worker), one after the other (which goes first
 * alternates by rate, as in the bench); one line per run with the figures of the RESULTS.md row, then
 * the ratio the goal judges (suite p99 ≤ 2x bare, medians of the three thirds). Writes nothing.
 * Same load and measurement as `npm run bench -- --only=latency`: 5 s per run at full settings,
 * 1 s with `--quick` or `--smoke` (a check that it works, not a figure to quote).
 */
import { parseArgs } from '../lib/config.js';
import { median, percentile } from '../lib/stats.js';
import { measureBullmqReplicas, type ReplicaLatency } from './bullmq-replicas.js';

const GOAL_VS_BARE = 2;
const own = ['--suite-only', '--bare-only'];
const args = process.argv.slice(2);
const config = parseArgs(
  args.filter((arg) => !own.includes(arg)),
  '/dev/null',
);
const kinds: Array<'suite' | 'bare'> = args.includes('--suite-only')
  ? ['suite']
  : args.includes('--bare-only')
    ? ['bare']
    : ['suite', 'bare'];
const f = (n: number) => n.toFixed(2);
for (const [index, rate] of config.latency.rates.entries()) {
  const results: Partial<Record<'suite' | 'bare', ReplicaLatency>> = {};
  for (const kind of index % 2 === 0 ? kinds : [...kinds].reverse()) {
    const result = await measureBullmqReplicas({ ...config, latency: { ...config.latency, rate } }, {}, kind);
    results[kind] = result;
    const requests = result.http.reduce((sum, run) => sum + run.requests, 0);
    const elapsed = Math.max(...result.http.map((run) => run.elapsedSec));
    const http = Float64Array.from(result.http.flatMap((run) => [...run.latenciesMs])).sort();
    console.log(
      `${kind}: ${rate} req/s offered, ${(requests / elapsed).toFixed(0)} sent: ${result.count} handled, lost ${result.lost}; ` +
        `p50 ${f(result.p50)} p90 ${f(result.p90)} p99 ${f(result.p99)} max ${f(result.max)} ms; ` +
        `p99 per third ${result.windowP99.map(f).join(' / ')} (median ${f(median(result.windowP99))}); ` +
        `HTTP p50 ${f(percentile(http, 50))} p99 ${f(percentile(http, 99))} ms; ` +
        `CPU ${result.cpuUsPerRequest.toFixed(0)} µs/req (Redis ${result.redisCpuUsPerRequest.toFixed(0)})`,
    );
  }
  const { suite, bare } = results;
  if (suite && bare && suite.count > 0 && bare.count > 0) {
    const ratio = median(suite.windowP99) / median(bare.windowP99);
    console.log(
      `${rate} req/s: suite p99 / bare p99 = ${ratio.toFixed(2)}x (goal ≤ ${GOAL_VS_BARE}x: ` +
        `${ratio <= GOAL_VS_BARE && suite.lost + bare.lost === 0 ? 'met' : 'not met'}); ` +
        `CPU per request ${(suite.cpuUsPerRequest / bare.cpuUsPerRequest).toFixed(2)}x`,
    );
  }
}
