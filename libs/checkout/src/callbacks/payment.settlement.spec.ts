import { Logger } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { InboundPipeline } from '#internal';
import { InProcessJobRunner, MemoryStore, type JobRunner, type JobRunRequest } from 'nestjs-hubtel';
import { CheckoutInvoiceStore, changeInvoice, type CheckoutInvoice } from '../invoices/invoice.store.js';
import type { PaidEvidence } from './payment.evidence.js';
import { CheckoutSettlement } from './payment.settlement.js';
import { CHECKOUT_EVENT_JOBS, CheckoutEvents } from '../checkout.events.js';

const quiet = new Logger('test');
quiet.warn = quiet.error = quiet.log = () => undefined;

/** The in-process runner, whose queue refuses the next `failing` run requests of job `type`. */
class QueueDownRunner extends InProcessJobRunner {
  constructor(
    private readonly type: string,
    private failing: number,
  ) {
    super();
  }
  override async enqueue(pipeline: string, request: JobRunRequest): Promise<void> {
    if (request.type === this.type && this.failing-- > 0) throw new Error('the queue is down');
    return super.enqueue(pipeline, request);
  }
}

async function watchedRefs(invoices: CheckoutInvoiceStore): Promise<string[]> {
  const refs: string[] = [];
  for await (const [, entry] of invoices.watched()) refs.push(entry.value.clientReference);
  return refs;
}

function setup(runner?: JobRunner) {
  const store = new MemoryStore({ sweepIntervalMs: 0 });
  const emitter = new EventEmitter2();
  const seen: Record<string, unknown[]> = { paid: [], failed: [], expired: [], rejected: [] };
  emitter.on(CheckoutEvents.Paid, (e: unknown) => void seen.paid!.push(e));
  emitter.on(CheckoutEvents.Failed, (e: unknown) => void seen.failed!.push(e));
  emitter.on(CheckoutEvents.Expired, (e: unknown) => void seen.expired!.push(e));
  emitter.on(CheckoutEvents.Rejected, (e: unknown) => void seen.rejected!.push(e));
  const pipeline = new InboundPipeline({
    name: 'checkout',
    store,
    emitter,
    deadLetterEvent: CheckoutEvents.DeadLetter,
    logger: quiet,
    runner,
  });
  for (const event of CHECKOUT_EVENT_JOBS) pipeline.define(event);
  const invoices = new CheckoutInvoiceStore(store, {
    invoiceTtlMs: 3_600_000,
    reconciliation: { enabled: true },
  });
  const settlement = new CheckoutSettlement(invoices, pipeline);
  return { store, pipeline, invoices, settlement, seen };
}

const invoice = (ref: string): CheckoutInvoice => ({
  clientReference: ref,
  checkoutId: `chk-${ref}`,
  amount: 10,
  description: 'd',
  status: 'pending',
  creation: 'created',
  createdAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
});

const paid = (ref: string): PaidEvidence => ({
  clientReference: ref,
  amountPaid: 10,
  source: 'callback',
  confirmedByStatusCheck: false,
  payment: {},
});

