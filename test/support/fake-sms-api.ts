import { FakeHttpServer, type FakeReply, type RecordedRequest } from './fake-http-server.js';

export const SMS_BATCH_PATH = '/v1/messages/batch/simple/send';
export const SMS_SEND_PATH = '/v1/messages/send';

export interface FakeSmsApiOptions {
  /** When set, requests whose Basic auth is not this pair get a 401. */
  credentials?: { clientId: string; clientSecret: string };
}

/**
 * A local stand-in for the SMS API, answering like the contract's samples: batch sends return
 * `{ batchId, status: 0, data: [{ recipient, content, messageId }] }`. Message ids are predictable
 * (`msg-<n>`), so tests can check which recipient got which id. Faults are scripted with
 * `server.enqueue(...)` or by replacing a route.
 */
export class FakeSmsApi {
  private seq = 0;
  private batchSeq = 0;
  /**
   * Optional override of batch-send answers: given the request and its 1-based arrival number,
   * return a reply to use instead of the normal answer (e.g. fail the 37th batch), or undefined.
   */
  batchOverride?: (req: RecordedRequest, n: number) => FakeReply | undefined;
  private batchCount = 0;

  private constructor(
    readonly server: FakeHttpServer,
    private readonly options: FakeSmsApiOptions,
  ) {}

  static async start(options: FakeSmsApiOptions = {}): Promise<FakeSmsApi> {
    const api = new FakeSmsApi(await FakeHttpServer.start(), options);
    api.installRoutes();
    return api;
  }

  get url(): string {
    return this.server.url;
  }

  /** Every batch send request received. */
  get batchRequests(): RecordedRequest[] {
    return this.server.requestsTo('POST', SMS_BATCH_PATH);
  }

  /** Every recipient received in batch sends, in arrival order. */
  receivedRecipients(): string[] {
    return this.batchRequests.flatMap((r) => (r.body as { Recipients?: string[] })?.Recipients ?? []);
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private authorised(req: RecordedRequest): boolean {
    const pair = this.options.credentials;
    if (!pair) return true;
    const expected = `Basic ${Buffer.from(`${pair.clientId}:${pair.clientSecret}`).toString('base64')}`;
    return req.headers.authorization === expected;
  }

  private guard(req: RecordedRequest, next: () => FakeReply): FakeReply {
    if (!this.authorised(req)) return { status: 401, body: { message: 'Unauthorized' } };
    return next();
  }

  private installRoutes(): void {
    this.server.route('POST', SMS_BATCH_PATH, (req) =>
      this.guard(req, () => {
        const override = this.batchOverride?.(req, ++this.batchCount);
        if (override) return override;
        const body = req.body as { From?: string; Recipients?: string[]; Content?: string };
        if (
          !body ||
          !Array.isArray(body.Recipients) ||
          typeof body.From !== 'string' ||
          typeof body.Content !== 'string'
        ) {
          return { status: 400, body: { status: 7, message: 'Invalid request parameters' } };
        }
        const batchId = `batch-${++this.batchSeq}`;
        return {
          status: 200,
          body: {
            batchId,
            status: 0,
            data: body.Recipients.map((recipient) => ({
              recipient,
              content: body.Content,
              messageId: `msg-${++this.seq}`,
            })),
          },
        };
      }),
    );
    this.server.route('POST', SMS_SEND_PATH, (req) =>
      this.guard(req, () => {
        const body = req.body as { From?: string; To?: string; Content?: string };
        return {
          status: 201,
          body: {
            rate: 0.03,
            messageId: `msg-${++this.seq}`,
            status: 0,
            networkId: '62001',
            clientReference: null,
            statusDescription: `request submitted successfully to ${body?.To}`,
          },
        };
      }),
    );
    this.server.route('GET', /^\/v1\/messages\/batch\/[^/]+$/, (req) =>
      this.guard(req, () => ({
        status: 200,
        body: {
          batchId: decodeURIComponent(req.path.split('/').pop() ?? ''),
          status: 'Delivered',
          updateTime: '2026-01-01T00:00:00Z',
        },
      })),
    );
    this.server.route('GET', /^\/v1\/messages\/(?!batch\/)[^/]+$/, (req) =>
      this.guard(req, () => ({
        status: 200,
        body: {
          messageId: decodeURIComponent(req.path.split('/').pop() ?? ''),
          status: 'Delivered',
          updateTime: '2026-01-01T00:00:00Z',
          rate: 0.03,
        },
      })),
    );
  }
}
