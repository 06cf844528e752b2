/**
 * Memory per live service-flow session in the in-memory store (the default, given explicitly), in its own process (--expose-gc):
 * N sessions are started and advanced one step through ServiceFlowService (the code behind
 * `POST /api/service-flow`), so each holds what a session mid-flow holds (collected phone number,
 * the select prompt awaiting an answer, history); then the heap growth is divided by N.
 *
 * `session-memory.ts <redis url>`: the same app on Redis as the docs configure it, the only Redis
 * deployment (issue 23): `HubtelRedisModule.forRoot` (no `store` option) and
 * `HubtelBullmqModule.forRoot` on the same Redis (its queues' keys exist before `measure`; a session
 * step adds no job); sessions started a few hundred at a time; the runner reads Redis's INFO memory
 * around `measure`.
 */
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ServiceAppModule, ServiceFlowService } from 'nestjs-hubtel/service-app';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { MemoryStore } from 'nestjs-hubtel';
import { serveChild, signalFailure, signalReady } from '../lib/ipc.js';
import { BenchLogger } from '../lib/bench-logger.js';
import { BenchHandlers, BundleFlow } from '../inbound/host-app.js';
import { LatencyProbe } from '../inbound/latency-probe.js';

const redisUrl = process.argv[2];
const redisImports: DynamicModule[] = redisUrl
  ? [HubtelRedisModule.forRoot({ url: redisUrl }), HubtelBullmqModule.forRoot({ url: redisUrl })]
  : [];

@Module({
  imports: [
    EventEmitterModule.forRoot(),
    ...redisImports,
    // Without Redis, the in-memory store given explicitly: the store the module would default to,
    // chosen knowingly for one process (the default, unnamed, warns under NODE_ENV=production).
    ServiceAppModule.forRoot(redisUrl ? {} : { store: new MemoryStore() }),
  ],
  providers: [BundleFlow, BenchHandlers, LatencyProbe],
})
class SessionMemoryApp {}

/** Sessions started at once on Redis (one at a time would make 100,000 take minutes of round trips). */
const REDIS_BATCH = 250;

const gc = (globalThis as { gc?: () => void }).gc;

function settle(): NodeJS.MemoryUsage {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage();
}

async function main(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc');
  const app = await NestFactory.createApplicationContext(SessionMemoryApp, { logger: new BenchLogger() });
  const flows = app.get(ServiceFlowService);
  // Warm the code paths first so compiled code is not counted as session memory.
  for (let i = 0; i < 2_000; i++) await start(flows, `warm-${i}`);

  serveChild(
    {
      measure: async (message) => {
        const count = Number(message.count);
        const before = settle();
        if (redisUrl) {
          for (let from = 0; from < count; from += REDIS_BATCH) {
            const batch: Promise<void>[] = [];
            for (let i = from; i < Math.min(count, from + REDIS_BATCH); i++)
              batch.push(start(flows, `live-${i}`));
            await Promise.all(batch);
          }
        } else {
          for (let i = 0; i < count; i++) await start(flows, `live-${i}`);
        }
        const after = settle();
        // Every session must be live and waiting at the bundle choice.
        let live = 0;
        for (const i of [0, count >> 1, count - 1]) {
          const session = await flows.getSession(`live-${i}`);
          if (session?.screen.step === 'bundle' && session.data.destination === '233241234567') live++;
        }
        if (live !== 3) throw new Error(`sessions are not live as expected (${live}/3 checked)`);
        return {
          heapBytes: after.heapUsed - before.heapUsed,
          rssBytes: after.rss - before.rss,
          externalBytes: after.external + after.arrayBuffers - (before.external + before.arrayBuffers),
        };
      },
    },
    () => app.close(),
  );
  signalReady();
}

async function start(flows: ServiceFlowService, sessionId: string): Promise<void> {
  const base = {
    ServiceCode: '11684',
    Operator: 'Hubtel-Android', // the app channel, as always measured (mtn is USSD since issue 22)
    ClientState: '',
    Mobile: '233242825109',
    SessionId: sessionId,
  };
  const first = await flows.handle({ ...base, Sequence: '1', Type: 'initiation', Message: '' });
  const second = await flows.handle({ ...base, Type: 'Response', Message: '0241234567' });
  if (first.DataType !== 'input' || second.DataType !== 'select') {
    throw new Error(`unexpected flow answers: ${first.DataType}, ${second.DataType} (${second.Message})`);
  }
}

main().catch(signalFailure);
