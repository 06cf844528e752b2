/**
 * One replica of the hand-written baseline for the two-instance latency rows (bullmq-replicas.ts):
 * what a user would write without the suite. A plain Nest controller (Express) on the same
 * fulfillment path adds one BullMQ job per request and answers 200 once the add resolved; a
 * BullMQ Worker in the same process runs the jobs and, as the contract requires of every service
 * application once the goods are delivered, posts the fulfillment callback (`POST
 * {callback_url}/callback`, with `undici.request` on its keep-alive pool: the leanest HTTP client
 * Node has, leaner than `fetch` or axios, so the baseline's callback costs no more than a
 * careful hand-written one; a failed post fails the job, BullMQ retries it). Nothing is recorded, verified or de-duplicated. It notes each probed request's arrival
 * (HTTP `request` event) and the start of the processor for it, on the clock both replicas share,
 * like bullmq-replica.ts does for the suite's handler.
 */
import 'reflect-metadata';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Body, Controller, HttpCode, Inject, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Queue, Worker } from 'bullmq';
import { request } from 'undici';
import { serveChild, signalFailure, signalReady } from '../lib/ipc.js';
import { PROBE_HEADER } from '../inbound/latency-probe.js';
import { LoopWatch } from '../lib/loop-watch.js';

const clock = () => performance.timeOrigin + performance.now();
let recording = false;
let arrivals: Array<string | number> = [];
let handled: Array<string | number> = [];
let answered: Array<string | number> = [];
const loop = new LoopWatch();

const QUEUE = 'bare-fulfillment';
const QUEUE_TOKEN = Symbol('queue');

@Controller()
class FulfillmentController {
  constructor(@Inject(QUEUE_TOKEN) private readonly queue: Queue) {}

  @Post('api/fulfillment')
  @HttpCode(200)
  async fulfillment(@Body() body: { OrderId: string; SessionId: string }): Promise<{ Status: string }> {
    await this.queue.add('fulfillment', { orderId: body.OrderId, sessionId: body.SessionId });
    return { Status: 'received' };
  }
}

try {
  const url = process.env.REDIS_URL!;
  const callbackUrl = `${process.env.CALLBACK_URL!}/callback`;
  // The same worker settings as the suite's runner defaults (concurrency 50, prefix), so the
  // rows differ by what the suite does, not by how many jobs a worker takes at once.
  const prefix = 'bare:bull';
  const queue = new Queue(QUEUE, {
    connection: { url },
    prefix,
    defaultJobOptions: { removeOnComplete: { age: 3_600, count: 1_000 }, removeOnFail: true },
  });
  const worker = new Worker(
    QUEUE,
    async (job) => {
      const { orderId, sessionId } = job.data as { orderId: string; sessionId: string };
      if (recording) handled.push(orderId, clock());
      const voucher = { voucher: orderId };
      const answer = await request(callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          SessionId: sessionId,
          OrderId: orderId,
          ServiceStatus: 'success',
          MetaData: voucher,
        }),
      });
      await answer.body.dump();
      if (answer.statusCode >= 300) throw new Error(`fulfillment callback answered ${answer.statusCode}`);
      return voucher;
    },
    { connection: { url, maxRetriesPerRequest: null }, prefix, concurrency: 50 },
  );
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);

  @Module({ controllers: [FulfillmentController], providers: [{ provide: QUEUE_TOKEN, useValue: queue }] })
  class BareReplicaModule {}

  const app = await NestFactory.create(BareReplicaModule, { logger: ['error', 'warn'] });
  app.getHttpServer().on('request', (req: IncomingMessage, res: ServerResponse) => {
    const key = req.headers[PROBE_HEADER];
    if (!recording || typeof key !== 'string') return;
    arrivals.push(key, clock());
    res.once('finish', () => answered.push(key, clock()));
  });
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as { port: number }).port;
  serveChild(
    {
      'latency-start': () => {
        arrivals = [];
        handled = [];
        answered = [];
        recording = true;
        loop.start();
      },
      'latency-report': () => {
        recording = false;
        return { arrivals, handled, answered, loop: loop.report() };
      },
    },
    async () => {
      await app.close();
      await worker.close();
      await queue.close();
    },
  );
  signalReady({ port });
} catch (error) {
  signalFailure(error);
}
