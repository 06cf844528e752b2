import { HttpService } from '@nestjs/axios';
import { Injectable, Logger, Module } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import axios from 'axios';
import { FakeHttpServer, closedPort } from '../../../../test/support/fake-http-server.js';
import { createHandlerDecorator } from '../events/handler-decorator.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import { HubtelNetworkError } from '../errors/hubtel.errors.js';
import { HttpTransport } from '../http/http-transport.js';
import { InboundPipeline } from '../inbound/inbound-pipeline.js';
import { MemoryStore } from '../store/memory.store.js';
import type { HubtelSignal, HubtelTelemetry } from './hubtel-telemetry.js';

class Recorder implements HubtelTelemetry {
  readonly signals: HubtelSignal[] = [];
  record(signal: HubtelSignal): void {
    this.signals.push(signal);
  }
  /** The signals without their latency (it varies). */
  plain(): unknown[] {
    return this.signals.map((signal) => {
      if (!('durationMs' in signal)) return signal;
      const { durationMs, ...rest } = signal;
      expect(durationMs).toBeGreaterThanOrEqual(0);
      return rest;
    });
  }
}

const PAID = 'telemetry.paid';
const OnPaid = createHandlerDecorator(PAID);

@Injectable()
class Handlers {
  failuresLeft = 0;
  @OnPaid()
  async ok(): Promise<void> {}
  @OnPaid()
  async flaky(): Promise<void> {
    if (this.failuresLeft-- > 0) throw new Error('flaky failed');
  }
}

@Module({ imports: [EventEmitterModule.forRoot()], providers: [Handlers] })
class TestModule {}

const quiet = new Logger('test');
quiet.warn = () => undefined;
quiet.error = () => undefined;

async function pipelineWith(telemetry: HubtelTelemetry, maxAttempts: number) {
  const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  const emitter = app.get(EventEmitter2);
  const pipeline = new InboundPipeline({
    name: 'test',
    store: new MemoryStore({ sweepIntervalMs: 0 }),
    emitter,
    handlers: new HandlerRegistry({
      emitter,
      discovery: app.get(DiscoveryService),
      scanner: app.get(MetadataScanner),
    }),
    deadLetterEvent: 'telemetry.dead',
    retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 2 },
    logger: quiet,
    telemetry,
  }).define(PAID);
  return { app, pipeline, handlers: app.get(Handlers) };
}

describe('HubtelTelemetry: the pipeline', () => {
  it('reports each handler call and each attempt: a failure, its retry (only the failed handler again), done', async () => {
    const recorder = new Recorder();
    const { app, pipeline, handlers } = await pipelineWith(recorder, 3);
    handlers.failuresLeft = 1;
    await pipeline.submit(PAID, 'k1', {});
    await pipeline.drain();
    const ok = `Handlers.ok@${PAID}`;
    const flaky = `Handlers.flaky@${PAID}`;
    expect(recorder.signals).toEqual([
      { kind: 'handler', pipeline: 'test', job: PAID, handler: ok, ok: true },
      { kind: 'handler', pipeline: 'test', job: PAID, handler: flaky, ok: false },
      { kind: 'job', pipeline: 'test', job: PAID, outcome: 'retry', attempt: 1 },
      { kind: 'handler', pipeline: 'test', job: PAID, handler: flaky, ok: true },
      { kind: 'job', pipeline: 'test', job: PAID, outcome: 'done', attempt: 2 },
    ]);
    await app.close();
  });

  it('reports a job that gives up as dead, and a duplicate as nothing', async () => {
    const recorder = new Recorder();
    const { app, pipeline, handlers } = await pipelineWith(recorder, 1);
    handlers.failuresLeft = 5;
    await pipeline.submit(PAID, 'k2', {});
    await pipeline.drain();
    await pipeline.submit(PAID, 'k2', {});
    await pipeline.drain();
    expect(recorder.signals.filter((signal) => signal.kind === 'job')).toEqual([
      { kind: 'job', pipeline: 'test', job: PAID, outcome: 'dead', attempt: 1 },
    ]);
    await app.close();
  });
});

describe('HubtelTelemetry: the HTTP transport', () => {
  let fake: FakeHttpServer;
  beforeAll(async () => {
    fake = await FakeHttpServer.start();
  });
  afterAll(() => fake.close());

  function transport(baseUrl: string, recorder: Recorder, maxAttempts = 3): HttpTransport {
    return new HttpTransport(new HttpService(axios.create()), {
      baseUrls: { status: baseUrl, sms: baseUrl },
      timeoutMs: 2_000,
      retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 2 },
      hooks: { logger: { log() {}, warn() {}, error() {} } },
      telemetry: recorder,
    });
  }

  it('reports every exchange with its API, operation and status, retries included', async () => {
    fake.enqueue('GET', '/probe', { status: 503, body: {} }, { status: 200, body: { ok: true } });
    const recorder = new Recorder();
    await transport(fake.url, recorder).request({
      api: 'status',
      method: 'GET',
      path: '/probe',
      idempotent: true,
      operation: 'status.check',
    });
    expect(recorder.plain()).toEqual([
      { kind: 'outbound', api: 'status', operation: 'status.check', status: '503' },
      { kind: 'outbound', api: 'status', operation: 'status.check', status: '200' },
    ]);
  });

  it('reports a connection that could not be made as `network`, once with maxAttempts: 1', async () => {
    const recorder = new Recorder();
    const request = transport(`http://127.0.0.1:${await closedPort()}`, recorder).request({
      api: 'sms',
      method: 'GET',
      path: '/',
      idempotent: true,
      operation: 'health.probe',
      maxAttempts: 1,
    });
    await expect(request).rejects.toBeInstanceOf(HubtelNetworkError);
    expect(recorder.plain()).toEqual([
      { kind: 'outbound', api: 'sms', operation: 'health.probe', status: 'network' },
    ]);
  });
});
