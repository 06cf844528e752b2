/**
 * The multi-process replica tests' system (test/multi-instance.e2e-spec.ts,
 * test/bullmq-outage.e2e-spec.ts): replicas of one app (test/support/replica-app.ts), each its
 * own process, sharing Redis (the records and the BullMQ queues) on one of two topologies (one
 * redis-server, or a 3-master Redis Cluster), with the sandbox CLI as the platform in another
 * process and a fulfillment callback receiver the test can take down. Every test body is written
 * once and run on each topology:
 *
 *   for (const topology of TOPOLOGIES)
 *     topology.binary.describe(`... on ${topology.name}`, () => {
 *       const system = new ReplicaSystem(topology);
 *       beforeAll(() => system.start());
 *       afterAll(() => system.dispose());
 *       it('...', async () => { const a = await system.replica('a'); ... });
 *     });
 */
import http, { type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue, type QueueOptions } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { type JobRecord } from '#internal';
import { RedisStore, type RedisStoreOptions } from 'nestjs-hubtel/redis';
import {
  buildCheckoutCallback,
  buildFulfillmentRequest,
  buildServiceFlowRequest,
  sendFulfillmentRequest,
  sendJson,
  sendServiceFlowRequest,
  type CheckoutInvoiceLike,
} from 'nestjs-hubtel/testing';
import { BULLMQ_RUNNER_DEFAULTS } from '../../libs/bullmq/src/bullmq.constants.js';
import {
  ProcessSet,
  eventually,
  freePort,
  redisBinary,
  RedisServer,
  type AppProcess,
  type SandboxProcess,
} from './multi-process.js';
import { RedisCluster, redisClusterBinaries } from './redis-cluster.js';
import type { SystemBinary } from './system.js';

export const REPLICA_APP = new URL('./replica-app.ts', import.meta.url).pathname;

/**
 * The replicas' BullMQ timings (the runner's defaults are 10 s / 5 s). Short, so a takeover takes
 * seconds; the lock long enough that a live replica cut off from Redis for a second or two (the
 * outage tests: the last renewal, the outage, then its write retried with up to 1 s of backoff)
 * renews it before another replica may take its job, even on a loaded 2-core machine.
 */
export const LOCK_MS = 6_000;
export const STALLED_MS = 500;
/**
 * The documented worst case from a kill -9 to the job running on another replica
 * (docs/operations.md, "Takeover after a crash": lockDurationMs + stalledIntervalMs), plus room
 * for timers and event loops late on a loaded 2-core machine (a bound on a promise, not a benchmark).
 */
export const TAKEOVER_BOUND_MS = LOCK_MS + STALLED_MS + 3_000;

/** Where the replicas keep records and queues: what they are told, and how the test looks in. */
export interface RedisSpace {
  /** A replica's environment for it: REDIS_URL, or REDIS_CLUSTER_NODES. */
  env: Record<string, string>;
  /** The same, for the test's own RedisStore. */
  store: RedisStoreOptions;
  /** A BullMQ queue as the replicas see it, and how to close it (with its client). */
  queue(name: string): { queue: Queue; close(): Promise<void> };
  /** Empties it (between tests). */
  flush(): Promise<void>;
  /** Kills all of it (every node at once); it keeps what it acknowledged (append-only). */
  stop(): Promise<void>;
  /** Starts it again, with what it acknowledged; resolves once it answers (a cluster: is ok). */
  restart(): Promise<void>;
  /** Restarts it when it was stopped (after a test that failed during an outage): true then. */
  ensureUp(): Promise<boolean>;
  /** Keys per master (a cluster), to see records spread; undefined on one Redis. */
  keysPerMaster?(): Promise<number[]>;
  /** The cluster itself (on a cluster), to stop one master of it. */
  cluster?: RedisCluster;
  /** Each server (each master, on a cluster): to take one down while the others answer. */
  servers: RedisServer[];
  dispose(): Promise<void>;
}

