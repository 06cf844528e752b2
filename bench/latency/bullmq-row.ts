/**
 * Only the `2 replicas` rows of the latency section (issues 23 and 34), for working on them
 * without the whole bench: `node --import ./bench/loader/register.mjs bench/latency/bullmq-row.ts
 * [--rates=100,300,500] [--replica-rounds=N] [--replica-warmup=S] [--quick | --smoke]`
 * (BENCH_REPLICA_PROFILE=DIR writes a CPU profile of each replica there). The same runs, rounds
 * and verdicts as `npm run bench -- --only=latency` (one round unless `--replica-rounds`, 5 s per
 * run at full settings, 1 s with `--quick` or `--smoke`: a check that it works, not a figure to
 * quote). Prints each run, the goals and the table; writes nothing.
 */
import { parseArgs } from '../lib/config.js';
import type { Goal } from '../lib/report.js';
import { measureReplicas } from './latency.bench.js';

const args = process.argv.slice(2);
const config = parseArgs(args, '/dev/null');
if (!args.some((arg) => arg.startsWith('--replica-rounds'))) config.latency.replicaRounds = 1;
const goals: Goal[] = [];
const table = await measureReplicas(config, (line) => console.log(line), goals);
for (const goal of goals)
  console.log(
    `${goal.area}: ${goal.measured} — ${goal.met === null ? 'not measured' : goal.met ? 'met' : 'not met'}`,
  );
console.log(`\n${table}`);
