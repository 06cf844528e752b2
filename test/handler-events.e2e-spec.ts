/**
 * Handlers and events, through a real Nest app with the CheckoutModule (issue 33): a decorated
 * handler (`@OnCheckoutPaid()`) is called by the pipeline once per paid invoice; once it
 * succeeded, the pipeline emits the event on the app's EventEmitter2, where an `@OnEvent` method
 * and a listener attached with `emitter.on` receive it; an observer that fails neither fails the
 * job nor makes it run again (docs/architecture.md, "Handlers and events").
 */
import { Injectable, Module } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { MemoryStore } from 'nestjs-hubtel';
import { CheckoutEvents, type CheckoutPaidEvent } from 'nestjs-hubtel/checkout';
import { CaptureLogger } from './support/capture-logger.js';
import {
  ADAPTERS,
  FakeCheckoutApi,
  baseOptions,
  callbackBody,
  settle,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';

@Injectable()
class Observers {
  readonly seen: string[] = [];
  failures = 0;

  @OnEvent(CheckoutEvents.Paid)
  audit(event: CheckoutPaidEvent): void {
    this.seen.push(`@OnEvent:${event.clientReference}`);
  }

  @OnEvent(CheckoutEvents.Paid, { suppressErrors: false })
  async failing(): Promise<void> {
    this.failures++;
    throw new Error('analytics is down');
  }
}

@Module({ providers: [Observers] })
class ObserversModule {}

describe.each(ADAPTERS)('handlers run once, observers hear the event (%s)', (adapter) => {
  let api: FakeCheckoutApi;
  let t: CheckoutTestApp | undefined;

  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
  });
  afterAll(() => api.close());
  afterEach(() => t?.close());

  it('a paid callback: @OnCheckoutPaid runs once; @OnEvent and emitter.on listeners get the event; a failing observer fails nothing', async () => {
    const store = new MemoryStore({ sweepIntervalMs: 0 });
    const logger = new CaptureLogger();
    t = await startCheckoutApp(adapter, baseOptions(api, { store }), {}, undefined, logger, [
      { module: ObserversModule, global: false },
    ]);
    const heard: string[] = [];
    t.app.get(EventEmitter2).on(CheckoutEvents.Paid, (event: CheckoutPaidEvent) => {
      heard.push(event.clientReference);
    });
    const observers = t.app.get(Observers);

    const created = await t.service.createInvoice({
      totalAmount: 12,
      description: 'Bundle',
      clientReference: 'obs-1',
    });
    const body = callbackBody({ ref: 'obs-1', checkoutId: created.checkoutId, amount: 12 });
    expect((await t.post(body)).status).toBe(200);
    await t.handlers.waitFor('paid');
    await t.service.drain();
    // The platform sends its callback again: a duplicate, nothing runs or is emitted again.
    expect((await t.post(body)).status).toBe(200);
    await t.service.drain();
    await settle();

    expect(t.handlers.paidCalls).toBe(1);
    expect(heard).toEqual(['obs-1']);
    expect(observers.seen).toEqual(['@OnEvent:obs-1']);
    expect(observers.failures).toBe(1);
    const job = await store.get<Record<string, unknown>>('hubtel:checkout:job:hubtel.checkout.paid:obs-1');
    expect(job?.value).toMatchObject({ status: 'done', attempts: 1 });
    expect(
      logger.lines.some(
        (l) => l.level === 'error' && l.message.includes(`An observer of "${CheckoutEvents.Paid}" failed`),
      ),
    ).toBe(true);
  });
});