export interface Topology {
  name: string;
  binary: SystemBinary;
  /** `nodeTimeoutMs`: a cluster's cluster-node-timeout (default 15 s; nothing on one Redis). */
  start(options?: { nodeTimeoutMs?: number }): Promise<RedisSpace>;
}

function bullmqQueue(name: string, connection: QueueOptions['connection']) {
  return new Queue(name, { connection, prefix: BULLMQ_RUNNER_DEFAULTS.prefix });
}

/**
 * One redis-server, append-only and synced before each reply: Redis is killed and restarted in
 * the outage tests, and must come back with what it acknowledged (as a production Redis holding
 * payments does).
 */
async function oneRedis(): Promise<RedisSpace> {
  const redis = await RedisServer.start({ appendOnly: true });
  return {
    env: { REDIS_URL: redis.url },
    store: { url: redis.url },
    queue(name) {
      const queue = bullmqQueue(name, { url: redis.url });
      return { queue, close: () => queue.close() };
    },
    async flush() {
      const admin = new Redis(redis.url);
      try {
        await admin.flushall();
      } finally {
        admin.disconnect();
      }
    },
    stop: () => redis.stop(),
    restart: () => redis.restart(),
    ensureUp: async () => {
      if (redis.running) return false;
      await redis.restart();
      return true;
    },
    servers: [redis],
    dispose: () => redis.dispose(),
  };
}

/** Three masters, no replicas, append-only (see oneRedis). */
async function redisCluster(options: { nodeTimeoutMs?: number } = {}): Promise<RedisSpace> {
  const cluster = await RedisCluster.start(3, { appendOnly: true, ...options });
  return {
    env: { REDIS_CLUSTER_NODES: cluster.nodesEnv },
    store: { cluster: { nodes: cluster.nodes } },
    queue(name) {
      const client = new Cluster(cluster.nodes, { redisOptions: { maxRetriesPerRequest: null } });
      const queue = bullmqQueue(name, client);
      return {
        queue,
        close: async () => {
          await queue.close();
          client.disconnect();
        },
      };
    },
    flush: () => cluster.flushAll(),
    stop: () => cluster.stop(),
    restart: () => cluster.restart(),
    ensureUp: async () => {
      if (cluster.servers.every((server) => server.running)) return false;
      await cluster.restart();
      return true;
    },
    keysPerMaster: () => cluster.keysPerMaster(),
    cluster,
    servers: cluster.servers,
    dispose: () => cluster.dispose(),
  };
}

export const TOPOLOGIES: Topology[] = [
  { name: 'one Redis', binary: redisBinary, start: oneRedis },
  { name: 'a 3-master Redis Cluster', binary: redisClusterBinaries, start: redisCluster },
];

export const id = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;
/** An id without long digit runs (logs mask what looks like a phone number). */
export const letters = (prefix: string) =>
  `${prefix}-${Array.from(randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join('')}`;

/** Runs `task` on every item, `concurrency` at a time; resolves with the results in item order. */
export async function inBatches<T, R>(
  items: T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!, index);
      }
    }),
  );
  return results;
}

/** Waits a while for what must NOT happen (a second run): no correctness depends on its length. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One sandbox CLI for the systems of a test file (one per topology, run one after the other): its
 * start costs as much as a replica's, and the tests tell what it holds apart by their ids. Stop it
 * in the file's afterAll (after the systems' own). `args`: the CLI's extra arguments
 * (`['--accounts', 'north']`: a sandbox serving two accounts).
 */
export function fileSandbox(options?: { args?: string[] }) {
  const processes = new ProcessSet();
  let started: Promise<SandboxProcess> | undefined;
  return { get: () => (started ??= processes.sandbox(options)), stop: () => processes.stopAll() };
}

/**
 * The Redis of every topology for the systems of a test file, all started when the first system
 * starts: a cluster turns ok no sooner than 2 s after its start (see RedisCluster.start), time
 * spent while the first system starts its replicas and runs its tests. Dispose it in the file's
 * afterAll (after the systems').
 */
