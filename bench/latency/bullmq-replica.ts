/**
 * One replica for the two-instance BullMQ latency run (bullmq-replicas.ts), in its own process:
 * the service app's fulfillment endpoint with the Redis store and the BullMQ runner, sharing
 * REDIS_URL with its sibling. It notes when each probed request arrives (its HTTP server's
 * `request` event) and when the @OnFulfillment handler starts for it, on a clock both processes
 * share (performance.timeOrigin + performance.now(): the system clock, sub-millisecond).
 */
import 'reflect-metadata';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { HubtelBullmqModule } from 'nestjs-hubtel/bullmq';
import { HubtelRedisModule } from 'nestjs-hubtel/redis';
import {
  FlowContext,
  FlowStep,
  OnFulfillment,
  ServiceAppModule,
  ServiceFlow,
  type FulfillmentRequestedEvent,
} from 'nestjs-hubtel/service-app';
import { serveChild, signalFailure, signalReady } from '../lib/ipc.js';
import { PROBE_HEADER } from '../inbound/latency-probe.js';
import { LoopWatch } from '../lib/loop-watch.js';
import { BenchLogger } from '../lib/bench-logger.js';

const clock = () => performance.timeOrigin + performance.now();
let recording = false;
let arrivals: Array<string | number> = [];
let handled: Array<string | number> = [];
let answered: Array<string | number> = [];
const loop = new LoopWatch();

@Injectable()
class Handlers {
  @OnFulfillment()
  deliver(order: FulfillmentRequestedEvent): unknown {
    if (recording) handled.push(order.orderId, clock());
    return { voucher: order.orderId };
  }
}

/** A service app has a flow (without one the module warns at start-up); not driven by this run. */
@ServiceFlow()
class Flow {
  @FlowStep()
  start(ctx: FlowContext) {
    return ctx.end('Nothing to buy here');
  }
}

try {
  const url = process.env.REDIS_URL!;
  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      HubtelRedisModule.forRoot({ url }),
      // The runner with its defaults: every run a BullMQ job, on whichever replica's worker takes it.
      HubtelBullmqModule.forRoot({ url }),
      ServiceAppModule.forRoot({
        callbackUrl: process.env.CALLBACK_URL!,
        requireCart: false,
        maxPendingSessions: 10_000_000,
      }),
    ],
    providers: [Handlers, Flow],
  })
  class ReplicaModule {}

  const app = await NestFactory.create(ReplicaModule, { logger: new BenchLogger() });
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
    () => app.close(),
  );
  signalReady({ port });
} catch (error) {
  signalFailure(error);
}
