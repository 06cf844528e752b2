/*
 * Every module calls the platform through @nestjs/axios' HttpService, on the axios instance
 * hubtelHttpModule() builds: requests go out through undici (see createUndiciAxiosAdapter), which
 * the SMS benchmark depends on. Checked on the HttpService each module really injects into its
 * transport, and by a real request through it.
 */
import { HttpService } from '@nestjs/axios';
import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { SmsModule } from 'nestjs-hubtel/sms';
import { FakeHttpServer } from './support/fake-http-server.js';

const PAIR = { clientId: 'id-1', clientSecret: 'secret-1' };

const cases: [string, (url: string) => DynamicModule][] = [
  ['SmsModule', (url) => SmsModule.forRoot({ ...PAIR, baseUrl: url })],
  ['CheckoutModule', () => CheckoutModule.forRoot({ ...PAIR, merchantAccountNumber: '11684' })],
  ['ServiceAppModule', () => ServiceAppModule.forRoot({})],
];

describe.each(cases)('%s outbound HTTP', (_name, definition) => {
  let fake: FakeHttpServer;
  let app: INestApplicationContext;
  let dynamic: DynamicModule;

  beforeAll(async () => {
    fake = await FakeHttpServer.start();
    dynamic = definition(fake.url);
    @Module({ imports: [EventEmitterModule.forRoot(), dynamic] })
    class HostModule {}
    app = await NestFactory.createApplicationContext(HostModule, { logger: false });
  });

  afterAll(async () => {
    await app?.close();
    await fake?.close();
  });

  it('goes through HttpService on the undici adapter', async () => {
    const http = app.select(dynamic).get(HttpService);
    expect(http).toBeInstanceOf(HttpService);
    const adapter = http.axiosRef.defaults.adapter;
    expect(typeof adapter === 'function' && adapter.name).toBe('undiciAxiosAdapter');
    fake.route('GET', '/ping', () => ({ status: 200, body: { pong: true } }));
    const res = await http.axiosRef.get<{ pong: boolean }>(`${fake.url}/ping`);
    expect(res.data).toEqual({ pong: true });
    expect(fake.requestsTo('GET', '/ping')).toHaveLength(1);
  });
});