export function fileSpaces() {
  let started: Map<Topology, Promise<RedisSpace>> | undefined;
  const all = () =>
    (started ??= new Map(
      TOPOLOGIES.filter((topology) => topology.binary.available).map((topology) => {
        const space = topology.start();
        space.catch(() => undefined); // handled: the system that asks for it gets the error
        return [topology, space];
      }),
    ));
  return {
    get: (topology: Topology) => all().get(topology)!,
    dispose: async () => {
      await Promise.all(
        [...(started?.values() ?? [])].map((space) =>
          space.then(
            (running) => running.dispose(),
            () => undefined,
          ),
        ),
      );
    },
  };
}

/** A stand-in for the platform's fulfillment callback receiver that can be down (not listening). */
export class CallbackReceiver {
  readonly received: Array<{ OrderId: string; SessionId: string; ServiceStatus: string; MetaData: unknown }> =
    [];
  private server: Server | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    if (this.server) return;
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/callback') this.received.push(JSON.parse(body));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ResponseCode":"0000"}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The callbacks received for one order. */
  of(orderId: string) {
    return this.received.filter((callback) => callback.OrderId === orderId);
  }
}

/** What a replica prints about a handler run (see replica-app.ts). */
export type RunLine = 'HANDLED' | 'HANGING' | 'DONE' | 'FAILED';

/** Escapes a key for a RegExp (ids are letters, digits and dashes, but stay safe). */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The system of one topology: its Redis, the sandbox, the callback receiver, replicas started on demand. */
export class ReplicaSystem {
  readonly processes = new ProcessSet();
  space!: RedisSpace;
  sandbox!: SandboxProcess;
  receiver!: CallbackReceiver;
  /** The test's own view of the shared store (public API), to see when jobs have settled. */
  store!: RedisStore;
  /** Every replica started (killed ones too): their output is where runs are counted. */
  readonly replicas: AppProcess[] = [];

  constructor(
    readonly topology: Topology,
    private readonly options: {
      /** A cluster's cluster-node-timeout (default 15 s): how soon a master away is marked failed. */
      nodeTimeoutMs?: number;
      /** The sandbox of the file's systems (see fileSandbox); default: one of its own. */
      sandbox?: () => Promise<SandboxProcess>;
      /** The file's Redis of this topology (see fileSpaces: not disposed here); default: its own. */
      space?: (topology: Topology) => Promise<RedisSpace>;
    } = {},
  ) {}

  /** Where the replicas leave the marks of first runs (see replica-app.ts, `hang-…`). */
  private readonly marks = mkdtempSync(path.join(tmpdir(), 'hubtel-replica-marks-'));

  async start(): Promise<void> {
    [this.space, this.sandbox] = await Promise.all([
      this.options.space?.(this.topology) ??
        this.topology.start({ nodeTimeoutMs: this.options.nodeTimeoutMs }),
      this.options.sandbox?.() ?? this.processes.sandbox(),
    ]);
    this.receiver = new CallbackReceiver(await freePort());
    await this.receiver.up();
    this.store = new RedisStore(this.space.store);
    await this.store.connect();
  }

  async dispose(): Promise<void> {
    // REPLICA_OUTPUT_DIR: every replica's output kept there (per test process), to read after a run.
    const keep = process.env.REPLICA_OUTPUT_DIR;
    const stamp = Date.now();
    if (keep)
      for (const app of new Set(this.replicas))
        writeFileSync(
          path.join(keep, `${stamp}-${this.topology.name.replace(/\W+/g, '-')}-${app.name}.log`),
          app.output.all,
        );
    await this.store?.close().catch(() => undefined);
    await this.receiver?.down();
    await this.processes.stopAll();
    if (!this.options.space) await this.space?.dispose();
    rmSync(this.marks, { recursive: true, force: true });
  }

  /** What every replica is told (its own settings after it). */
  replicaEnv(name: string, env: Record<string, string> = {}): Record<string, string> {
    return {
      ...this.space.env,
      INSTANCE: name,
      SANDBOX: JSON.stringify(this.sandbox.info),
      FULFILLMENT_CALLBACK_URL: this.receiver.url,
      LOCK_MS: String(LOCK_MS),
      STALLED_MS: String(STALLED_MS),
      HOLD_MS: '800',
      MARKS_DIR: this.marks,
      NO_COLOR: '1',
      ...env,
    };
  }

