import { sessionLoop, type Sent } from '../lib/http-driver.js';
import type { BenchConfig } from '../lib/config.js';
import { Child } from '../lib/ipc.js';
import { marginAtMost, table, type Goal, type SectionResult } from '../lib/report.js';
import { MB, fmt, median, percentile } from '../lib/stats.js';
import { ADAPTERS, type AdapterName } from '../inbound/adapters.js';
import { Target } from '../inbound/target.js';
import { BenchRedis, redisServerBinary, REDIS_MISSING } from '../lib/redis-server.js';

const GOAL_MEMORY_MB = 100;
const GOAL_SESSIONS = 100_000;
const GOAL_P99_MS = 20;
/** Redis memory per live session (INFO memory used_memory), bytes. */
const GOAL_REDIS_BYTES = 1024;
/** Sessions the child starts at once on Redis (see sessions/session-memory.ts). */
const REDIS_BATCH_HINT = 250;

/** The app channel (the Hubtel app): the figures measured before issue 22. */
const APP = { ServiceCode: '11684', Operator: 'Hubtel-Android' };
/** A USSD phone on the long-menu flow. */
const USSD = { ServiceCode: 'paged', Operator: 'mtn' };

/** What a session's three steps send (the contract's use case) and what each must answer. */
const STEPS: ((sessionId: string) => Sent)[] = [
  step({ Sequence: '1', Type: 'initiation', Message: '' }, '"DataType":"input"'),
  step({ Type: 'Response', Message: '0241234567' }, '"DataType":"select"'),
  step({ Type: 'Response', Message: '1gb' }, '"Type":"AddToCart"'),
];

/**
 * The same session on a USSD phone (issue 22), on the 30-bundle flow: its menu is written into
 * `Message` and paged; the user goes to page 2 and types an option number shown there (`10`, bundle
 * 8: numbers skip the navigation keys 8 and 9), and the cart is a `Release`.
 */
const USSD_STEPS = [
  step({ Sequence: '1', Type: 'initiation', Message: '' }, '"DataType":"input"', USSD),
  step({ Type: 'Response', Message: '0241234567' }, '9. More', USSD),
  step({ Type: 'Response', Message: '9' }, '8. Back', USSD),
  step({ Type: 'Response', Message: '10' }, '"Type":"Release"', USSD),
];

function step(
  fields: Record<string, string>,
  expect: string,
  channel: { ServiceCode: string; Operator: string } = APP,
): (sessionId: string) => Sent {
  return (sessionId) => ({
    path: '/api/service-flow',
    body: JSON.stringify({ ...fields, ...who(sessionId, channel) }),
    check: (status, body) => status === 200 && body.includes(expect),
  });
}

function who(sessionId: string, channel: { ServiceCode: string; Operator: string }) {
  return { ...channel, ClientState: '', Mobile: '233242825109', SessionId: sessionId };
}

