import { connect, createServer, type Server, type Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { JobRunRequest } from 'nestjs-hubtel';
import { RedisServer, redisBinary } from './support/redis-server.js';
import { BullmqJobRunner } from '../libs/bullmq/src/bullmq.job-runner.js';
import { RedisStore } from '../libs/redis/src/redis.store.js';

/**
 * A Redis whose connections go silent without closing (half-open: the peer vanished, as when a
 * failover moves the address or a NAT entry is dropped; no FIN, no RST reaches the app). The runner
 * and the store reach Redis through a TCP relay written here; cutting it makes every open connection
 * swallow what is sent and answer nothing, while new connections reach Redis again. Before the fix
 * the worker's fetch of its next job waited on its dead connection for good (and so did an add):
 * jobs waited, none ran; and every store command timed out, for good: while Redis answered every
 * new connection.
 */

const PIPELINE = 'orders';
const quiet = new Logger('test');
quiet.localInstance.log = () => undefined;
quiet.localInstance.warn = () => undefined;
quiet.localInstance.error = () => undefined;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A TCP relay to `port`: `cut()` silences every connection open now (the next ones are relayed). */
class Relay {
  private readonly open = new Set<{ client: Socket; upstream: Socket }>();
  private readonly silenced: Socket[] = [];
  private constructor(private readonly server: Server) {}

  static async start(port: number): Promise<Relay> {
    const relay: Relay = new Relay(
      createServer((client) => {
        const upstream = connect(port, '127.0.0.1');
        const pair = { client, upstream };
        for (const socket of [client, upstream]) {
          socket.on('error', () => undefined);
          socket.on('close', () => relay.open.delete(pair));
        }
        client.pipe(upstream).pipe(client);
        relay.open.add(pair);
      }),
    );
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  /** The app's end stays open and reads (so its writes succeed), nothing reaches Redis or comes back. */
  cut(): void {
    for (const { client, upstream } of this.open) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      upstream.destroy();
      client.resume();
      this.silenced.push(client);
    }
    this.open.clear();
  }

  close(): void {
    this.server.close();
    for (const socket of this.silenced) socket.destroy();
    for (const { client, upstream } of this.open) [client, upstream].forEach((socket) => socket.destroy());
  }
}

/** True once `check` holds, false after `ms` (tried every 50 ms; a check still pending then counts as no). */
async function until(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await Promise.race([check(), sleep(deadline - Date.now()).then(() => false)])) return true;
    await sleep(50);
  }
  return false;
}

redisBinary.describe(
  'The BullMQ runner and the Redis store when their connections go silent (half-open)',
  () => {
    it('drop a connection that answers nothing and open it again: jobs added meanwhile run, the store answers', async () => {
      const server = await RedisServer.start();
      const relay = await Relay.start(server.port);
      const runner = new BullmqJobRunner({ url: relay.url, logger: quiet });
      const other = new BullmqJobRunner({ url: server.url, logger: quiet, work: false });
      const store = new RedisStore({ url: relay.url });
      const ran = new Set<string>();
      const request = (key: string): JobRunRequest => ({
        storeKey: `hubtel:${PIPELINE}:job:t:${key}`,
        type: 't',
        run: 1,
      });
      try {
        await store.connect();
        await store.set('kept', 'before');
        await runner.start(PIPELINE, async (storeKey) => {
          ran.add(storeKey);
          return { kind: 'settled' };
        });
        // Every connection of the runner opened and used: its queue's, its worker's and the blocking one.
        await runner.enqueue(PIPELINE, request('before'));
        while (!ran.has(request('before').storeKey)) await sleep(20);

        relay.cut();
        // A job another instance adds (its connections are fine): the worker here takes it once its
        // silent connections are dropped. Meanwhile an add here waits for its silent connection, then
        // goes through a new one (or fails: the caller's 503, and the platform sends the callback again).
        await other.enqueue(PIPELINE, request('elsewhere'));
        const add = () =>
          runner.enqueue(PIPELINE, request('here')).then(
            () => true,
            () => false,
          );
        // Each store command meanwhile fails (its 2 s time limit): the next ones go through a new connection.
        const read = () =>
          store.get('kept').then(
            (entry) => entry?.value === 'before',
            () => false,
          );
        const [taken, added, answers] = await Promise.all([
          until(45_000, () => ran.has(request('elsewhere').storeKey)),
          until(45_000, add),
          until(45_000, read),
        ]);
        expect({ taken, added, answers }).toEqual({ taken: true, added: true, answers: true });
        expect(await until(45_000, () => ran.has(request('here').storeKey))).toBe(true);
      } finally {
        relay.close();
        await Promise.all([runner.close(), other.close(), store.close()]);
        await server.dispose();
      }
    }, 120_000);
  },
);
