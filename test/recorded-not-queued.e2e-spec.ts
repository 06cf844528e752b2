/**
 * A request recorded while its job could not be queued (issue 30, item 1): the record is written,
 * the BullMQ add fails (BullMQ's Redis is down while the records' Redis answers), the app answers
 * 503, and the platform's retry of the same request gets the job run, once. For a fulfillment
 * request (its payment check first) and checkout callbacks (paid, and failed), on replica processes
 * (test/support/replica-app.ts) with the sandbox CLI as the platform:
 * - on one Redis: BullMQ on a Redis of its own, killed (append-only: it comes back with its jobs);
 * - on a 3-master Redis Cluster: the master of the queues' slot killed for a few seconds (less than
 *   the cluster's node time-out), the records' keys on the other two.
 * The retry goes to a replica started after the queues are back: a replica that lived through the
 * outage may run the job too (exactly once either way), but need not.
 */
import { CheckoutEvents } from 'nestjs-hubtel/checkout';
import {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  sendCheckoutCallback,
  sendFulfillmentRequest,
  type CheckoutInvoiceLike,
} from 'nestjs-hubtel/testing';
import { Redis } from 'ioredis';
import { type JobRecord } from '#internal';
import { BULLMQ_RUNNER_DEFAULTS } from '../libs/bullmq/src/bullmq.constants.js';
import { SERVICE_APP_JOBS, SERVICE_APP_KEYS } from '../libs/service-app/src/service-app.constants.js';
import { eventually, type AppProcess } from './support/multi-process.js';
import { RedisServer } from './support/redis-server.js';
import {
  ReplicaSystem,
  TOPOLOGIES,
  fileSandbox,
  fileSpaces,
  letters,
  pause,
  type RedisSpace,
} from './support/replica-system.js';

/** BullMQ's Redis taken away while the records' Redis answers. */
interface QueueOutage {
  /** The replicas' environment for it. */
  env: Record<string, string>;
  /** True when every key is served by a server that stays up. */
  staysUp(keys: string[]): Promise<boolean>;
  down(): Promise<void>;
  up(): Promise<void>;
  dispose(): Promise<void>;
}

/** One Redis: BullMQ on a second, append-only server, killed and restarted. */
async function ownQueueRedis(): Promise<QueueOutage> {
  const queues = await RedisServer.start({ appendOnly: true });
  return {
    env: { BULLMQ_REDIS_URL: queues.url },
    staysUp: async () => true,
    down: () => queues.stop(),
    up: () => queues.restart(),
    dispose: () => queues.dispose(),
  };
}

/** A cluster: the master that holds the queues' slot, killed and restarted (append-only). */
async function queueMaster(space: RedisSpace): Promise<QueueOutage> {
  const ask = async <T>(call: (node: Redis) => Promise<T>): Promise<T> => {
    const node = new Redis(space.servers.find((server) => server.running)!.url, { maxRetriesPerRequest: 1 });
    try {
      return await call(node);
    } finally {
      node.disconnect();
    }
  };
  const owners = await ask((node) => node.cluster('SLOTS'));
  const ownerOf = async (key: string) => {
    const slot = Number(await ask((node) => node.cluster('KEYSLOT', key)));
    const port = owners.find(([from, to]) => slot >= from && slot <= to)![2]![1];
    return space.servers.find((server) => server.port === port)!;
  };
  const master = await ownerOf(`${BULLMQ_RUNNER_DEFAULTS.prefix}:service-app:id`);
  return {
    env: {},
    staysUp: async (keys) => (await Promise.all(keys.map(ownerOf))).every((owner) => owner !== master),
    down: () => master.stop(),
    async up() {
      await master.restart();
      await eventually('the cluster to be ok', async () => {
        const states = await Promise.all(
          space.servers.map((server) => {
            const node = new Redis(server.url, { maxRetriesPerRequest: 1 });
            return node.cluster('INFO').finally(() => node.disconnect());
          }),
        );
        return states.every((info) => /cluster_state:ok/.test(String(info))) ? true : undefined;
      });
    },
    dispose: async () => undefined,
  };
}

const sandbox = fileSandbox();
afterAll(() => sandbox.stop(), 60_000);
// Each topology's Redis, the cluster's started while the first system runs.
const spaces = fileSpaces();
afterAll(() => spaces.dispose(), 60_000);