describe('CheckoutSettlement', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('records paid once for 50 concurrent callers and moves the invoice to paid', async () => {
    const { invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('a'));
    const results = await Promise.all(Array.from({ length: 50 }, () => settlement.paid(paid('a'))));
    expect(results.filter((r) => r === 'settled')).toHaveLength(1);
    await pipeline.drain();
    expect(seen.paid).toHaveLength(1);
    // Plain JSON, no undefined field (no payee or metadata on this invoice).
    expect(seen.paid[0]).toStrictEqual({
      clientReference: 'a',
      account: 'default',
      checkoutId: 'chk-a',
      amount: 10,
      description: 'd',
      amountPaid: 10,
      source: 'callback',
      confirmedByStatusCheck: false,
      payment: {},
      paidAt: expect.any(String),
    });
    expect(await invoices.get('a')).toMatchObject({ status: 'paid', paidVia: 'callback' });
  });

  it('heals a crash between recording paid and updating the invoice: no second event, invoice completed', async () => {
    const { invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('b'));
    // As if a process recorded the paid job and died before the invoice transition.
    await pipeline.submit(CheckoutEvents.Paid, 'b', { clientReference: 'b' });
    await pipeline.drain();
    expect(await invoices.get('b')).toMatchObject({ status: 'pending' });
    expect(await settlement.paid(paid('b'))).toBe('duplicate');
    await pipeline.drain();
    expect(seen.paid).toHaveLength(1);
    expect(await invoices.get('b')).toMatchObject({ status: 'paid' });
  });

  it('never records a failure once the payment is recorded, even while the invoice catches up', async () => {
    const { invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('c'));
    await pipeline.submit(CheckoutEvents.Paid, 'c', { clientReference: 'c' });
    expect(
      await settlement.failed({ clientReference: 'c', source: 'callback', status: 'Failed', payment: {} }),
    ).toBe('superseded');
    await settlement.paid(paid('c'));
    expect(
      await settlement.failed({ clientReference: 'c', source: 'callback', status: 'Failed', payment: {} }),
    ).toBe('superseded');
    await pipeline.drain();
    expect(seen.failed).toHaveLength(0);
  });

  it('records a failure once, then lets a later payment through', async () => {
    const { invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('d'));
    const failure = {
      clientReference: 'd',
      source: 'callback' as const,
      responseCode: '2001',
      status: 'Failed',
      payment: {},
    };
    expect(await Promise.all([settlement.failed(failure), settlement.failed(failure)])).toEqual(
      expect.arrayContaining(['settled', 'duplicate']),
    );
    expect(await settlement.paid(paid('d'))).toBe('settled');
    await pipeline.drain();
    expect(seen.failed).toHaveLength(1);
    expect(seen.paid).toHaveLength(1);
  });

  it('heals a failure whose event was not recorded after the invoice changed: the retry records it, once, as the invoice keeps it', async () => {
    const { invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('h'));
    // As if a process failed the invoice and died (or its store failed) before the event's record.
    const at = new Date(Date.now() - 60_000).toISOString();
    await invoices.update('h', (current) =>
      changeInvoice(current, { status: 'failed', failure: { status: 'Failed', responseCode: '2001', at } }),
    );
    const retry = { clientReference: 'h', source: 'callback' as const, status: 'Failed', payment: {} };
    expect(await settlement.failed({ ...retry, responseCode: '2001' })).toBe('settled');
    expect(await settlement.failed({ ...retry, responseCode: '2001' })).toBe('duplicate');
    await pipeline.drain();
    expect(seen.failed).toEqual([
      expect.objectContaining({ clientReference: 'h', responseCode: '2001', failedAt: at }),
    ]);
  });
  it('an expiry whose event could not be queued keeps the invoice watched; the next try queues it, once', async () => {
    const { invoices, settlement, pipeline, seen } = setup(new QueueDownRunner(CheckoutEvents.Expired, 1));
    await invoices.create(invoice('q'));
    await invoices.watch('q', Date.now(), Date.now());
    await expect(settlement.expired('q')).rejects.toThrow('the queue is down');
    await pipeline.drain();
    expect(seen.expired).toHaveLength(0);
    // Still the reconciler's: its next pass (which calls expired() for an expired invoice) retries.
    expect(await watchedRefs(invoices)).toEqual(['q']);
    expect(await settlement.expired('q')).toBe('duplicate');
    await pipeline.drain();
    expect(seen.expired).toEqual([expect.objectContaining({ clientReference: 'q', lastStatus: 'pending' })]);
    expect(await watchedRefs(invoices)).toEqual([]);
  });

  it('expires once, and a payment after expiry still counts (money received wins)', async () => {
    const { invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('e'));
    expect(await settlement.expired('e')).toBe('settled');
    expect(await settlement.expired('e')).toBe('duplicate');
    expect(await settlement.paid(paid('e'))).toBe('settled');
    await pipeline.drain();
    expect(seen.expired).toHaveLength(1);
    expect(seen.paid).toHaveLength(1);
    expect(await invoices.get('e')).toMatchObject({ status: 'paid' });
  });

  it('pays from a known entry without reading the invoice again, and survives a stale one', async () => {
    const { store, invoices, settlement, pipeline, seen } = setup();
    await invoices.create(invoice('known'));
    const entry = (await invoices.getEntry('known'))!;
    let reads = 0;
    const get = store.get.bind(store);
    store.get = async <T>(key: string) => {
      if (key.includes(':invoice:')) reads++;
      return get<T>(key);
    };
    expect(await settlement.paid(paid('known'), entry)).toBe('settled');
    expect(reads).toBe(0);
    // A stale entry (the invoice moved on since): a re-read, and still no second paid.
    await invoices.create(invoice('stale'));
    const stale = (await invoices.getEntry('stale'))!;
    await invoices.update('stale', (current) => ({ ...current, checkoutUrl: 'https://pay.example/x' }));
    reads = 0;
    expect(await settlement.paid(paid('stale'), stale)).toBe('settled');
    expect(reads).toBe(1);
    expect(await invoices.get('stale')).toMatchObject({
      status: 'paid',
      checkoutUrl: 'https://pay.example/x',
    });
    expect(await settlement.paid(paid('stale'), stale)).toBe('duplicate');
    await pipeline.drain();
    expect(seen.paid).toHaveLength(2);
  });

  it('takes a paid invoice off the watch list only when watching (reconciliation on)', async () => {
    const { store, pipeline } = setup();
    for (const watching of [true, false]) {
      const invoices = new CheckoutInvoiceStore(store, {
        invoiceTtlMs: 3_600_000,
        reconciliation: { enabled: watching },
      });
      const settlement = new CheckoutSettlement(invoices, pipeline);
      const ref = `w-${watching}`;
      await invoices.create(invoice(ref));
      await invoices.watch(ref, Date.now(), Date.now());
      let deletes = 0;
      const del = store.delete.bind(store);
      store.delete = async (key: string) => {
        deletes++;
        return del(key);
      };
      await settlement.paid(paid(ref));
      store.delete = del;
      expect(deletes).toBe(watching ? 1 : 0);
      expect((await store.get(`hubtel:checkout:watch:${ref}`)) === undefined).toBe(watching);
    }
    await pipeline.drain();
  });

  it('reports invoices it does not know', async () => {
    const { settlement, seen } = setup();
    expect(await settlement.paid(paid('nobody'))).toBe('unknown');
    expect(
      await settlement.failed({
        clientReference: 'nobody',
        source: 'callback',
        status: 'Failed',
        payment: {},
      }),
    ).toBe('unknown');
    expect(await settlement.expired('nobody')).toBe('unknown');
    expect(seen.paid).toHaveLength(0);
  });
});

