import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HubtelApiError, HubtelInsufficientCreditError, HubtelTimeoutError } from 'nestjs-hubtel';
import { SMS_HTTP_TRANSPORT, SMS_PATHS, SmsModule, SmsService } from 'nestjs-hubtel/sms';
import { SmsCapture } from './testing.sms-capture.js';

@Injectable()
class Notifier {
  constructor(private readonly sms: SmsService) {}
  receipt(to: string, order: string) {
    return this.sms.send({ to, content: `Order ${order} is paid` });
  }
  blast(to: string[]) {
    return this.sms.sendBatch({ recipients: to, content: 'Sale today' });
  }
}

describe('SmsCapture', () => {
  // A real SMS API stand-in that counts what reaches it: the capture must keep it at zero.
  let hits = 0;
  let server: http.Server;
  let baseUrl: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  async function appWith(capture: SmsCapture, viaInstall: boolean) {
    @Module({
      imports: [SmsModule.forRoot({ clientId: 'id', clientSecret: 'secret', senderId: 'Shop', baseUrl })],
      providers: [Notifier],
    })
    class AppModule {}
    const builder = Test.createTestingModule({ imports: [AppModule] });
    const moduleRef = viaInstall
      ? await capture.install(builder).compile()
      : await builder.overrideProvider(SMS_HTTP_TRANSPORT).useValue(capture).compile();
    return moduleRef;
  }

  it.each([
    ['install()', true],
    ['overrideProvider(SMS_HTTP_TRANSPORT)', false],
  ])('captures single and batch sends through %s, with no network', async (_name, viaInstall) => {
    const sms = new SmsCapture();
    const moduleRef = await appWith(sms, viaInstall);
    const notifier = moduleRef.get(Notifier);
    const single = await notifier.receipt('0241234567', 'A-1');
    expect(single.messageId).toBe(sms.last!.messageId);
    const batch = await notifier.blast(['0201234567', '+233 27 123 4567', '0201234567']);
    expect(batch.counts).toMatchObject({ total: 3, sent: 2, duplicates: 1, failed: 0 });

    expect(sms.messages.map((m) => [m.kind, m.from, m.to, m.content])).toEqual([
      ['single', 'Shop', '233241234567', 'Order A-1 is paid'],
      ['batch', 'Shop', '233201234567', 'Sale today'],
      ['batch', 'Shop', '233271234567', 'Sale today'],
    ]);
    expect(sms.messagesTo('024 123 4567')).toHaveLength(1);
    expect(sms.messagesTo('+233271234567')[0]!.batchId).toBe(batch.batchId);
    expect(hits).toBe(0);
    await moduleRef.close();
  });

  it("captures every account's sends through install(), each message with its account", async () => {
    const sms = new SmsCapture();
    @Module({
      imports: [
        SmsModule.forRoot({ clientId: 'id', clientSecret: 'secret', senderId: 'Shop', baseUrl }),
        SmsModule.registerAccount({
          name: 'north',
          clientId: 'n-id',
          clientSecret: 'n-secret',
          senderId: 'North',
        }),
      ],
      providers: [Notifier],
    })
    class AppModule {}
    const moduleRef = await sms.install(Test.createTestingModule({ imports: [AppModule] })).compile();
    const service = moduleRef.get(SmsService);
    await service.send({ to: '0241234567', content: 'from the main shop' });
    await service.forAccount('north').send({ to: '0241234567', content: 'from the north shop' });
    await service.forAccount('north').sendBatch({ recipients: ['0201234567'], content: 'north sale' });
    expect(sms.messages.map((m) => [m.account, m.from, m.content])).toEqual([
      ['default', 'Shop', 'from the main shop'],
      ['north', 'North', 'from the north shop'],
      ['north', 'North', 'north sale'],
    ]);
    expect(sms.messagesFrom('north')).toHaveLength(2);
    expect(sms.messagesFrom('default')).toHaveLength(1);
    expect(hits).toBe(0);
    await moduleRef.close();
  });

  it('answers status look-ups for what it captured, and 404s for the rest', async () => {
    const sms = new SmsCapture();
    const moduleRef = await appWith(sms, true);
    const service = moduleRef.get(SmsService);
    const sent = await service.send({ to: '0241234567', content: 'hello' });
    // The send's answer as the platform's (and the sandbox's): the recipient's network.
    expect(sent).toMatchObject({ status: 0, networkId: '62001' });
    const telecel = await service.send({ to: '0201234567', content: 'hello' });
    expect(telecel).toMatchObject({
      networkId: '62002',
      statusDescription: 'request submitted successfully',
    });
    expect(await service.getMessageStatus(sent.messageId)).toMatchObject({
      messageId: sent.messageId,
      status: 'Delivered',
      to: '233241234567',
      content: 'hello',
    });
    const batch = await service.sendBatch({ recipients: ['0241234567'], content: 'b' });
    expect((await service.getBatchStatus(batch.batchId!)) as unknown).toMatchObject({
      batchId: batch.batchId,
      data: [expect.objectContaining({ to: '233241234567' })],
    });
    await expect(service.getMessageStatus('nope')).rejects.toMatchObject({
      code: 'HUBTEL_NOT_FOUND',
      httpStatus: 404,
    });
    expect(sms.requests).toBe(6);
    await moduleRef.close();
  });

  it('fails the next sends as told, so the app’s error paths can be tested', async () => {
    const sms = new SmsCapture().failNext(
      new HubtelInsufficientCreditError('no credit', { httpStatus: 402 }),
      2,
    );
    const moduleRef = await appWith(sms, true);
    const service = moduleRef.get(SmsService);
    await expect(service.send({ to: '0241234567', content: 'x' })).rejects.toBeInstanceOf(
      HubtelInsufficientCreditError,
    );
    await expect(service.send({ to: '0241234567', content: 'x' })).rejects.toBeInstanceOf(
      HubtelInsufficientCreditError,
    );
    await service.send({ to: '0241234567', content: 'third' });
    expect(sms.messages.map((m) => m.content)).toEqual(['third']);
    expect(() => sms.failNext('boom' as never)).toThrow(/Error/);
    expect(() => sms.failNext(new Error('x'), 0)).toThrow(/times/);
    sms.clear();
    expect(sms.messages).toEqual([]);
    await moduleRef.close();
  });

  it('waits for a message sent in the background, and times out with a typed error', async () => {
    const sms = new SmsCapture();
    const moduleRef = await appWith(sms, true);
    const service = moduleRef.get(SmsService);
    const waiting = sms.waitForMessage('0241234567');
    setTimeout(() => void service.send({ to: '233241234567', content: 'later' }), 5);
    expect((await waiting).content).toBe('later');
    expect((await sms.waitForMessage((m) => m.content === 'later')).to).toBe('233241234567');
    await expect(sms.waitForMessage('0200000000', { timeoutMs: 20 })).rejects.toBeInstanceOf(
      HubtelTimeoutError,
    );
    await moduleRef.close();
  });

  it('answers what it cannot take as the platform would, and captures none of it', async () => {
    const sms = new SmsCapture();
    const moduleRef = await appWith(sms, true);
    const service = moduleRef.get(SmsService);
    await expect(service.getBatchStatus('no-such-batch')).rejects.toMatchObject({
      code: 'HUBTEL_NOT_FOUND',
      httpStatus: 404,
    });
    // The transport surface called with what the SmsService never sends (a hand-made request).
    const call = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) =>
      sms.request({ api: 'sms', method, path, body, idempotent: false, operation: 'test' });
    const malformed = [
      await call('POST', SMS_PATHS.send, { From: 'Shop', Content: 'no To' }).catch((e: unknown) => e),
      await call('POST', SMS_PATHS.batchSend, { From: 'Shop', To: '0241234567', Content: 'x' }).catch(
        (e: unknown) => e,
      ),
    ];
    expect(malformed).toEqual([expect.any(HubtelApiError), expect.any(HubtelApiError)]);
    expect(malformed.map((e) => [(e as HubtelApiError).httpStatus, (e as Error).message])).toEqual([
      [400, 'SmsCapture: the send request must be {From, To, Content}'],
      [400, 'SmsCapture: the batch request must be {From, Recipients: string[], Content}'],
    ]);
    await expect(call('DELETE', SMS_PATHS.message('m-1'))).rejects.toMatchObject({
      code: 'HUBTEL_CONFIG_INVALID',
      message: 'SmsCapture does not know DELETE /v1/messages/m-1 (test)',
    });
    expect(sms.messages).toEqual([]);
    expect(sms.requests).toBe(4);
    await moduleRef.close();
  });

  it('clear() forgets the failures still pending and the request count', async () => {
    const sms = new SmsCapture().failNext(new Error('down'), 3);
    const moduleRef = await appWith(sms, true);
    const service = moduleRef.get(SmsService);
    await expect(service.send({ to: '0241234567', content: 'x' })).rejects.toThrow('down');
    sms.clear();
    expect(sms.requests).toBe(0);
    await service.send({ to: '0241234567', content: 'after clear' });
    expect(sms.messages.map((m) => m.content)).toEqual(['after clear']);
    await moduleRef.close();
  });
});