export async function runSessionsSection(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<SectionResult> {
  const { sessions } = config;
  const goals: Goal[] = [];
  const parts: string[] = [];

  // 1. Memory per live session in the default store.
  const memory = new Child('sessions/session-memory.ts', [], { nodeFlags: ['--expose-gc'] });
  let perSession = NaN;
  try {
    await memory.ready;
    const result = await memory.request('measure', { count: sessions.live });
    perSession = Number(result.heapBytes) / sessions.live;
    const totalMb = Number(result.heapBytes) / MB;
    log(
      `  ${fmt(sessions.live)} live sessions: heap +${fmt(totalMb, 1)} MB (${fmt(perSession)} bytes each), RSS +${fmt(Number(result.rssBytes) / MB, 1)} MB`,
    );
    parts.push(
      `${fmt(sessions.live)} sessions started and advanced one step (phone number collected, bundle choice awaited) through ` +
        `\`ServiceFlowService\` with the in-memory store (MemoryStore, the module's default, given explicitly as \`store\`), in a fresh process; heap measured after full GCs.\n\n` +
        table(
          [
            'live sessions',
            'heap growth MB',
            'bytes per session',
            `projected for ${fmt(GOAL_SESSIONS)} sessions MB`,
            'RSS growth MB',
          ],
          [
            [
              fmt(sessions.live),
              fmt(totalMb, 1),
              fmt(perSession),
              fmt((perSession * GOAL_SESSIONS) / MB, 1),
              fmt(Number(result.rssBytes) / MB, 1),
            ],
          ],
        ),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    log(`  session memory: failed: ${message}`);
    parts.push(`Session memory: not measured (${message}).`);
  } finally {
    await memory.stop();
  }
  const projected = (perSession * GOAL_SESSIONS) / MB;
  goals.push({
    area: 'Memory per session',
    goal: `${fmt(GOAL_SESSIONS)} live sessions < ${GOAL_MEMORY_MB} MB`,
    measured: Number.isFinite(projected)
      ? `${fmt(projected, 1)} MB (${fmt(perSession)} B/session${sessions.live === GOAL_SESSIONS ? '' : `, measured on ${fmt(sessions.live)}`})`
      : 'not measured',
    met: Number.isFinite(projected) ? projected < GOAL_MEMORY_MB : null,
    margin: marginAtMost(projected, GOAL_MEMORY_MB),
  });

  // 1b. The same on the Redis store: Redis's own memory per session.
  parts.push(await redisSessionMemory(sessions.live, goals, log));

  // 2. Step latency with many concurrent sessions, over HTTP.
  const rows: string[][] = [];
  for (const adapter of (config.inbound.adapters ?? ADAPTERS) as AdapterName[]) {
    const target = new Target('module', adapter);
    if (!(await target.start()) || !target.serves('service-flow')) {
      log(`  module/${adapter}: not available: ${target.failure ?? 'service-flow not served'}`);
      await target.stop();
      continue;
    }
    try {
      const origin = `http://127.0.0.1:${target.port!}`;
      // The app channel, then a USSD phone paging a long menu (issue 22), on the same server.
      for (const [channel, steps] of [
        ['app', STEPS],
        ['USSD, paged', USSD_STEPS],
      ] as const) {
        // Code warm-up with a few users, then the measured run, whose own warm-up opens every
        // user's connection before anything is recorded.
        await sessionLoop(origin, Math.min(100, sessions.concurrent), 50, sessions.warmupSec / 2, [...steps]);
        const before = (await target.child!.request('cpu')).usage as NodeJS.CpuUsage;
        const result = await sessionLoop(
          origin,
          sessions.concurrent,
          sessions.thinkMs,
          sessions.durationSec,
          [...steps],
          sessions.warmupSec,
        );
        const after = (await target.child!.request('cpu')).usage as NodeJS.CpuUsage;
        const count = result.requests;
        const cpu = (after.user - before.user + after.system - before.system) / Math.max(1, result.sent);
        const bad = result.wrong + result.errors;
        const p50 = percentile(result.latenciesMs, 50);
        const p99 = percentile(result.latenciesMs, 99);
        const max = result.latenciesMs[result.latenciesMs.length - 1] ?? NaN;
        const typical = median(result.windowP99Ms);
        const stepsPerSec = count / result.elapsedSec;
        log(
          `  ${adapter} (${channel}): ${fmt(count)} steps, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms${bad ? `, ${bad} wrong/failed: ${result.failures.join('; ')}` : ''}`,
        );
        rows.push([
          channel === 'app' ? adapter : `${adapter}, ${channel}`,
          fmt(sessions.concurrent),
          fmt(stepsPerSec),
          fmt(count),
          p50.toFixed(1),
          p99.toFixed(1),
          result.windowP99Ms.map((w) => w.toFixed(1)).join(' / '),
          max.toFixed(1),
          fmt(cpu),
          bad ? `${bad} wrong or failed answers` : 'all answers as expected',
        ]);
        goals.push({
          area: `Service-flow sessions, ${adapter}${channel === 'app' ? '' : ` (${channel})`}`,
          goal: `step p99 < ${GOAL_P99_MS} ms with ${fmt(sessions.concurrent)} concurrent sessions`,
          measured: `p99 ${typical.toFixed(1)} ms (median of 3 windows; whole run ${p99.toFixed(1)} ms) at ${fmt(stepsPerSec)} steps/s`,
          met: bad === 0 ? typical < GOAL_P99_MS : false,
          margin: marginAtMost(typical, GOAL_P99_MS) + (bad ? `; ${bad} wrong answers` : ''),
        });
      }
    } finally {
      await target.stop();
    }
  }
  parts.push(
    `Step latency: ${fmt(sessions.concurrent)} users at once from the runner (undici, one connection each), each going ` +
      `through whole sessions (initiation → phone number → bundle → AddToCart, a fresh SessionId each time; on the ` +
      `\`USSD, paged\` rows a USSD phone (\`Operator: mtn\`) on a 30-bundle menu: initiation → phone number → page 2 → ` +
      `an option number → the Release cart) against the ` +
      `module's \`POST /api/service-flow\`, with a think time between steps uniform in 0–${fmt(2 * sessions.thinkMs)} ms ` +
      `(mean ${fmt(sessions.thinkMs)} ms, far quicker than people type), for ${sessions.durationSec} s after ${sessions.warmupSec} s of warm-up ` +
      `with the same users (connections open); server CPU/step over all steps; ` +
      `latency as seen by the client. Every answer is checked (input, then select, then AddToCart). The goal is judged on ` +
      `the median of the p99s of the run's three thirds (a tail that is ours recurs in every third; one outside hiccup on ` +
      `this shared machine does not), and the whole run's p99 is shown beside it.\n\n` +
      table(
        [
          'adapter',
          'concurrent sessions',
          'steps/s',
          'steps',
          'p50 ms',
          'p99 ms',
          'p99 per third of the run, ms',
          'max ms',
          'server CPU µs/step',
          'check',
        ],
        rows,
        ['l'],
      ),
  );
  return { title: 'Service-flow sessions', markdown: parts.join('\n\n'), goals };
}

/**
 * Redis memory per live session: the session-memory child on the Redis store (its own private
 * redis-server), N sessions started and advanced one step; INFO memory used_memory before and
 * after, divided by N. Also what one session's keys hold (MEMORY USAGE, STRLEN), to say where the
 * bytes go.
 */
async function redisSessionMemory(
  count: number,
  goals: Goal[],
  log: (line: string) => void,
): Promise<string> {
  const area = 'Service-flow sessions on Redis';
  const goal = `${fmt(GOAL_SESSIONS)} live sessions < ${fmt(GOAL_REDIS_BYTES)} B of Redis memory each`;
  if (!redisServerBinary()) {
    log(`  ${REDIS_MISSING}`);
    goals.push({ area, goal, measured: `not measured: ${REDIS_MISSING}`, met: null, margin: 'not measured' });
    return `Redis memory per session: not measured: ${REDIS_MISSING}.`;
  }
  let redis: BenchRedis | undefined;
  let child: Child | undefined;
  try {
    redis = await BenchRedis.start();
    child = new Child('sessions/session-memory.ts', [redis.url], { nodeFlags: ['--expose-gc'] });
    await child.ready;
    const keysBefore = await redis.client.dbsize();
    const usedBefore = await redis.usedMemory();
    const started = Date.now();
    const result = await child.request('measure', { count });
    const seconds = (Date.now() - started) / 1000;
    const usedAfter = await redis.usedMemory();
    const keysAfter = await redis.client.dbsize();
    const memory = await redis.info('memory');
    const perSession = (usedAfter - usedBefore) / count;
    const keysPerSession = (keysAfter - keysBefore) / count;
    // One session's own keys (everything the app wrote that names it).
    const own = await redis.client.keys('*live-0');
    const sizes = await Promise.all(
      own.map(async (key) => ({
        key,
        usage: Number(await redis!.client.memory('USAGE', key)),
        value: await redis!.client.strlen(key),
      })),
    );
    const heapPerSession = Number(result.heapBytes) / count;
    log(
      `  Redis: ${fmt(count)} live sessions: used_memory +${fmt((usedAfter - usedBefore) / MB, 1)} MB (${fmt(perSession)} B each, ` +
        `${fmt(keysPerSession, 2)} keys each); Node heap ${fmt(heapPerSession)} B each; ${fmt(seconds, 1)} s`,
    );
    const met = perSession < GOAL_REDIS_BYTES;
    goals.push({
      area,
      goal,
      measured:
        `${fmt(perSession)} B/session (INFO used_memory +${fmt((usedAfter - usedBefore) / MB, 1)} MB` +
        `${count === GOAL_SESSIONS ? '' : `, measured on ${fmt(count)}`}); ${fmt(keysPerSession, 2)} keys/session`,
      met,
      margin: marginAtMost(perSession, GOAL_REDIS_BYTES),
    });
    return (
      `#### On the Redis store\n\n` +
      `The same ${fmt(count)} sessions on the Redis store (\`HubtelRedisModule.forRoot({ url })\`, no \`store\` option, and ` +
      `\`HubtelBullmqModule.forRoot({ url })\` on the same Redis, the only Redis deployment since issue 23; its queues' keys ` +
      `exist before the first session and a session step adds no job), ` +
      `started ${fmt(REDIS_BATCH_HINT)} at a time against a private redis-server ${redis.version} (\`--save '' --appendonly no ` +
      `--maxmemory-policy noeviction\`, ${memory.mem_allocator ?? 'unknown'} allocator): Redis's INFO memory \`used_memory\` ` +
      `before and after, divided by the sessions (it includes Redis's per-key overhead, the expiry entry of each key and the ` +
      `key space's hash table, which grows in powers of two). The app's own heap is measured as above.\n\n` +
      table(
        [
          'live sessions',
          'Redis used_memory growth MB',
          'Redis bytes per session',
          'keys per session',
          `projected for ${fmt(GOAL_SESSIONS)} sessions MB`,
          'app heap bytes per session',
        ],
        [
          [
            fmt(count),
            fmt((usedAfter - usedBefore) / MB, 1),
            fmt(perSession),
            fmt(keysPerSession, 2),
            fmt((perSession * GOAL_SESSIONS) / MB, 1),
            fmt(heapPerSession),
          ],
        ],
      ) +
      `\n\nOne session's keys: ` +
      (sizes.length
        ? sizes
            .map(
              (s) =>
                `\`${s.key.replace(/live-0$/, '<SessionId>')}\`: MEMORY USAGE ${fmt(s.usage)} B, of which the value ${fmt(s.value)} B`,
            )
            .join('; ')
        : 'none found') +
      '.'
    );
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    log(`  Redis session memory: failed: ${message}`);
    goals.push({ area, goal, measured: `not measured: ${message}`, met: null, margin: 'not measured' });
    return `Redis memory per session: not measured (${message}).`;
  } finally {
    await child?.stop();
    await redis?.stop();
  }
}