  /** Starts a replica; resolves once it answers HTTP. */
  async replica(name: string, env: Record<string, string> = {}): Promise<AppProcess> {
    const app = await this.processes.app(name, {
      entry: REPLICA_APP,
      env: this.replicaEnv(name, env),
      readyPath: '/replica',
    });
    this.replicas.push(app);
    return app;
  }

  /** Resolves once `app` reads its store again (an order lookup answers 200). */
  async usable(app: AppProcess): Promise<void> {
    await eventually(`${app.name} to reach Redis`, async () =>
      (await fetch(`${app.url}/replica/orders/probe`)).ok ? true : undefined,
    );
  }

  /** How many `<event> <handler> <key>` lines (HANDLED, DONE, FAILED) every replica printed. */
  runs(handler: string, key: string, event: RunLine = 'HANDLED'): number {
    const pattern = new RegExp(`^${event} ${handler} ${literal(key)} by `, 'm');
    return this.replicas.reduce((sum, app) => sum + app.output.count(pattern), 0);
  }

  /** The same, by replica name: `{ a: 1, b: 0 }`. */
  runsOn(handler: string, key: string, event: RunLine = 'HANDLED') {
    const pattern = new RegExp(`^${event} ${handler} ${literal(key)} by (\\S+)$`, 'gm');
    const by: Record<string, number> = {};
    for (const app of new Set(this.replicas))
      for (const match of app.output.all.matchAll(pattern)) by[match[1]!] = (by[match[1]!] ?? 0) + 1;
    return by;
  }

  /** Waits for a `<event> <handler> <key> by <replica>` line on `app` (after `from`). */
  waitFor(
    app: AppProcess,
    event: RunLine,
    handler: string,
    key: string,
    options: { from?: number; timeoutMs?: number } = {},
  ) {
    return app.output.waitFor(
      new RegExp(`^${event} ${handler} ${literal(key)} by ${app.name}$`, 'm'),
      options,
    );
  }

  /** The replica (of `apps`) that prints `<event> <handler> <key>` first. */
  whichOf(
    apps: AppProcess[],
    event: RunLine,
    handler: string,
    key: string,
    options: { from?: number[]; timeoutMs?: number } = {},
  ): Promise<AppProcess> {
    return Promise.race(
      apps.map((app, index) =>
        this.waitFor(app, event, handler, key, {
          from: options.from?.[index],
          timeoutMs: options.timeoutMs,
        }).then(() => app),
      ),
    );
  }

  /**
   * The BullMQ jobs of a queue with this name whose id holds `keyPart` (every state), as read now:
   * id, state, attemptsMade, stalledCounter, failedReason, finishedOn.
   */
  async bullmqJobs(queueName: string, jobName: string, keyPart: string) {
    const { queue, close } = this.space.queue(queueName);
    try {
      const jobs = await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed']);
      return await Promise.all(
        jobs
          .filter((job) => job.name === jobName && job.id!.includes(keyPart))
          .map(async (job) => ({
            id: job.id!,
            state: await job.getState(),
            attemptsMade: job.attemptsMade,
            stalledCounter: job.stalledCounter,
            failedReason: job.failedReason as string | undefined,
            finishedOn: job.finishedOn,
          })),
      );
    } finally {
      await close();
    }
  }

  /** `DEAD <key> attempts <n>` lines, over every replica. */
  deadLetters(keyPart: string): Array<{ key: string; attempts: number }> {
    const found: Array<{ key: string; attempts: number }> = [];
    for (const app of new Set(this.replicas))
      for (const match of app.output.all.matchAll(/^DEAD (\S+) attempts (\d+) by \S+$/gm))
        if (match[1]!.includes(keyPart)) found.push({ key: match[1]!, attempts: Number(match[2]) });
    return found;
  }