describe('changeInvoice', () => {
  // Required<>: a field added to CheckoutInvoice breaks this until it is listed here (and copied).
  const full: Required<CheckoutInvoice> = {
    clientReference: 'ref-1',
    account: 'north',
    checkoutId: 'co-1',
    checkoutUrl: 'https://pay.example/1',
    checkoutDirectUrl: 'https://pay.example/direct/1',
    amount: 10,
    description: 'Two tickets',
    status: 'failed',
    creation: 'created',
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:01.000Z',
    paidAt: '2024-01-01T00:00:02.000Z',
    amountPaid: 10,
    paidVia: 'callback',
    amounts: { gross: 10.1, charges: 0.1, net: 10, chargesBorneBy: 'payer', currency: 'GHS' },
    failure: { status: 'Failed', at: '2024-01-01T00:00:01.000Z' },
    attention: { reason: 'AMOUNT_MISMATCH', message: 'x', at: '2024-01-01T00:00:03.000Z' },
    metadata: { orderId: 7 },
    confirmRound: 2,
    payee: { name: 'Ama', mobileNumber: '233241234567', email: 'ama@example.com' },
    confirmCheckedAt: 1_700_000_000_000,
  };

  it('copies every field, applies changes, never mutates, adds no undefined keys', () => {
    const copy = changeInvoice(full, {});
    expect(copy).toStrictEqual(full);
    expect(copy).not.toBe(full);
    const changed = changeInvoice(full, { status: 'paid', updatedAt: 'later' });
    expect(changed).toStrictEqual({ ...full, status: 'paid', updatedAt: 'later' });
    expect(full.status).toBe('failed');
    const bare = changeInvoice(
      {
        clientReference: 'r',
        amount: 1,
        description: 'd',
        status: 'pending',
        creation: 'creating',
        createdAt: 'a',
        updatedAt: 'a',
      },
      { creation: 'created', checkoutId: 'co' },
    );
    expect(Object.keys(bare)).toEqual([
      'clientReference',
      'amount',
      'description',
      'status',
      'creation',
      'createdAt',
      'updatedAt',
      'checkoutId',
    ]);
  });
});
