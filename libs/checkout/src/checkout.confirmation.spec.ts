import { Logger } from '@nestjs/common';
import { JobDeferral, type InboundPipeline, type JobRunContext, type JobRecord } from '#internal';
import type { CheckoutApiClient } from './checkout-api.client.js';
import type { CheckoutInvoice, CheckoutInvoiceStore } from './checkout-invoice.store.js';
import type { CheckoutSettlement } from './checkout-settlement.js';
import type { CheckoutVerifier } from './checkout-verifier.js';
import { CheckoutConfirmation } from './checkout.confirmation.js';
import type { ResolvedCheckoutOptions } from './checkout.options.js';
import type { CheckoutCallbackDto } from './dto/checkout-callback.dto.js';

/**
 * The confirmation job's schedule of status checks, run directly (its pipeline is a stub): which
 * run is the scheduled re-check must not depend on this process's clock agreeing to the
 * millisecond with the one that asked for the run.
 */
function setup(recheck: { attempts: number; delayMs: number; maxDelayMs: number }) {
  type Run = (payload: unknown, context: JobRunContext<unknown>) => Promise<void | JobDeferral>;
  let definition: { run?: Run } | undefined;
  const pipeline = {
    define: (_type: string, def: { run?: Run }) => {
      definition = def;
      return pipeline;
    },
  } as unknown as InboundPipeline;
  const invoice = { clientReference: 'r1', amount: 12.5, status: 'pending' } as CheckoutInvoice;
  const invoices = {
    get: async () => invoice,
    update: async () => undefined,
  } as unknown as CheckoutInvoiceStore;
  let checks = 0;
  const api = {
    findStatus: async () => {
      checks++;
      return { status: 'Unpaid', paid: false };
    },
  } as unknown as CheckoutApiClient;
  const rejected: unknown[] = [];
  const settlement = {
    reject: (event: unknown) => void rejected.push(event),
  } as unknown as CheckoutSettlement;
  const options = { verification: { recheck } } as unknown as ResolvedCheckoutOptions;
  new CheckoutConfirmation(options, pipeline, invoices, api, settlement, {} as CheckoutVerifier);
  const payload = { claim: 'paid', callback: { Data: { ClientReference: 'r1' } } as CheckoutCallbackDto };
  const run = (record: Partial<JobRecord>) =>
    definition!.run!(payload, {
      attempt: 1,
      record: { payload, ...record } as JobRecord,
      defer: (until: number, state?: unknown) => new JobDeferral(until, state),
      takeWake: async () => undefined,
    });
  return { run, checks: () => checks, rejected };
}

describe('CheckoutConfirmation schedule', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('the run of its own deferral is the scheduled re-check even when it comes before its time by this clock', async () => {
    const { run, checks, rejected } = setup({ attempts: 1, delayMs: 60_000, maxDelayMs: 60_000 });
    const first = await run({});
    expect(first).toBeInstanceOf(JobDeferral);
    // Its deferral's run (the record's deferral count unchanged since), a minute early by this
    // clock (another instance's delayed job, a timer firing early): the one re-check, then rejected.
    const second = await run({ deferrals: 1, state: (first as JobDeferral).state });
    expect(second).toBeUndefined();
    expect(checks()).toBe(2);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'NOT_CONFIRMED' })]);
  });

  it('a wake before the re-check is due adds a check and keeps the schedule', async () => {
    const { run, checks, rejected } = setup({ attempts: 1, delayMs: 60_000, maxDelayMs: 60_000 });
    const first = (await run({})) as JobDeferral;
    // Woken by a duplicate: the deferral count moved on past the deferral's own run.
    const woken = await run({ deferrals: 2, state: first.state });
    expect(woken).toBeInstanceOf(JobDeferral);
    expect((woken as JobDeferral).until).toBe(first.until);
    expect(checks()).toBe(2);
    expect(rejected).toHaveLength(0);
    const scheduled = await run({ deferrals: 3, state: (woken as JobDeferral).state });
    expect(scheduled).toBeUndefined();
    expect(checks()).toBe(3);
    expect(rejected).toHaveLength(1);
  });
});
