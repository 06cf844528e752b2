import { HttpService } from '@nestjs/axios';
import { Module, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import axios from 'axios';
import {
  HUBTEL_JOB_RUNNER,
  HUBTEL_STORE,
  HubtelStoreUnavailableError,
  MemoryStore,
  type JobRunner,
  type JobRunnerHealth,
} from 'nestjs-hubtel';
import { HttpTransport } from '#internal';
import { FakeHttpServer, closedPort } from '../../../test/support/fake-http-server.js';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { SmsModule } from 'nestjs-hubtel/sms';
import { HubtelHealthIndicator, type HubtelHealthModuleOptions } from './health.indicator.js';
import { HubtelHealthModule } from './health.module.js';

/** A store whose round trip to its server fails (as a RedisStore's does with Redis gone). */
class UnreachableStore extends MemoryStore {
  async ping(): Promise<void> {
    throw new HubtelStoreUnavailableError('Redis store ping failed: Connection is closed.');
  }
}

/** A store whose server never answers (a client without a command time-out). */
class SilentStore extends MemoryStore {
  ping(): Promise<void> {
    return new Promise(() => undefined);
  }
}

class ScriptedRunner implements JobRunner {
  constructor(private readonly state: JobRunnerHealth) {}
  async start(): Promise<void> {}
  async enqueue(): Promise<void> {}
  async wake(): Promise<void> {}
  async repeat(): Promise<void> {}
  async stop(): Promise<void> {}
  async health(): Promise<JobRunnerHealth> {
    return this.state;
  }
}

function transportTo(baseUrl: string): HttpTransport {
  return new HttpTransport(new HttpService(axios.create()), {
    baseUrls: { checkout: baseUrl },
    timeoutMs: 2_000,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    hooks: { logger: { log() {}, warn() {}, error() {} } },
  });
}

async function indicator(providers: unknown[], options: HubtelHealthModuleOptions = {}) {
  @Module({ providers: providers as never[], exports: providers as never[] })
  class AppProviders {}
  const moduleRef = await Test.createTestingModule({
    imports: [AppProviders, TerminusModule, HubtelHealthModule.forRoot(options)],
  }).compile();
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  return { app, hubtel: app.get(HubtelHealthIndicator), health: app.get(HealthCheckService) };
}

describe('HubtelHealthIndicator', () => {
  it('is up with in-memory stores and the in-process runner', async () => {
    const { app, hubtel, health } = await indicator([{ provide: 'A_STORE', useValue: new MemoryStore() }]);
    await expect(hubtel.store()).resolves.toEqual({
      hubtel_store: { status: 'up', stores: ['MemoryStore'] },
    });
    await expect(hubtel.runner()).resolves.toEqual({ hubtel_runner: { status: 'up', runner: 'in-process' } });
    await expect(health.check(hubtel.checks())).resolves.toMatchObject({ status: 'ok' });
    await app.close();
  });

  it('is down when a store does not answer its ping (an error, or nothing within timeoutMs): terminus answers 503', async () => {
    const { app, hubtel, health } = await indicator(
      [
        { provide: HUBTEL_STORE, useValue: new UnreachableStore() },
        { provide: 'OTHER', useValue: new SilentStore() },
      ],
      { timeoutMs: 50 },
    );
    const result = await hubtel.store();
    expect(result.hubtel_store).toMatchObject({
      status: 'down',
      stores: ['UnreachableStore', 'SilentStore'],
    });
    expect(String(result.hubtel_store!.message)).toMatch(/ping failed|did not answer within 50 ms/);
    await expect(health.check(hubtel.checks())).rejects.toBeInstanceOf(ServiceUnavailableException);
    await app.close();
  });

  it('reports the runner of HUBTEL_JOB_RUNNER as its health() says', async () => {
    const down = await indicator([
      {
        provide: HUBTEL_JOB_RUNNER,
        useValue: new ScriptedRunner({ up: false, details: { redis: 'reconnecting' } }),
      },
    ]);
    await expect(down.hubtel.runner()).resolves.toEqual({
      hubtel_runner: { status: 'down', runner: 'ScriptedRunner', redis: 'reconnecting' },
    });
    await down.app.close();
    const up = await indicator([{ provide: HUBTEL_JOB_RUNNER, useValue: new ScriptedRunner({ up: true }) }]);
    await expect(up.hubtel.runner()).resolves.toEqual({
      hubtel_runner: { status: 'up', runner: 'ScriptedRunner' },
    });
    await up.app.close();
  });

  describe('platform (opt in)', () => {
    let fake: FakeHttpServer;
    beforeAll(async () => {
      fake = await FakeHttpServer.start();
    });
    afterAll(() => fake.close());

    it('is not among the checks by default', async () => {
      const { app, hubtel } = await indicator([]);
      expect(hubtel.checks()).toHaveLength(2);
      await app.close();
    });

    it('is up when the base URL answers anything, a 404 included, with one request', async () => {
      const { app, hubtel } = await indicator([{ provide: 'T', useValue: transportTo(fake.url) }], {
        platform: true,
      });
      expect(hubtel.checks()).toHaveLength(3);
      const before = fake.requests.length;
      await expect(hubtel.platform()).resolves.toEqual({
        hubtel_platform: { status: 'up', apis: { checkout: 'reachable' } },
      });
      expect(fake.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /']);
      await app.close();
    });

    it('is down when nothing answers (connection refused), tried once', async () => {
      const { app, hubtel } = await indicator(
        [{ provide: 'T', useValue: transportTo(`http://127.0.0.1:${await closedPort()}`) }],
        { platform: { timeoutMs: 500 } },
      );
      await expect(hubtel.platform()).resolves.toEqual({
        hubtel_platform: { status: 'down', apis: { checkout: 'unreachable' } },
      });
      await app.close();
    });

    it("names each account's APIs when there are several, each account's transport probed", async () => {
      const closed = `http://127.0.0.1:${await closedPort()}`;
      const moduleRef = await Test.createTestingModule({
        imports: [
          TerminusModule,
          HubtelHealthModule.forRoot({ platform: { timeoutMs: 500 } }),
          SmsModule.forRoot({ clientId: 'id', clientSecret: 'secret', baseUrl: fake.url }),
          SmsModule.registerAccount({
            name: 'north',
            clientId: 'n-id',
            clientSecret: 'n-secret',
            baseUrl: closed,
          }),
          SmsModule.registerAccount({ name: 'south', clientId: 's-id', clientSecret: 's-secret' }),
        ],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      const before = fake.requests.length;
      await expect(app.get(HubtelHealthIndicator).platform()).resolves.toEqual({
        hubtel_platform: {
          status: 'down',
          apis: { sms: 'unreachable' },
          accounts: {
            default: { sms: 'reachable' },
            north: { sms: 'unreachable' },
            south: { sms: 'reachable' }, // inherits the default's base URL: one probe for both
          },
        },
      });
      expect(fake.requests.length - before).toBe(1);
      await app.close();
    });

    it("probes a named checkout account's own base URLs, labelled with its name", async () => {
      const closed = `http://127.0.0.1:${await closedPort()}`;
      const moduleRef = await Test.createTestingModule({
        imports: [
          TerminusModule,
          EventEmitterModule.forRoot(),
          HubtelHealthModule.forRoot({ platform: { timeoutMs: 500 } }),
          CheckoutModule.forRoot({
            clientId: 'id',
            clientSecret: 'secret',
            baseUrls: { checkout: fake.url, status: fake.url },
          }),
          CheckoutModule.registerAccount({
            name: 'north',
            clientId: 'n-id',
            clientSecret: 'n-secret',
            baseUrls: { checkout: closed, status: fake.url },
          }),
        ],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      await expect(app.get(HubtelHealthIndicator).platform()).resolves.toEqual({
        hubtel_platform: {
          status: 'down',
          apis: { checkout: 'unreachable', status: 'reachable' },
          accounts: {
            default: { checkout: 'reachable', status: 'reachable' },
            north: { checkout: 'unreachable', status: 'reachable' },
          },
        },
      });
      await app.close();
    });

    it("probes a named service-app account's own fulfillment-callback receiver, labelled with its name", async () => {
      const closed = `http://127.0.0.1:${await closedPort()}`;
      const moduleRef = await Test.createTestingModule({
        imports: [
          TerminusModule,
          EventEmitterModule.forRoot(),
          HubtelHealthModule.forRoot({ platform: { timeoutMs: 500 } }),
          ServiceAppModule.forRoot({ callbackUrl: fake.url, requireCart: false }),
          ServiceAppModule.registerAccount({ name: 'north', callbackUrl: closed }),
        ],
      }).compile();
      const app = await moduleRef.createNestApplication({ logger: false }).init();
      await expect(app.get(HubtelHealthIndicator).platform()).resolves.toMatchObject({
        hubtel_platform: {
          status: 'down',
          accounts: { default: { fulfillment: 'reachable' }, north: { fulfillment: 'unreachable' } },
        },
      });
      await app.close();
    });
  });
});
