import { HttpService } from '@nestjs/axios';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  HubtelApiError,
  HubtelAuthenticationError,
  HubtelConfigError,
  HubtelInsufficientCreditError,
  HubtelIpNotAllowedError,
  HubtelNetworkError,
  HubtelUnknownOutcomeError,
  HubtelValidationError,
} from 'nestjs-hubtel';
import { HttpTransport } from '#internal';
import {
  SMS_HTTP_TRANSPORT,
  SmsBatchAbortedError,
  SmsModule,
  SmsService,
  countSmsSegments,
  smsOptionsFromEnv,
  type SendBatchResult,
  type SmsBatchReport,
  type SmsModuleOptions,
} from 'nestjs-hubtel/sms';
import { SMS_OPTIONS } from '../libs/sms/src/sms.constants.js';
import { smsTransportConfig, type ResolvedSmsOptions } from '../libs/sms/src/sms.options.js';
import { CaptureLogger } from './support/capture-logger.js';
import { FakeHttpServer, closedPort } from './support/fake-http-server.js';
import { FakeSmsApi, SMS_BATCH_PATH, SMS_SEND_PATH } from './support/fake-sms-api.js';

const PAIR = { clientId: 'sms-client-id', clientSecret: 'sms-SECRET-0451' };
const BASIC = `Basic ${Buffer.from(`${PAIR.clientId}:${PAIR.clientSecret}`).toString('base64')}`;
const FAST = { timeoutMs: 2_000, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 50 } };

/** Ghana numbers 233 20 000 0000 + i, in the local form users type (`020...`). */
const localNumber = (i: number) => `020${String(1_000_000 + i).padStart(7, '0')}`;
const normalised = (i: number) => `23320${String(1_000_000 + i).padStart(7, '0')}`;

