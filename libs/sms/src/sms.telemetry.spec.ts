import { Global, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  HUBTEL_TELEMETRY,
  HubtelUnknownOutcomeError,
  type HubtelSignal,
  type HubtelTelemetry,
} from 'nestjs-hubtel';
import { FakeHttpServer } from '../../../test/support/fake-http-server.js';
import { SmsModule } from './sms.module.js';
import { SmsService } from './sms.service.js';

const recorded: HubtelSignal[] = [];
const recorder: HubtelTelemetry = { record: (signal) => void recorded.push(signal) };

/** What HubtelMetricsModule does: the app's telemetry, global. */
@Global()
@Module({ providers: [{ provide: HUBTEL_TELEMETRY, useValue: recorder }], exports: [HUBTEL_TELEMETRY] })
class TelemetryModule {}

describe('SmsService reports to the app telemetry', () => {
  let fake: FakeHttpServer;
  beforeAll(async () => {
    fake = await FakeHttpServer.start();
  });
  afterAll(() => fake.close());
  beforeEach(() => (recorded.length = 0));

  async function sms(): Promise<{ service: SmsService; close: () => Promise<void> }> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TelemetryModule,
        SmsModule.forRoot({
          clientId: 'id',
          clientSecret: 'secret',
          baseUrl: fake.url,
          retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
        }),
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    return { service: app.get(SmsService), close: () => app.close() };
  }

  it('counts the recipients of a batch, and each exchange with the SMS API', async () => {
    fake.enqueue('POST', '/v1/messages/batch/simple/send', {
      status: 200,
      body: {
        batchId: 'b1',
        status: 0,
        data: ['233241234567', '233241234568'].map((recipient) => ({
          recipient,
          content: 'hi',
          messageId: recipient,
        })),
      },
    });
    const { service, close } = await sms();
    await service.sendBatch({ from: 'Shop', recipients: ['0241234567', '0241234568'], content: 'hi' });
    await close();
    expect(recorded.filter((signal) => signal.kind === 'sms')).toEqual([
      { kind: 'sms', sent: 2, failed: 0, unknownOutcome: 0 },
    ]);
    expect(recorded.filter((signal) => signal.kind === 'outbound')).toEqual([
      expect.objectContaining({ api: 'sms', operation: 'sms.sendBatch', status: '200' }),
    ]);
  });

  it('counts a single send whose outcome is unknown (a gateway 502) as failed, outcome unknown', async () => {
    fake.enqueue('POST', '/v1/messages/send', { status: 502, body: 'Bad gateway' });
    const { service, close } = await sms();
    await expect(service.send({ from: 'Shop', to: '0241234567', content: 'hi' })).rejects.toBeInstanceOf(
      HubtelUnknownOutcomeError,
    );
    await close();
    expect(recorded.filter((signal) => signal.kind === 'sms')).toEqual([
      { kind: 'sms', sent: 0, failed: 1, unknownOutcome: 1 },
    ]);
  });
});