for (const topology of TOPOLOGIES)
  topology.binary.describe(
    `a request recorded but not queued runs on the platform's retry, on ${topology.name}`,
    () => {
      const system = new ReplicaSystem(topology, { sandbox: sandbox.get, space: spaces.get });
      let outage: QueueOutage;
      /** Where the first request goes, through every test's outage. */
      let a: AppProcess;
      /** The replicas a test started after its outage (killed after it). */
      let replicas: AppProcess[] = [];

      beforeAll(async () => {
        await system.start();
        outage = topology.name === 'one Redis' ? await ownQueueRedis() : await queueMaster(system.space);
        // Checkout callbacks count without the status check (the second test's failed one changes
        // the invoice before its record); the fulfillment's payment check is the service app's.
        a = await system.replica('a', { ...outage.env, CONFIRM_CALLBACKS: '0' });
      }, 120_000);
      afterAll(async () => {
        await system.dispose();
        await outage?.dispose();
      }, 60_000);
      afterEach(async () => {
        await Promise.all(replicas.map((replica) => replica.kill()));
        replicas = [];
        await outage.up().catch(() => undefined);
      }, 60_000);

      async function replica(name: string, env: Record<string, string> = {}): Promise<AppProcess> {
        const started = await system.replica(name, { ...outage.env, ...env });
        replicas.push(started);
        return started;
      }

      /** A fresh id (letters: logs mask digit runs) whose keys all stay up during the outage. */
      async function idUp(prefix: string, keysOf: (id: string) => string[]): Promise<string> {
        for (let tries = 0; tries < 100; tries++) {
          const candidate = letters(prefix);
          if (await outage.staysUp(keysOf(candidate))) return candidate;
        }
        throw new Error(`no ${prefix} id with its keys off the queues' master`);
      }

      const job = (pipeline: string, type: string, key: string) => `hubtel:${pipeline}:job:${type}:${key}`;
      const record = async (key: string) => (await system.store.get<JobRecord>(key))?.value;

      // One outage for both modules: each request recorded and answered 503, each retry run once.
      it('a fulfillment request and checkout callbacks (paid, and failed) answered 503 after their records: each retry is a duplicate that gets its job run once', async () => {
        const orderId = await idUp('order', (order) => [
          job('service-app', SERVICE_APP_JOBS.fulfillment, order),
          job('service-app', SERVICE_APP_JOBS.payment, order),
        ]);
        const sessionId = await idUp('session', (session) => [`${SERVICE_APP_KEYS.cart}${session}`]);
        await system.buyBundle(sessionId, a, a);
        await system.sandbox.post(`sessions/${sessionId}/pay`, { amount: 5, orderId });
        const request = buildFulfillmentRequest({ sessionId, orderId });
        const keysOf = (ref: string) => [
          `hubtel:checkout:invoice:${ref}`,
          job('checkout', CheckoutEvents.Paid, ref),
          job('checkout', CheckoutEvents.Failed, ref),
        ];
        const [paid, failed] = [await idUp('paid', keysOf), await idUp('failed', keysOf)];
        await system.createInvoice(a, paid);
        await system.createInvoice(a, failed);
        const paidCallback = await system.paidCallback(paid);
        const failedCallback = buildCheckoutCallback({
          invoice: await system.sandbox.get<CheckoutInvoiceLike>(`invoices/${failed}`),
          outcome: 'failed',
        });

        await outage.down();
        expect((await sendFulfillmentRequest(a.url, request)).status).toBe(503);
        expect((await sendCheckoutCallback(a.url, paidCallback)).status).toBe(503);
        expect((await sendCheckoutCallback(a.url, failedCallback)).status).toBe(503);
        // Recorded, never run: nothing but the platform's retry is left to ask (the fulfillment's
        // record is its payment check).
        expect(await record(job('service-app', SERVICE_APP_JOBS.payment, orderId))).toMatchObject({
          status: 'pending',
          attempts: 0,
        });
        expect(await record(job('checkout', CheckoutEvents.Paid, paid))).toMatchObject({ attempts: 0 });
        expect(await record(job('checkout', CheckoutEvents.Failed, failed))).toMatchObject({ attempts: 0 });
        await outage.up();

        const b = await replica('b', { CONFIRM_CALLBACKS: '0' });
        const retried = await sendFulfillmentRequest<{ Status: string }>(b.url, request);
        expect(retried.status).toBe(200);
        expect(retried.body.Status).toBe('duplicate');
        expect((await sendCheckoutCallback(b.url, paidCallback)).status).toBe(200);
        expect((await sendCheckoutCallback(b.url, failedCallback)).status).toBe(200);
        await eventually(
          'the order delivered and both callbacks handled',
          () =>
            system.receiver.of(orderId).length > 0 &&
            system.runs('fulfil', paid, 'DONE') > 0 &&
            system.runs('failed', failed, 'DONE') > 0
              ? true
              : undefined,
          { timeoutMs: 30_000 },
        );
        await system.settled('service-app', orderId);
        await system.settled('checkout');
        // Room for a second run or callback, had a job been queued twice.
        await pause(1_500);

        expect(system.runs('deliver', orderId, 'DONE')).toBe(1);
        expect(system.receiver.of(orderId)).toEqual([
          expect.objectContaining({ OrderId: orderId, ServiceStatus: 'success' }),
        ]);
        expect(system.runs('receipt', paid, 'DONE')).toBe(1);
        expect(system.runs('fulfil', paid, 'DONE')).toBe(1);
        expect(await system.receipts(paid)).toBe(1);
        expect(system.runs('failed', failed, 'DONE')).toBe(1);
      }, 120_000);
    },
  );