describe('SmsModule (e2e, against a local fake SMS API)', () => {
  let fake: FakeSmsApi;
  const apps: INestApplication[] = [];

  async function boot(
    options: Partial<SmsModuleOptions> = {},
    logger?: CaptureLogger,
  ): Promise<{ app: INestApplication; sms: SmsService }> {
    const moduleRef = await Test.createTestingModule({
      imports: [SmsModule.forRoot({ ...PAIR, baseUrl: fake.url, ...FAST, ...options })],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: logger ?? false });
    await app.init();
    apps.push(app);
    return { app, sms: app.get(SmsService) };
  }

  beforeEach(async () => {
    fake = await FakeSmsApi.start({ credentials: PAIR });
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    await fake.close();
  });

  describe('sendBatch', () => {
    it('POSTs the exact path, headers and body, and returns the typed result', async () => {
      const { sms } = await boot();
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: ['0241234567', '+233 20 765 4321'],
        content: 'Your order is ready',
      });

      expect(fake.server.requests).toHaveLength(1);
      const [req] = fake.server.requests;
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/v1/messages/batch/simple/send');
      expect(req.headers.authorization).toBe(BASIC);
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers.accept).toBe('application/json');
      expect(req.rawBody).toBe(
        '{"From":"Shop","Recipients":["233241234567","233207654321"],"Content":"Your order is ready"}',
      );

      expect(result).toEqual<SendBatchResult>({
        batchId: 'batch-1',
        status: 0,
        data: [
          {
            recipient: '233241234567',
            content: 'Your order is ready',
            messageId: 'msg-1',
            batchId: 'batch-1',
          },
          {
            recipient: '233207654321',
            content: 'Your order is ready',
            messageId: 'msg-2',
            batchId: 'batch-1',
          },
        ],
        failed: [],
        batches: [{ index: 0, batchId: 'batch-1', status: 0, sent: 2, failed: 0, errorCode: undefined }],
        counts: { total: 2, sent: 2, failed: 0, invalid: 0, duplicates: 0, unknownOutcome: 0, batches: 1 },
        encoding: 'GSM-7',
        segmentsPerMessage: 1,
      });
    });

    it("the packaging fixtures' call works: forRoot with a base URL, one local number", async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          SmsModule.forRoot({ clientId: PAIR.clientId, clientSecret: PAIR.clientSecret, baseUrl: fake.url }),
        ],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      apps.push(app);
      const result = await app
        .get(SmsService)
        .sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'hi' });
      expect(result.data).toEqual([
        { recipient: '233241234567', content: 'hi', messageId: 'msg-1', batchId: 'batch-1' },
      ]);
      expect(fake.batchRequests[0].body).toEqual({
        From: 'Shop',
        Recipients: ['233241234567'],
        Content: 'hi',
      });
    });

    it('uses the default senderId and reports segments', async () => {
      const { sms } = await boot({ senderId: 'MyShop' });
      const result = await sms.sendBatch({ recipients: ['0241234567'], content: 'Akwaaba ₵'.repeat(10) });
      expect(fake.batchRequests[0].body).toMatchObject({ From: 'MyShop' });
      expect(result.encoding).toBe('UCS-2');
      expect(result.segmentsPerMessage).toBe(countSmsSegments('Akwaaba ₵'.repeat(10)).segments);
      expect(result.segmentsPerMessage).toBe(2);
    });

    it('normalises recipients and sends each number once', async () => {
      const { sms } = await boot();
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: ['+233 24 123 4567', '0201234567', '233241234567', '00233201234567', '(024) 123-4567'],
        content: 'hi',
      });
      expect(fake.receivedRecipients()).toEqual(['233241234567', '233201234567']);
      expect(result.counts).toMatchObject({ total: 5, sent: 2, duplicates: 3, failed: 0 });
    });

    it('rejects every invalid recipient together, naming them, and sends nothing', async () => {
      const { sms } = await boot();
      const err = await sms
        .sendBatch({
          from: 'Shop',
          recipients: ['0241234567', 'not-a-number', '12345', '0241234567'],
          content: 'hi',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelValidationError);
      expect(err.code).toBe('HUBTEL_VALIDATION_FAILED');
      expect(err.issues).toEqual([
        { field: 'recipients[1]', message: expect.any(String), value: 'not-a-number' },
        { field: 'recipients[2]', message: expect.any(String), value: '12345' },
      ]);
      expect(err.message).toContain('"not-a-number"');
      expect(err.message).toContain('"12345"');
      expect(fake.server.requests).toHaveLength(0);
    });

    it('with invalidRecipients: "report", sends the valid ones and lists the invalid as failed', async () => {
      const { sms } = await boot();
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: ['0241234567', 'nope'],
        content: 'hi',
        invalidRecipients: 'report',
      });
      expect(fake.receivedRecipients()).toEqual(['233241234567']);
      expect(result.failed).toEqual([
        {
          recipient: 'nope',
          index: 1,
          reason: expect.stringContaining('invalid phone number'),
          code: 'HUBTEL_VALIDATION_FAILED',
          outcomeUnknown: false,
        },
      ]);
      expect(result.counts).toMatchObject({ total: 2, sent: 1, failed: 1, invalid: 1 });
    });

    it.each([
      [{ from: '', recipients: ['0241234567'], content: 'hi' }, 'from'],
      [{ from: 'TwelveChars!', recipients: ['0241234567'], content: 'hi' }, 'from'],
      [{ recipients: ['0241234567'], content: 'hi' }, 'from'],
      [{ from: 'Shop', recipients: ['0241234567'], content: '  ' }, 'content'],
      [{ from: 'Shop', recipients: ['0241234567'] }, 'content'],
      [{ from: 'Shop', recipients: [], content: 'hi' }, 'recipients'],
      [{ from: 'Shop', recipients: '0241234567', content: 'hi' }, 'recipients'],
      [{ from: 'Shop', recipients: ['0241234567'], content: 'hi', batchSize: 0 }, 'batchSize'],
    ])('refuses %j (field %s) before sending anything', async (input, field) => {
      const { sms } = await boot();
      const err = await sms.sendBatch(input as never).catch((e) => e);
      expect(err).toBeInstanceOf(HubtelValidationError);
      expect(err.issues.map((i: { field: string }) => i.field)).toContain(field);
      expect(fake.server.requests).toHaveLength(0);
    });

    it('the content limit is configurable (none by default)', async () => {
      const { sms } = await boot({ maxContentLength: 10 });
      const err = await sms
        .sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'x'.repeat(11) })
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelValidationError);
      expect(err.issues).toEqual([
        { field: 'content', message: 'must be at most 10 characters long, got 11' },
      ]);
      await sms.sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'x'.repeat(10) });
      expect(fake.batchRequests).toHaveLength(1);
      const { sms: unlimited } = await boot();
      await unlimited.sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'x'.repeat(5_000) });
      expect(fake.batchRequests).toHaveLength(2);
    });

    it('the sender id limit is configurable', async () => {
      const { sms } = await boot({ maxSenderLength: 15 });
      await sms.sendBatch({ from: '233241234567', recipients: ['0241234567'], content: 'hi' });
      expect(fake.batchRequests[0].body).toMatchObject({ From: '233241234567' });
    });

    it('10,000 recipients go out in batches, concurrently, with every recipient accounted for when one batch fails', async () => {
      const { sms } = await boot({ batchSize: 100, concurrency: 4 });
      fake.batchOverride = (_req, n) =>
        n === 37 ? { status: 500, body: { message: 'internal error' } } : undefined;
      const input = Array.from({ length: 10_000 }, (_, i) => localNumber(i));
      const progress: number[] = [];
      let maxInFlight = 0;
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: input,
        content: 'Sale!',
        onProgress: (p) => {
          progress.push(p.sent + p.failed);
          maxInFlight = Math.max(maxInFlight, p.inFlight);
        },
      });

      const requests = fake.batchRequests;
      expect(requests).toHaveLength(100);
      for (const r of requests) expect((r.body as { Recipients: string[] }).Recipients.length).toBe(100);
      const failedBatch = (requests[36].body as { Recipients: string[] }).Recipients;

      expect(result.counts).toEqual({
        total: 10_000,
        sent: 9_900,
        failed: 100,
        invalid: 0,
        duplicates: 0,
        unknownOutcome: 0,
        batches: 100,
      });
      expect(result.data).toHaveLength(9_900);
      expect(result.failed).toHaveLength(100);
      expect(result.failed.map((f) => f.recipient).sort()).toEqual([...failedBatch].sort());
      for (const f of result.failed)
        expect(f).toMatchObject({ code: 'HUBTEL_API_ERROR', httpStatus: 500, outcomeUnknown: false });
      // Every input number is either sent (with its own message id) or failed, exactly once.
      const accounted = [...result.data.map((d) => d.recipient), ...result.failed.map((f) => f.recipient)];
      expect(new Set(accounted).size).toBe(10_000);
      expect(new Set(accounted)).toEqual(new Set(input.map((_, i) => normalised(i))));
      expect(new Set(result.data.map((d) => d.messageId)).size).toBe(9_900);
      expect(result.batches).toHaveLength(100);
      expect(result.batches.filter((b) => b.errorCode === 'HUBTEL_API_ERROR')).toHaveLength(1);
      expect(result.batchId).toBeUndefined();
      // Progress after every batch, growing to the total.
      expect(progress).toHaveLength(100);
      expect(progress[progress.length - 1]).toBe(10_000);
      expect(maxInFlight).toBeLessThanOrEqual(3);
    });

    it('streams an async iterable with bounded read-ahead, results to onBatch, counts only in the result', async () => {
      const { sms } = await boot();
      let pulled = 0;
      let reported = 0;
      let maxAhead = 0;
      async function* cursor() {
        for (let i = 0; i < 2_500; i++) {
          pulled++;
          maxAhead = Math.max(maxAhead, pulled - reported);
          if (i % 500 === 7) yield 'garbage';
          else if (i % 250 === 3)
            yield localNumber(0); // duplicates of the first number
          else yield localNumber(i);
          await Promise.resolve();
        }
      }
      const reports: SmsBatchReport[] = [];
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: cursor(),
        content: 'hi',
        batchSize: 50,
        concurrency: 3,
        onBatch: async (report) => {
          reports.push(report);
          reported += report.sent.length + report.failed.length;
          await new Promise((r) => setTimeout(r, 1));
        },
      });
      // 2,500 read: 5 garbage, 10 dups of number 0 (once it was seen), the rest distinct.
      expect(result.counts.total).toBe(2_500);
      expect(result.counts.invalid).toBe(5);
      expect(result.counts.duplicates).toBe(10);
      expect(result.counts.sent).toBe(2_485);
      expect(result.counts.total).toBe(result.counts.sent + result.counts.failed + result.counts.duplicates);
      // Results went to the callback, not into the returned value.
      expect(result.data).toEqual([]);
      expect(result.failed).toEqual([]);
      const sentInReports = reports.flatMap((r) => r.sent.map((s) => s.recipient));
      expect(sentInReports).toHaveLength(2_485);
      expect(new Set(sentInReports).size).toBe(2_485);
      expect(reports.flatMap((r) => r.failed).map((f) => f.recipient)).toEqual(Array(5).fill('garbage'));
      // Never more than (concurrency + 1) batches (plus duplicates/garbage) read ahead of what was reported.
      expect(maxAhead).toBeLessThanOrEqual(4 * 50 + 20);
      expect(fake.receivedRecipients()).toHaveLength(2_485);
    });

    it('a source that throws stops the run with SmsBatchAbortedError carrying the partial result', async () => {
      const { sms } = await boot();
      async function* cursor() {
        for (let i = 0; i < 120; i++) yield localNumber(i);
        throw new Error('cursor lost its connection');
      }
      const err = await sms
        .sendBatch({ from: 'Shop', recipients: cursor(), content: 'hi', batchSize: 50, concurrency: 1 })
        .catch((e) => e);
      expect(err).toBeInstanceOf(SmsBatchAbortedError);
      expect(err.code).toBe('HUBTEL_SEND_ABORTED');
      expect(err.message).toMatch(/cursor lost its connection/);
      expect(err.result.counts).toMatchObject({ sent: 100, failed: 0, total: 100 });
      expect(err.result.data).toHaveLength(100);
    });

    it('an onBatch that throws stops the run (no new batch, the cursor closed); an onProgress that throws does not', async () => {
      const { sms } = await boot({ batchSize: 10, concurrency: 1 });
      let closed = false;
      async function* cursor() {
        try {
          for (let i = 0; i < 100; i++) yield localNumber(i);
        } finally {
          closed = true; // a database cursor released
        }
      }
      let calls = 0;
      const err = await sms
        .sendBatch({
          from: 'Shop',
          recipients: cursor(),
          content: 'hi',
          onBatch: () => {
            if (++calls === 2) throw new Error('outbox is full');
          },
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(SmsBatchAbortedError);
      expect(err.code).toBe('HUBTEL_SEND_ABORTED');
      expect(err.message).toMatch(/onBatch callback failed: outbox is full/);
      expect(fake.batchRequests).toHaveLength(2);
      expect(err.result.counts).toMatchObject({ total: 20, sent: 20 });
      expect(closed).toBe(true);

      fake.server.reset();
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: Array.from({ length: 30 }, (_, i) => localNumber(i)),
        content: 'hi',
        onProgress: () => {
          throw new Error('progress bar crashed');
        },
      });
      expect(result.counts).toMatchObject({ total: 30, sent: 30, batches: 3 });
    });

    it('a refused credential stops the run: no further batch is sent', async () => {
      const { sms } = await boot({ clientSecret: 'wrong-SECRET-77', batchSize: 10, concurrency: 1 });
      const err = await sms
        .sendBatch({
          from: 'Shop',
          recipients: Array.from({ length: 50 }, (_, i) => localNumber(i)),
          content: 'hi',
        })
        .catch((e) => e);
      expect(err).toBeInstanceOf(SmsBatchAbortedError);
      expect(err.code).toBe('HUBTEL_AUTHENTICATION_FAILED');
      expect(err.cause).toBeInstanceOf(HubtelAuthenticationError);
      expect(err.httpStatus).toBe(401);
      expect(fake.batchRequests).toHaveLength(1);
      expect(err.result.counts).toMatchObject({ sent: 0, failed: 10 });
      expect(err.message).not.toContain('wrong-SECRET-77');
    });

    it.each([
      [
        'no credit (402)',
        { status: 402, body: { message: 'Insufficient balance' } },
        'HUBTEL_INSUFFICIENT_CREDIT',
        HubtelInsufficientCreditError,
      ],
      [
        'an HTML 403 (IP not allow-listed)',
        {
          status: 403,
          body: '<html><body>Forbidden</body></html>',
          headers: { 'Content-Type': 'text/html' },
        },
        'HUBTEL_IP_NOT_ALLOWED',
        HubtelIpNotAllowedError,
      ],
    ])(
      '%s stops the run too: every further batch would fail the same way',
      async (_what, reply, code, cause) => {
        const { sms } = await boot({ batchSize: 10, concurrency: 1 });
        fake.batchOverride = () => reply;
        const err = await sms
          .sendBatch({
            from: 'Shop',
            recipients: Array.from({ length: 50 }, (_, i) => localNumber(i)),
            content: 'hi',
          })
          .catch((e) => e);
        expect(err).toBeInstanceOf(SmsBatchAbortedError);
        expect(err.code).toBe(code);
        expect(err.cause).toBeInstanceOf(cause);
        expect(fake.batchRequests).toHaveLength(1);
        expect(err.result.counts).toMatchObject({ total: 10, sent: 0, failed: 10 });
      },
    );

    it('a batch answered 502 is not re-sent: its recipients are reported with outcomeUnknown', async () => {
      const { sms } = await boot();
      fake.batchOverride = () => ({
        status: 502,
        body: '<html>Bad Gateway</html>',
        headers: { 'Content-Type': 'text/html' },
      });
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: ['0241234567', '0201234567'],
        content: 'hi',
      });
      expect(fake.batchRequests).toHaveLength(1);
      expect(result.counts).toMatchObject({ sent: 0, failed: 2, unknownOutcome: 2 });
      expect(result.failed[0]).toMatchObject({
        code: 'HUBTEL_UNKNOWN_OUTCOME',
        outcomeUnknown: true,
        httpStatus: 502,
      });
      expect(result.failed[0].reason).toMatch(/outcome is unknown/);
    });

    it('a batch that times out is not re-sent', async () => {
      const { sms } = await boot({ timeoutMs: 200 });
      fake.batchOverride = () => ({ status: 200, body: {}, delayMs: 3_000 });
      const result = await sms.sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'hi' });
      // The fake records a request once it has read it: on a loaded machine, maybe only after the
      // client's 200 ms gave up on it (every retry would have been sent before the answer).
      await fake.server.waitForRequests(1);
      expect(fake.batchRequests).toHaveLength(1);
      expect(result.failed[0]).toMatchObject({ code: 'HUBTEL_UNKNOWN_OUTCOME', outcomeUnknown: true });
    });

    it("recipients missing from the platform's answer are reported as outcome unknown, not dropped", async () => {
      const { sms } = await boot();
      fake.batchOverride = (req) => {
        const [first] = (req.body as { Recipients: string[] }).Recipients;
        return {
          status: 200,
          body: {
            batchId: 'b-x',
            status: 0,
            data: [{ recipient: first, content: 'hi', messageId: 'only-one' }],
          },
        };
      };
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: ['0241234567', '0201234567'],
        content: 'hi',
      });
      expect(result.data).toEqual([
        { recipient: '233241234567', content: 'hi', messageId: 'only-one', batchId: 'b-x' },
      ]);
      expect(result.failed).toEqual([
        expect.objectContaining({
          recipient: '233201234567',
          outcomeUnknown: true,
          code: 'HUBTEL_UNKNOWN_OUTCOME',
        }),
      ]);
    });

    it('recipients the platform writes in another form (+233…, 0…) still get their message ids', async () => {
      const { sms } = await boot();
      fake.batchOverride = () => ({
        status: 200,
        body: {
          batchId: 'b-y',
          status: 0,
          data: [
            { recipient: '0201234567', content: 'hi', messageId: 'id-2' },
            { recipient: '+233241234567', content: 'hi', messageId: 'id-1' },
          ],
        },
      });
      const result = await sms.sendBatch({
        from: 'Shop',
        recipients: ['0241234567', '0201234567'],
        content: 'hi',
      });
      expect(result.data).toEqual([
        { recipient: '233241234567', content: 'hi', messageId: 'id-1', batchId: 'b-y' },
        { recipient: '233201234567', content: 'hi', messageId: 'id-2', batchId: 'b-y' },
      ]);
      expect(result.failed).toEqual([]);
    });
  });

  describe('retries through the module', () => {
    it('429 with Retry-After, then 503, then success: the batch is sent once accepted', async () => {
      const { sms } = await boot();
      fake.server.enqueue(
        'POST',
        SMS_BATCH_PATH,
        { status: 429, headers: { 'Retry-After': '0' } },
        { status: 503 },
      );
      const result = await sms.sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'hi' });
      expect(fake.batchRequests).toHaveLength(3);
      expect(result.counts.sent).toBe(1);
    });

    it('connection refused before sending is retried until the platform is up', async () => {
      const port = await closedPort();
      const server = new FakeHttpServer();
      const moduleRef = await Test.createTestingModule({
        imports: [SmsModule.forRoot({ ...PAIR, baseUrl: `http://127.0.0.1:${port}`, ...FAST })],
      })
        // The retry wait is where the platform comes back: deterministic, no timing race.
        .overrideProvider(SMS_HTTP_TRANSPORT)
        .useFactory({
          factory: (http: HttpService, options: ResolvedSmsOptions) =>
            new HttpTransport(http, {
              ...smsTransportConfig(options),
              hooks: { sleep: () => server.listen(port) },
            }),
          inject: [HttpService, SMS_OPTIONS],
        })
        .compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      apps.push(app);
      server.route('POST', SMS_SEND_PATH, () => ({ status: 200, body: { messageId: 'm-1', status: 0 } }));
      try {
        const result = await app.get(SmsService).send({ from: 'Shop', to: '0241234567', content: 'hi' });
        expect(result.messageId).toBe('m-1');
        expect(server.requests).toHaveLength(1);
      } finally {
        await server.close();
      }
    });

    it('connection refused on every attempt: the batch fails with HUBTEL_NETWORK_ERROR (nothing was sent)', async () => {
      const port = await closedPort();
      const { sms } = await boot({ baseUrl: `http://127.0.0.1:${port}` });
      const result = await sms.sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'hi' });
      expect(result.failed[0]).toMatchObject({ code: 'HUBTEL_NETWORK_ERROR', outcomeUnknown: false });
      const single = await sms.send({ from: 'Shop', to: '0241234567', content: 'hi' }).catch((e) => e);
      expect(single).toBeInstanceOf(HubtelNetworkError);
      expect(single.attempts).toBe(3);
    });

    it.each([502, 504])('status look-ups are retried after %i', async (status) => {
      const { sms } = await boot();
      fake.server.enqueue('GET', '/v1/messages/msg-9', { status });
      fake.server.enqueue('GET', '/v1/messages/batch/b-9', { status });
      expect(await sms.getMessageStatus('msg-9')).toMatchObject({ messageId: 'msg-9', status: 'Delivered' });
      expect(await sms.getBatchStatus('b-9')).toMatchObject({ batchId: 'b-9', status: 'Delivered' });
      expect(fake.server.requests.map((r) => r.url)).toEqual([
        '/v1/messages/msg-9',
        '/v1/messages/msg-9',
        '/v1/messages/batch/b-9',
        '/v1/messages/batch/b-9',
      ]);
    });

    it('status look-ups are retried after a time-out', async () => {
      const { sms } = await boot({ timeoutMs: 200 });
      fake.server.enqueue('GET', '/v1/messages/msg-1', { status: 200, body: {}, delayMs: 3_000 });
      expect(await sms.getMessageStatus('msg-1')).toMatchObject({ status: 'Delivered' });
      await fake.server.waitForRequests(2); // the first, read late on a loaded machine
      expect(fake.server.requests).toHaveLength(2);
    });

    it('a send that times out or gets 502 is not retried: HubtelUnknownOutcomeError, one request', async () => {
      const { sms } = await boot({ timeoutMs: 200 });
      fake.server.enqueue('POST', SMS_SEND_PATH, { status: 200, body: {}, delayMs: 3_000 });
      const timedOut = await sms.send({ from: 'Shop', to: '0241234567', content: 'hi' }).catch((e) => e);
      expect(timedOut).toBeInstanceOf(HubtelUnknownOutcomeError);
      expect(timedOut.message).toMatch(/outcome is unknown/);
      // The fake records a request once it has read it: on a loaded machine, maybe only after the
      // client's 200 ms gave up on it (every retry would have been sent before the answer).
      await fake.server.waitForRequests(1);
      expect(fake.server.requests).toHaveLength(1);

      fake.server.reset();
      fake.server.enqueue('POST', SMS_SEND_PATH, { status: 502 });
      const gateway = await sms.send({ from: 'Shop', to: '0241234567', content: 'hi' }).catch((e) => e);
      expect(gateway).toBeInstanceOf(HubtelUnknownOutcomeError);
      expect(fake.server.requests).toHaveLength(1);
    });
  });

  describe('send and status look-ups', () => {
    it('send POSTs { From, To, Content } and returns the typed answer', async () => {
      const { sms } = await boot();
      const result = await sms.send({ from: 'Shop', to: '+233 24 123 4567', content: 'Hello' });
      const [req] = fake.server.requests;
      expect(req.url).toBe('/v1/messages/send');
      expect(req.headers.authorization).toBe(BASIC);
      expect(req.rawBody).toBe('{"From":"Shop","To":"233241234567","Content":"Hello"}');
      expect(result).toEqual({
        to: '233241234567',
        rate: 0.03,
        messageId: 'msg-1',
        status: 0,
        networkId: '62001',
        clientReference: null,
        statusDescription: 'request submitted successfully to 233241234567',
      });
    });

    it('reads an older host PascalCase answer (Status, MessageId, Rate, NetworkId) as the documented one', async () => {
      const { sms } = await boot();
      fake.server.enqueue('POST', SMS_SEND_PATH, {
        status: 200,
        body: { Rate: 0.03, MessageId: 'msg-old', Status: 0, NetworkId: '62001', ClientReference: null },
      });
      const result = await sms.send({ from: 'Shop', to: '0241234567', content: 'Hello' });
      expect(result).toMatchObject({ messageId: 'msg-old', status: 0, rate: 0.03, networkId: '62001' });
      expect(fake.server.requests).toHaveLength(1);
    });

    it('a send answered 2xx without a messageId is an unknown outcome, not a success, and is not re-sent', async () => {
      const { sms } = await boot();
      fake.server.enqueue('POST', SMS_SEND_PATH, { status: 200, body: { status: 0 } });
      const err = await sms.send({ from: 'Shop', to: '0241234567', content: 'Hello' }).catch((e) => e);
      expect(err).toBeInstanceOf(HubtelUnknownOutcomeError);
      expect(err.message).toMatch(/without a messageId.*outcome is unknown/);
      expect(fake.server.requests).toHaveLength(1);
    });

    it('send refuses a bad number naming it', async () => {
      const { sms } = await boot();
      const err = await sms.send({ from: 'Shop', to: '12-ab', content: 'Hello' }).catch((e) => e);
      expect(err).toBeInstanceOf(HubtelValidationError);
      expect(err.message).toContain('"12-ab"');
      expect(err.issues).toEqual([
        { field: 'to', message: expect.stringContaining('characters other than digits'), value: '12-ab' },
      ]);
      // With other problems too, every one is listed, each naming its value.
      const both = await sms.send({ from: 'TwelveChars!', to: '0241', content: '' }).catch((e) => e);
      expect(both).toBeInstanceOf(HubtelValidationError);
      expect(both.issues.map((i: { field: string }) => i.field)).toEqual(['from', 'content', 'to']);
      expect(both.message).toContain('from "TwelveChars!" must be at most 11 characters');
      expect(both.message).toContain('to "0241"');
      expect(both.message).toContain('content must not be empty');
      expect(fake.server.requests).toHaveLength(0);
    });

    it('status ids are path-encoded and must be non-empty', async () => {
      const { sms } = await boot();
      await sms.getMessageStatus('a/b c');
      expect(fake.server.requests[0].url).toBe('/v1/messages/a%2Fb%20c');
      await expect(sms.getBatchStatus('')).rejects.toBeInstanceOf(HubtelValidationError);
    });
  });

  describe('error classes', () => {
    const send = (sms: SmsService) =>
      sms.send({ from: 'Shop', to: '0241234567', content: 'hi' }).catch((e) => e);

    it('401 → HubtelAuthenticationError (wrong SMS pair)', async () => {
      const { sms } = await boot({ clientId: 'other', clientSecret: 'pair' });
      const err = await send(sms);
      expect(err).toBeInstanceOf(HubtelAuthenticationError);
      expect(err.httpStatus).toBe(401);
      expect(err.message).not.toContain('pair');
    });

    it('402 → HubtelInsufficientCreditError', async () => {
      const { sms } = await boot();
      fake.server.enqueue('POST', SMS_SEND_PATH, { status: 402, body: { message: 'Insufficient balance' } });
      expect(await send(sms)).toBeInstanceOf(HubtelInsufficientCreditError);
    });

    it('403 as HTML → HubtelIpNotAllowedError', async () => {
      const { sms } = await boot();
      fake.server.enqueue('POST', SMS_SEND_PATH, {
        status: 403,
        body: '<html><body><h1>403 Forbidden</h1></body></html>',
        headers: { 'Content-Type': 'text/html' },
      });
      const err = await send(sms);
      expect(err).toBeInstanceOf(HubtelIpNotAllowedError);
      expect(err.message).toMatch(/allow-list/);
    });

    it('400 with a sub-code → HubtelApiError with responseCode and body', async () => {
      const { sms } = await boot();
      fake.server.enqueue('POST', SMS_SEND_PATH, {
        status: 400,
        body: { status: 2, message: 'Invalid sender' },
      });
      const err = await send(sms);
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err).toMatchObject({
        httpStatus: 400,
        responseCode: '2',
        body: { status: 2, message: 'Invalid sender' },
      });
      expect(err.message).toMatch(/invalid sender id/);
      expect(fake.server.requests).toHaveLength(1);
    });

    it('500 → HubtelApiError, not retried', async () => {
      const { sms } = await boot();
      fake.server.enqueue('POST', SMS_SEND_PATH, { status: 500, body: { message: 'oops' } });
      const err = await send(sms);
      expect(err).toBeInstanceOf(HubtelApiError);
      expect(err.httpStatus).toBe(500);
      expect(fake.server.requests).toHaveLength(1);
    });
  });

  describe('bootstrap', () => {
    it('forRoot with a bad option fails at init, naming it', async () => {
      const err = await Test.createTestingModule({
        imports: [SmsModule.forRoot({ clientId: 'id', clientSecret: '' })],
      })
        .compile()
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelConfigError);
      expect(err.option).toBe('sms.clientSecret');
      expect(err.message).toContain('sms.clientSecret');
    });

    it('forRootAsync with a bad option fails at init, naming it', async () => {
      const err = await Test.createTestingModule({
        imports: [SmsModule.forRootAsync({ useFactory: () => ({ ...PAIR, baseUrl: 'ftp://sms.example' }) })],
      })
        .compile()
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelConfigError);
      expect(err.option).toBe('sms.baseUrl');
    });

    it('forRootAsync from @nestjs/config: works, and a missing variable fails at init naming it', async () => {
      const env = {
        HUBTEL_SMS_CLIENT_ID: PAIR.clientId,
        HUBTEL_SMS_CLIENT_SECRET: PAIR.clientSecret,
        HUBTEL_SMS_URL: fake.url,
        HUBTEL_SMS_SENDER_ID: 'EnvShop',
      };
      const moduleRef = await Test.createTestingModule({
        imports: [
          SmsModule.forRootAsync({
            imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => env] })],
            inject: [ConfigService],
            useFactory: (config: ConfigService) => smsOptionsFromEnv((key) => config.get(key)),
          }),
        ],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      apps.push(app);
      await app.get(SmsService).sendBatch({ recipients: ['0241234567'], content: 'hi' });
      expect(fake.batchRequests[0].headers.authorization).toBe(BASIC);
      expect(fake.batchRequests[0].body).toMatchObject({ From: 'EnvShop' });

      const err = await Test.createTestingModule({
        imports: [
          SmsModule.forRootAsync({
            imports: [
              ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ HUBTEL_SMS_CLIENT_ID: 'x' })] }),
            ],
            inject: [ConfigService],
            // The ConfigService itself is accepted as a source, too.
            useFactory: (config: ConfigService) => smsOptionsFromEnv(config),
          }),
        ],
      })
        .compile()
        .catch((e) => e);
      expect(err).toBeInstanceOf(HubtelConfigError);
      expect(err.option).toBe('HUBTEL_SMS_CLIENT_SECRET');
    });

    it('forRootAsync with useExisting takes the options from a provider of another module', async () => {
      @Injectable()
      class SharedConfig {
        createSmsOptions(): SmsModuleOptions {
          return { ...PAIR, baseUrl: fake.url, senderId: 'Existing' };
        }
      }
      @Module({ providers: [SharedConfig], exports: [SharedConfig] })
      class SharedConfigModule {}

      const moduleRef = await Test.createTestingModule({
        imports: [SmsModule.forRootAsync({ imports: [SharedConfigModule], useExisting: SharedConfig })],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      apps.push(app);
      await app.get(SmsService).send({ to: '0241234567', content: 'hi' });
      expect(fake.server.requests[0].body).toEqual({ From: 'Existing', To: '233241234567', Content: 'hi' });
    });

    it('forRootAsync with useClass, and isGlobal makes SmsService injectable anywhere', async () => {
      @Injectable()
      class SmsConfig {
        createSmsOptions(): SmsModuleOptions {
          return { ...PAIR, baseUrl: fake.url };
        }
      }
      @Injectable()
      class Notifier {
        constructor(readonly sms: SmsService) {}
      }
      @Module({ providers: [Notifier] })
      class FeatureModule {}

      const moduleRef = await Test.createTestingModule({
        imports: [SmsModule.forRootAsync({ useClass: SmsConfig, isGlobal: true }), FeatureModule],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      apps.push(app);
      await app.get(Notifier).sms.send({ from: 'Shop', to: '0241234567', content: 'hi' });
      expect(fake.server.requests).toHaveLength(1);
    });
  });

  describe('logging', () => {
    it("logs through Nest's logger with phone numbers masked and no credentials", async () => {
      const logger = new CaptureLogger();
      const { sms } = await boot({ batchSize: 1, concurrency: 1 }, logger);
      fake.server.enqueue('POST', SMS_BATCH_PATH, { status: 503, body: { message: 'busy' } });
      fake.batchOverride = (_req, n) =>
        n === 2 ? { status: 400, body: { status: 1, message: 'bad destination 233207654321' } } : undefined;
      await sms.sendBatch({ from: 'Shop', recipients: ['0241234567', '0207654321'], content: 'hi' });
      await sms.send({ from: 'Shop', to: '+233 24 123 4567', content: 'x' });

      const text = logger.text();
      expect(logger.lines.some((l) => l.level === 'debug' && l.context === 'SmsService')).toBe(true);
      expect(logger.lines.some((l) => l.level === 'warn' && /retrying/.test(l.message))).toBe(true);
      expect(logger.lines.some((l) => l.level === 'warn' && /batch 1 .*failed/.test(l.message))).toBe(true);
      expect(text).toContain('233******567');
      expect(text).toContain('233******321');
      for (const secret of [
        '233241234567',
        '0241234567',
        '233207654321',
        '0207654321',
        '24 123 4567',
        PAIR.clientSecret,
        PAIR.clientId,
        BASIC.slice(6),
      ]) {
        expect(text).not.toContain(secret);
      }
    });
  });
});
