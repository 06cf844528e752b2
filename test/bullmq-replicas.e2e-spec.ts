import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { RedisStore, type RedisStoreOptions } from 'nestjs-hubtel/redis';
import { buildFulfillmentRequest } from 'nestjs-hubtel/testing';
import { callbackBody } from './support/checkout-harness.js';
import { RedisCluster, redisClusterBinaries } from './support/redis-cluster.js';
import { RedisServer, redisBinary } from './support/redis-server.js';
import { TsProcess, type Line } from './support/ts-process.js';

/**
 * Replicas of one app in separate processes, sharing one redis-server (store and BullMQ queues),
 * the sandbox as its own process; everything over real HTTP. A replica killed (SIGKILL) inside a
 * handler has its job taken over by another (BullMQ stalled-job detection), and nothing that
 * succeeded runs twice. All of it twice: on one Redis, and on a 3-master Redis Cluster.
 */

/** Where the replicas keep records and queues: what they are told, and how the test looks in. */
interface Topology {
  env: Record<string, string>;
  store: RedisStoreOptions;
  /** A BullMQ queue as the replicas see it, and how to close it (with its client). */
  queue(name: string): { queue: Queue; close(): Promise<void> };
  flush(): Promise<void>;
  dispose(): Promise<void>;
}

async function oneRedis(): Promise<Topology> {
  const redis = await RedisServer.start();
  return {
    env: { REDIS_URL: redis.url },
    store: { url: redis.url },
    queue(name) {
      const queue = new Queue(name, {
        connection: { url: redis.url },
        prefix: BULLMQ_RUNNER_DEFAULTS.prefix,
      });
      return { queue, close: () => queue.close() };
    },
    async flush() {
      const admin = new Redis(redis.url);
      await admin.flushall();
      admin.disconnect();
    },
    dispose: () => redis.dispose(),
  };
}

async function redisCluster(): Promise<Topology> {
  const cluster = await RedisCluster.start();
  return {
    env: { REDIS_CLUSTER_NODES: cluster.nodesEnv },
    store: { cluster: { nodes: cluster.nodes } },
    queue(name) {
      const client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
      const queue = new Queue(name, { connection: client, prefix: BULLMQ_RUNNER_DEFAULTS.prefix });
      return {
        queue,
        close: async () => {
          await queue.close();
          client.disconnect();
        },
      };
    },
    flush: () => cluster.flushAll(),
    dispose: () => cluster.dispose(),
  };
}

const TOPOLOGIES = [
  { name: 'one Redis', start: oneRedis, binary: redisBinary },
  { name: 'a 3-master Redis Cluster', start: redisCluster, binary: redisClusterBinaries },
];

const REPLICA = 'test/support/bullmq-replica.app.ts';
/** The replicas' BullMQ timings (short, so a takeover takes seconds; the defaults are 10 s / 5 s). */
const LOCK_MS = 1_500;
const STALLED_MS = 500;
/**
 * The documented worst case from a kill -9 to the job running on another replica
 * (docs/operations.md, "Takeover after a crash": lockDurationMs + stalledIntervalMs), plus room
 * for timers and event loops late on a loaded 2-core machine (not a benchmark: a bound on a promise).
 */
const TAKEOVER_BOUND_MS = LOCK_MS + STALLED_MS + 3_000;
const SANDBOX = 'libs/sandbox/src/cli/hubtel-sandbox.ts';

