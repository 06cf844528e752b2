/**
 * `sendBatch` over 1,000,000 recipients read from a cursor: every recipient accounted for, the
 * cursor read no faster than batches are sent, and the heap (measured after forced collections)
 * growing by far less than the recipients and their results would take if any of them piled up.
 *
 * The fake SMS API here keeps nothing per request (unlike test/support's recording fake), so the
 * heap this test measures is the module's.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SmsModule, SmsService, type SendBatchResult } from 'nestjs-hubtel/sms';

const PAIR = { clientId: 'bulk-id', clientSecret: 'bulk-secret' };
const TOTAL = 1_000_000;
const BATCH = 2_000;
const CONCURRENCY = 4;
const MB = 1024 * 1024;
/**
 * Allowed growth of heap + external memory (collected). The de-duplication set of 1,000,000
 * numbers is 16 MB (MsisdnSet; 24 MB while it doubles), about 35 MB in all was measured. Keeping
 * every result passes this bound by 300,000 recipients, reading the whole cursor first by
 * 600,000: either stops the run there (see onBatch below).
 */
const HEAP_BUDGET = 64 * MB;

/** Heap plus memory outside it (ArrayBuffers: MsisdnSet's table lives there). */
function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** `global.gc` without starting Node with --expose-gc (Jest's workers are not). */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** 1,000,000 distinct Ghana numbers in local form (020xxxxxxx), generated one at a time. */
async function* cursor(counter: { pulled: number }) {
  for (let i = 0; i < TOTAL; i++) {
    counter.pulled++;
    yield `02${String(i).padStart(8, '0')}`;
    // A real cursor awaits its database now and then.
    if (i % 1_000 === 0) await Promise.resolve();
  }
}

describe('SmsService.sendBatch with 1,000,000 recipients (e2e)', () => {
  let server: Server;
  let url: string;
  let inFlight = 0;
  let maxInFlight = 0;
  let received = 0;
  let gate: (() => void)[] | undefined;
  let gateTimer: NodeJS.Timeout | undefined;
  let app: INestApplication;

  function openGate(): void {
    clearTimeout(gateTimer);
    const held = gate ?? [];
    gate = undefined;
    for (const answer of held) answer();
  }

  beforeAll(async () => {
    let next = 0;
    server = createServer((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          Recipients: string[];
          Content: string;
        };
        received += body.Recipients.length;
        const batchId = `b${next++}`;
        const data = body.Recipients.map((recipient, i) => ({
          recipient,
          content: body.Content,
          messageId: `${batchId}-${i}`,
        }));
        const answer = () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ batchId, status: 0, data }), () => inFlight--);
        };
        if (!gate) return answer();
        // The first answers wait until CONCURRENCY requests are open at once (5 s at the most):
        // proves the batches really go out in parallel, without depending on timing.
        gate.push(answer);
        if (gate.length === 1) gateTimer = setTimeout(openGate, 5_000);
        if (gate.length >= CONCURRENCY) openGate();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const moduleRef = await Test.createTestingModule({
      imports: [SmsModule.forRoot({ ...PAIR, baseUrl: url, batchSize: BATCH, concurrency: CONCURRENCY })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    clearTimeout(gateTimer);
    await app?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('accounts for every recipient with bounded read-ahead and bounded heap growth', async () => {
    const sms = app.get(SmsService);
    const gc = collector();
    // Warm up (module code, sockets, JIT) so the baseline is not taken before one-time costs.
    await sms.sendBatch({ from: 'Shop', recipients: ['0241234567'], content: 'warm-up' });
    received = 0;
    maxInFlight = 0;
    gate = [];
    gc();
    const baseline = used();

    const counter = { pulled: 0 };
    let reported = 0;
    let sentWithId = 0;
    let maxAhead = 0;
    let peak = 0;
    let batches = 0;
    const result: SendBatchResult = await sms.sendBatch({
      from: 'Shop',
      recipients: cursor(counter),
      content: 'Flash sale today',
      onBatch: (report) => {
        reported += report.sent.length + report.failed.length;
        for (const s of report.sent) if (s.messageId.startsWith(`${s.batchId}-`)) sentWithId++;
        maxAhead = Math.max(maxAhead, counter.pulled - reported);
        if (++batches % 50 === 0) {
          gc();
          peak = Math.max(peak, used() - baseline);
          // Stop at once (sendBatch rejects) rather than let a leak run a million recipients deep.
          if (peak > HEAP_BUDGET)
            throw new Error(`memory grew by ${Math.round(peak / MB)} MB after ${reported} recipients`);
        }
      },
    });
    gc();
    peak = Math.max(peak, used() - baseline);

    expect(result.counts).toEqual({
      total: TOTAL,
      sent: TOTAL,
      failed: 0,
      invalid: 0,
      duplicates: 0,
      unknownOutcome: 0,
      batches: TOTAL / BATCH,
    });
    expect(received).toBe(TOTAL);
    expect(reported).toBe(TOTAL);
    expect(sentWithId).toBe(TOTAL);
    // Results went to onBatch; the returned value holds counts only. (Lengths, not the arrays:
    // a failure message must not try to print a million entries.)
    expect(result.data.length).toBe(0);
    expect(result.failed.length).toBe(0);
    // The cursor is read only as fast as batches go out: the batches in flight plus the one
    // being filled, never the whole list.
    expect(maxAhead).toBeLessThanOrEqual((CONCURRENCY + 1) * BATCH);
    // Exactly `concurrency` batches in flight at the most, and that many at once.
    expect(maxInFlight).toBe(CONCURRENCY);
    expect(peak).toBeLessThan(HEAP_BUDGET);
  }, 180_000);
});
