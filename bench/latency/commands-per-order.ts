/**
 * Redis commands per fulfillment order, the suite's replica (bullmq-replica.ts) beside the
 * hand-written baseline (bare-replica.ts), counted so that the machine's load does not change them:
 * one replica of each, a closed loop of 10 senders, every order's callback awaited before Redis's
 * `INFO commandstats` is read, the idle replica's commands over as long subtracted. (The row's
 * `BENCH_COMMANDSTATS=1` counts a timed window: on a loaded machine jobs of the warm-up run in it,
 * and the window's own are still queued.) Commands inside a Lua script count as Redis runs them;
 * `evalsha` counts the scripts; "sent by a client" counts the others (from MONITOR: one write
 * each, as neither side pipelines). Also prints each replica's CPU per order over the loop (closed
 * loop, one replica: a share to compare, not the row's figure).
 *
 * `node --import ./bench/loader/register.mjs bench/latency/commands-per-order.ts [--orders=N] [--trace]`
 * (`--trace`: every command of one order, from Redis's MONITOR, as the replica sends it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Child } from '../lib/ipc.js';
import { BenchRedis } from '../lib/redis-server.js';
import { SHAPES } from '../lib/shapes.js';
import { startCallbackSink } from './bullmq-replicas.js';

const args = process.argv.slice(2);
const orders = Number(args.find((a) => a.startsWith('--orders='))?.slice(9) ?? 500);
const trace = args.includes('--trace');

async function count(kind: 'suite' | 'bare'): Promise<Map<string, number>> {
  const redis = await BenchRedis.start();
  const sink = await startCallbackSink();
  const replica = new Child(kind === 'bare' ? 'latency/bare-replica.ts' : 'latency/bullmq-replica.ts', [], {
    env: { REDIS_URL: redis.url, CALLBACK_URL: sink.url },
  });
  try {
    const port = Number((await replica.ready).port);
    const send = async (id: string) => {
      const answer = await fetch(`http://127.0.0.1:${port}${SHAPES.fulfillment.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(SHAPES.fulfillment.make(id)),
      });
      if (answer.status !== 200) throw new Error(`${kind}: order ${id} answered ${answer.status}`);
      await answer.text();
    };
    const run = async (prefix: string, n: number) => {
      const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
      await Promise.all(
        Array.from({ length: 10 }, async (_, w) => {
          for (let i = w; i < n; i += 10) await send(ids[i]!);
        }),
      );
      for (let waited = 0; ids.some((id) => !sink.calledBack.has(id)); waited += 20) {
        if (waited > 120_000) throw new Error(`${kind}: orders not called back after 120 s`);
        await sleep(20);
      }
      await sleep(300); // the last jobs' completion, after their callback
    };
    const stats = async () => {
      const calls = new Map<string, number>();
      for (const [name, line] of Object.entries(await redis.info('commandstats'))) {
        const command = name.replace('cmdstat_', '');
        if (command !== 'info' && !command.startsWith('config'))
          calls.set(command, Number(/calls=(\d+)/.exec(line)?.[1]));
      }
      return calls;
    };
    const cpu = async () => {
      const { usage } = (await replica.request('cpu')) as unknown as { usage: NodeJS.CpuUsage };
      return usage.user + usage.system;
    };
    await run('warm', 50);
    // Commands a client sent (MONITOR's source is its address; `lua` for those a script ran).
    let sent = 0;
    const lines: string[] = [];
    const monitor = await redis.client.duplicate().monitor();
    monitor.on('monitor', (_at: string, argv: string[], source: string) => {
      if (source !== 'lua') sent++;
      if (lines.length < 200)
        lines.push(
          `${source === 'lua' ? '    ' : ''}${argv.map((a) => (a.length > 48 ? `${a.slice(0, 48)}…` : a)).join(' ')}`,
        );
    });
    await sleep(100);
    if (trace) {
      await run('traced', 1);
      console.log(`${kind}: the commands of one order (a script's indented)\n  ${lines.join('\n  ')}`);
    }
    await redis.client.config('RESETSTAT');
    const [cpuBefore, started, sentBefore] = [await cpu(), Date.now(), sent];
    await run('order', orders);
    const busy = await stats();
    const [cpuUs, busySent] = [(await cpu()) - cpuBefore, sent - sentBefore];
    await redis.client.config('RESETSTAT');
    await sleep(Date.now() - started);
    const perOrder = new Map<string, number>();
    const idle = await stats();
    const idleSent = sent - sentBefore - busySent;
    monitor.disconnect();
    for (const [command, calls] of busy) perOrder.set(command, (calls - (idle.get(command) ?? 0)) / orders);
    const total = [...perOrder.values()].reduce((sum, n) => sum + n, 0);
    console.log(
      `${kind}: ${total.toFixed(1)} commands per order (${orders} orders), ${((busySent - idleSent) / orders).toFixed(2)} sent by a client (the rest by scripts), CPU ${Math.round(cpuUs / orders)} µs per order`,
    );
    return perOrder;
  } finally {
    await replica.stop().catch(() => undefined);
    await new Promise<void>((resolve) => sink.server.close(() => resolve()));
    await redis.stop();
  }
}

const suite = await count('suite');
const bare = await count('bare');
console.log(
  `load: ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log('\n| command | suite | bare | suite − bare |\n| :--- | ---: | ---: | ---: |');
const names = [...new Set([...suite.keys(), ...bare.keys()])];
for (const name of names.sort((a, b) => (suite.get(b) ?? 0) - (suite.get(a) ?? 0))) {
  const [s, b] = [suite.get(name) ?? 0, bare.get(name) ?? 0];
  if (Math.abs(s) >= 0.005 || Math.abs(b) >= 0.005)
    console.log(`| ${name} | ${s.toFixed(2)} | ${b.toFixed(2)} | ${(s - b).toFixed(2)} |`);
}