interface SandboxInfo {
  url: string;
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  if (!response.ok)
    throw new Error(`${init?.method ?? 'GET'} ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

for (const topology of TOPOLOGIES)
  topology.binary.describe(`BullMQ runner across replica processes, on ${topology.name}`, () => {
    let redis: Topology;
    let sandboxProcess: TsProcess;
    let sandbox: SandboxInfo & Line;
    let replicas: TsProcess[] = [];

    beforeAll(async () => {
      redis = await topology.start();
      sandboxProcess = TsProcess.start(SANDBOX, ['--port', '0', '--json']);
      sandbox = (await sandboxProcess.waitFor(
        (line) => typeof line.url === 'string',
        'the sandbox',
      )) as SandboxInfo & Line;
    }, 60_000);
    afterAll(async () => {
      await sandboxProcess?.kill();
      await redis?.dispose();
    });
    afterEach(async () => {
      await Promise.all(replicas.map((replica) => replica.kill()));
      replicas = [];
      // Each test starts from an empty Redis and a sandbox that has seen nothing.
      await redis.flush();
      await json(`${sandbox.url}/_sandbox/reset`, post({}));
    });

    async function replica(
      name: string,
      env: Record<string, string> = {},
    ): Promise<{ process: TsProcess; url: string }> {
      const child = TsProcess.start(REPLICA, [], {
        ...redis.env,
        SANDBOX: JSON.stringify(sandbox),
        REPLICA: name,
        LOCK_MS: String(LOCK_MS),
        STALLED_MS: String(STALLED_MS),
        ...env,
      });
      replicas.push(child);
      const ready = await child.waitFor((line) => typeof line.ready === 'string', `replica ${name}`, 60_000);
      return { process: child, url: String(ready.ready).replace('[::1]', '127.0.0.1') };
    }

    async function receipts(ref: string): Promise<number> {
      const messages = await json<Array<{ content: string }>>(`${sandbox.url}/_sandbox/messages`);
      return messages.filter((message) => message.content === `Receipt for ${ref}`).length;
    }

    const on = (handler: string, phase: string, ref: string) => (line: Line) =>
      line.handler === handler && line.phase === phase && line.ref === ref;

    it('2 × 60 copies of one paid callback over two replicas at once: one receipt, one fulfilment', async () => {
      const a = await replica('a');
      const b = await replica('b');
      const created = await json<{ checkoutId: string }>(`${a.url}/test/invoices`, post({ ref: 'dup-120' }));
      // Paid at the sandbox, its own callback held back: the test sends the copies.
      await json(`${sandbox.url}/_sandbox/invoices/dup-120/pay`, post({ deliver: false }));
      const callback = callbackBody({ ref: 'dup-120', checkoutId: created.checkoutId, amount: 10 });
      const answers = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          fetch(`${(i % 2 ? b : a).url}/hubtel/checkout/callback`, post(callback)).then((r) => r.status),
        ),
      );
      expect(answers).toEqual(Array(120).fill(200));
      await Promise.race([
        a.process.waitFor(on('fulfil', 'end', 'dup-120'), 'the fulfilment'),
        b.process.waitFor(on('fulfil', 'end', 'dup-120'), 'the fulfilment'),
      ]);
      // Time for a second run, had there been one.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const all = [...a.process.lines, ...b.process.lines];
      expect(all.filter(on('receipt', 'start', 'dup-120'))).toHaveLength(1);
      expect(all.filter(on('fulfil', 'start', 'dup-120'))).toHaveLength(1);
      expect(await receipts('dup-120')).toBe(1);
    }, 90_000);

    it('a replica killed inside a slow paid handler: another completes the job, the receipt is sent once', async () => {
      const a = await replica('a', { HANG_IN: 'fulfil' });
      await json(`${a.url}/test/invoices`, post({ ref: 'kill-1' }));
      await json(`${sandbox.url}/_sandbox/invoices/kill-1/pay`, post({}));
      // The receipt went out, then fulfilment started and hangs: the replica dies there.
      await a.process.waitFor(on('receipt', 'end', 'kill-1'), 'the receipt on a');
      await a.process.waitFor(on('fulfil', 'start', 'kill-1'), 'fulfilment starting on a');
      const b = await replica('b');
      const killedAt = Date.now();
      await a.process.kill();

      await b.process.waitFor(on('fulfil', 'start', 'kill-1'), 'fulfilment taken over by b');
      expect(Date.now() - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
      await b.process.waitFor(on('fulfil', 'end', 'kill-1'), 'fulfilment ending on b');
      expect(await receipts('kill-1')).toBe(1);
      // The receipt handler had succeeded on a: b never ran it.
      expect(b.process.lines.filter((line) => line.handler === 'receipt')).toEqual([]);
    }, 90_000);

    it('a replica killed inside a fulfillment handler: another delivers the order, its callback is sent once', async () => {
      const a = await replica('a', { HANG_IN: 'deliver' });
      const request = buildFulfillmentRequest({ orderId: 'order-kill-1', sessionId: 'session-kill-1' });
      await json(`${a.url}/api/fulfillment`, post(request));
      await a.process.waitFor(on('deliver', 'start', 'order-kill-1'), 'delivery starting on a');
      const b = await replica('b');
      const killedAt = Date.now();
      await a.process.kill();

      await b.process.waitFor(on('deliver', 'start', 'order-kill-1'), 'delivery taken over by b');
      expect(Date.now() - killedAt).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
      await b.process.waitFor(on('deliver', 'end', 'order-kill-1'), 'delivery ending on b');
      const callbacksOf = async () =>
        (
          await json<Array<{ orderId: string; serviceStatus: string; metaData: unknown }>>(
            `${sandbox.url}/_sandbox/fulfillment-callbacks`,
          )
        ).filter((callback) => callback.orderId === 'order-kill-1');
      const giveUp = Date.now() + 30_000;
      while ((await callbacksOf()).length === 0) {
        if (Date.now() > giveUp) throw new Error('no fulfillment callback reached the sandbox');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Time for a second callback, had one been sent (the first was accepted at once).
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await callbacksOf()).toEqual([
        expect.objectContaining({ serviceStatus: 'success', metaData: { voucher: 'V-order-kill-1' } }),
      ]);
      // Taken over as a BullMQ job (stalled on a, run by b), not by a sweep of the store.
      const { queue, close } = redis.queue('service-app');
      try {
        const runs = await queue.getJobs(['completed']);
        const delivery = runs.find((job) => job.name === 'fulfillment' && job.id!.includes('order-kill-1'));
        expect(delivery).toMatchObject({ stalledCounter: 1 });
      } finally {
        await close();
      }
    }, 90_000);

    it('a handler that always throws is retried with backoff across replicas and dead-lettered once', async () => {
      const a = await replica('a', { FAIL_IN: 'fulfil' });
      const b = await replica('b', { FAIL_IN: 'fulfil' });
      await json(`${a.url}/test/invoices`, post({ ref: 'fail-1' }));
      await json(`${sandbox.url}/_sandbox/invoices/fail-1/pay`, post({}));
      const isDead = (line: Line) =>
        typeof line.deadLetter === 'string' && String(line.deadLetter).includes('fail-1');
      await Promise.race([
        a.process.waitFor(isDead, 'the dead letter'),
        b.process.waitFor(isDead, 'the dead letter'),
      ]);
      // Long enough for any second dead letter or extra run (a retry is 200-400 ms away) to show.
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      const all = [...a.process.lines, ...b.process.lines];
      const failures = all.filter(on('fulfil', 'fail', 'fail-1'));
      expect(failures).toHaveLength(3);
      expect(all.filter(isDead)).toHaveLength(1);
      expect(all.find(isDead)).toMatchObject({ attempts: 3 });
      // The receipt handler succeeded on the first run and was never run again.
      expect(all.filter(on('receipt', 'start', 'fail-1'))).toHaveLength(1);
      expect(await receipts('fail-1')).toBe(1);
      // Each run was a BullMQ job (visible to BullMQ tools), the retries delayed by the backoff.
      const { queue, close } = redis.queue('checkout');
      try {
        const runs = (await queue.getJobs(['completed'])).filter(
          (job) => job.name === 'hubtel.checkout.paid' && job.id!.includes('fail-1'),
        );
        expect(runs.map((job) => job.id!.slice(job.id!.lastIndexOf('@'))).sort()).toEqual(['@1', '@2', '@3']);
        for (const run of runs.filter((job) => !job.id!.endsWith('@1')))
          expect(run.opts.delay ?? 0).toBeLessThanOrEqual(400);
      } finally {
        await close();
      }
    }, 90_000);

    it('a paid callback the status check does not show yet waits as a delayed BullMQ job: its replica killed, another checks once per due time and confirms it', async () => {
      // Checks at 0, +2 s and +6 s after the callback.
      const env = { RECHECK_MS: '2000' };
      const a = await replica('a', env);
      const b = await replica('b', env);
      const created = await json<{ checkoutId: string }>(`${a.url}/test/invoices`, post({ ref: 'late-1' }));
      const statusChecks = async () =>
        (await json<Array<{ path: string; query?: string }>>(`${sandbox.url}/_sandbox/requests`)).filter(
          (request) => /^\/transactions\/[^/]+\/status$/.test(request.path),
        ).length;
      const until = async (check: () => Promise<boolean>, what: string) => {
        const giveUp = Date.now() + 30_000;
        while (!(await check())) {
          if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      };
      // A "Success" callback for the invoice reaches a before the status check shows any payment.
      const callback = callbackBody({ ref: 'late-1', checkoutId: created.checkoutId, amount: 10 });
      const answer = await fetch(`${a.url}/hubtel/checkout/callback`, post(callback));
      expect(answer.status).toBe(200);

      // Checked once (not paid yet), then deferred: a delayed job in the queue, not a wait in a.
      const { queue, close } = redis.queue('checkout');
      try {
        const confirmation = async () =>
          (await queue.getDelayed()).find(
            (job) => job.name === 'hubtel.checkout.confirm' && job.id!.includes('late-1'),
          );
        await until(async () => (await confirmation()) !== undefined, 'a delayed confirmation job');
        expect(await statusChecks()).toBe(1);
        expect((await confirmation())!.opts.delay).toBeGreaterThan(0);
      } finally {
        await close();
      }
      await a.process.kill();

      // The first due time: b checks (still not paid) and defers again.
      await until(async () => (await statusChecks()) >= 2, 'the second status check');
      expect(await receipts('late-1')).toBe(0);
      // The payment shows in the status check now (no callback for it).
      await json(`${sandbox.url}/_sandbox/invoices/late-1/pay`, post({ deliver: false }));
      await b.process.waitFor(on('receipt', 'end', 'late-1'), 'the receipt on b');
      // Time for a second receipt or check, had the job run twice.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await receipts('late-1')).toBe(1);
      expect(b.process.lines.filter(on('receipt', 'start', 'late-1'))).toHaveLength(1);
      // One status check per due time (the callback's, +2 s, +6 s), not one per replica.
      expect(await statusChecks()).toBe(3);
    }, 90_000);

    it('two replicas reconciling: each pending invoice is status-checked once per due time, by one scheduled pass at a time', async () => {
      const env = { RECONCILE_MS: '300' };
      const a = await replica('a', env);
      const b = await replica('b', env);
      const refs = ['rec-1', 'rec-2', 'rec-3'];
      for (const ref of refs) await json(`${a.url}/test/invoices`, post({ ref }));
      const store = new RedisStore(redis.store);
      await store.connect();
      const checksOf = async (ref: string) =>
        (await store.get<{ checks: number }>(`hubtel:checkout:watch:${ref}`))?.value.checks ?? 0;
      try {
        // Several due times pass for every invoice.
        const giveUp = Date.now() + 30_000;
        while ((await Promise.all(refs.map(checksOf))).some((checks) => checks < 4)) {
          if (Date.now() > giveUp) throw new Error('invoices were not checked 4 times');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        // Stopped gracefully: a pass under way finishes, so every claimed check was asked.
        await Promise.all([a.process.stop(), b.process.stop()]);
        const claimed = (await Promise.all(refs.map(checksOf))).reduce((sum, checks) => sum + checks, 0);
        const requests = await json<Array<{ method: string; path: string }>>(
          `${sandbox.url}/_sandbox/requests`,
        );
        const statusChecks = requests.filter((request) =>
          /^\/transactions\/[^/]+\/status$/.test(request.path),
        );
        // One status check per due time of each invoice (a claim each), whichever replica made it.
        expect(statusChecks).toHaveLength(claimed);
      } finally {
        await store.close();
      }
      // The passes were one BullMQ job scheduler shared by both replicas, not a timer in each.
      const { queue, close } = redis.queue('checkout-reconcile');
      try {
        const schedulers = await queue.getJobSchedulers();
        expect(schedulers).toEqual([expect.objectContaining({ key: 'checkout-reconcile', every: 300 })]);
      } finally {
        await close();
      }
    }, 90_000);
  });