  /** Receipts of `ref` the sandbox accepted (SMS). */
  async receipts(ref: string): Promise<number> {
    return (await this.receiptsOf([ref]))[0]!;
  }

  /** The same for each of `refs`, from one read of the sandbox's messages (not one per ref). */
  async receiptsOf(refs: string[]): Promise<number[]> {
    const contents = (await this.sandbox.messages()).map((m) => m.content);
    return refs.map((ref) => contents.filter((content) => content === `Receipt ${ref}`).length);
  }

  /** Status checks the sandbox answered (since its last reset). */
  async statusChecks(): Promise<number> {
    const requests = await this.sandbox.get<Array<{ path: string }>>('requests');
    return requests.filter((request) => /^\/transactions\/[^/]+\/status$/.test(request.path)).length;
  }

  /** Resolves once no job of the pipeline (whose key has `keyPart`) is pending: each done or dead. */
  async settled(pipeline: 'checkout' | 'service-app', keyPart?: string): Promise<JobRecord[]> {
    return eventually(
      `the ${pipeline} jobs to settle`,
      async () => {
        const jobs: JobRecord[] = [];
        for await (const [key, entry] of this.store.scan<JobRecord>(`hubtel:${pipeline}:job:`)) {
          if (keyPart === undefined || key.includes(keyPart)) jobs.push(entry.value);
        }
        const open = jobs.filter((job) => job.status !== 'done' && job.status !== 'dead');
        if (open.length === 0) return jobs;
        // Thrown, not returned: a time-out then says which jobs were still open, and how.
        throw new Error(
          `still open: ${open
            .slice(0, 5)
            .map(
              (job) =>
                `${job.type} ${job.key} ${job.status} (run ${job.run ?? 1}, attempts ${job.attempts}${job.lastError ? `, ${job.lastError}` : ''})`,
            )
            .join('; ')}${open.length > 5 ? ` and ${open.length - 5} more` : ''}`,
        );
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  }

  async createInvoice(app: AppProcess, ref: string, amount = 10): Promise<{ checkoutId: string }> {
    const created = await sendJson<{ checkoutId: string }>(
      app.url,
      { clientReference: ref, amount },
      { path: '/replica/invoices' },
    );
    expect(created.status).toBe(201);
    return created.body;
  }

  /** A paid callback body the sandbox stands behind: the invoice paid there, no callback sent. */
  async paidCallback(ref: string) {
    await this.sandbox.post(`invoices/${ref}/pay`, { deliver: false });
    const invoice = await this.sandbox.get<CheckoutInvoiceLike>(`invoices/${ref}`);
    return buildCheckoutCallback({ invoice });
  }

  /** Sends one service-flow step and returns the app's answer. */
  async step(app: AppProcess, request: Record<string, unknown>) {
    const answer = await sendServiceFlowRequest<Record<string, unknown>>(app.url, request);
    expect(answer.status).toBe(200);
    return answer.body;
  }

  /** A whole USSD session, each answer on another replica: ends in the cart (GHS 5). */
  async buyBundle(sessionId: string, first: AppProcess, second: AppProcess) {
    const prompt = await this.step(first, buildServiceFlowRequest({ sessionId }));
    const bundles = await this.step(second, buildServiceFlowRequest({ sessionId, message: '0244000111' }));
    const cart = await this.step(first, buildServiceFlowRequest({ sessionId, message: '1gb' }));
    return { prompt, bundles, cart };
  }

  /**
   * An order: a USSD session over both replicas to the cart, paid at the sandbox, then its
   * fulfillment request sent to `to` (accepted: 200).
   */
  async order(orderId: string, to: AppProcess, other: AppProcess): Promise<string> {
    const sessionId = id('session');
    await this.buyBundle(sessionId, other, to);
    await this.sandbox.post(`sessions/${sessionId}/pay`, { amount: 5, orderId });
    const accepted = await sendFulfillmentRequest(to.url, buildFulfillmentRequest({ sessionId, orderId }));
    expect(accepted.status).toBe(200);
    return sessionId;
  }
}
