import { Logger } from '@nestjs/common';
import { JobDeferral, type InboundPipeline, type JobRunContext, type JobRecord } from '#internal';
import type { CheckoutApiClient } from './checkout-api.client.js';
import type { CheckoutAccount, CheckoutAccountSource } from './checkout.accounts.js';
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
function setup(recheck: { attempts: number; delayMs: number; maxDelayMs: number }, paidAtCheck = 0) {
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
      return checks === paidAtCheck ? { status: 'Paid', paid: true } : { status: 'Unpaid', paid: false };
    },
  } as unknown as CheckoutApiClient;
  const rejected: unknown[] = [];
  const settlement = {
    reject: (event: unknown) => void rejected.push(event),
  } as unknown as CheckoutSettlement;
  const options = {
    verification: { recheck: { roundsPerHour: 3, ...recheck } },
    handlers: {},
  } as unknown as ResolvedCheckoutOptions;
  const account = { name: 'default', options, api, verifier: {} as CheckoutVerifier } as CheckoutAccount;
  const accounts: CheckoutAccountSource = { get: async () => account, forInvoice: async () => account };
  new CheckoutConfirmation(options, pipeline, invoices, accounts, settlement);
  const payload = { claim: 'paid', callback: { Data: { ClientReference: 'r1' } } as CheckoutCallbackDto };
  const run = (record: Partial<JobRecord>, woken = false) =>
    definition!.run!(payload, {
      attempt: 1,
      record: { payload, ...record } as JobRecord,
      woken,
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
    // Its deferral's run (not a wake), a minute early by this clock (another instance's delayed
    // job, a timer firing early): the one re-check, then rejected.
    const second = await run({ state: (first as JobDeferral).state });
    expect(second).toBeUndefined();
    expect(checks()).toBe(2);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'NOT_CONFIRMED' })]);
  });

  it('a wake before the re-check is due uses one of the round’s checks and keeps the schedule', async () => {
    const { run, checks, rejected } = setup({ attempts: 1, delayMs: 60_000, maxDelayMs: 60_000 });
    const first = (await run({})) as JobDeferral;
    // Woken by a duplicate before the re-check is due.
    const woken = await run({ state: first.state }, true);
    expect(woken).toBeInstanceOf(JobDeferral);
    expect((woken as JobDeferral).until).toBe(first.until);
    expect(checks()).toBe(2);
    expect(rejected).toHaveLength(0);
    // The scheduled run finds the round's two checks spent: it ends the round without a third.
    const scheduled = await run({ state: (woken as JobDeferral).state });
    expect(scheduled).toBeUndefined();
    expect(checks()).toBe(2);
    expect(rejected).toHaveLength(1);
  });

  it('copies never make more than attempts + 1 checks a round, nor end it before its schedule', async () => {
    const { run, checks, rejected } = setup({ attempts: 3, delayMs: 60_000, maxDelayMs: 60_000 });
    let deferral = (await run({})) as JobDeferral;
    // 50 copies wake it before its first re-check is due.
    for (let copy = 0; copy < 50; copy++) {
      const next = await run({ state: deferral.state }, true);
      expect(next).toBeInstanceOf(JobDeferral);
      expect((next as JobDeferral).until).toBe(deferral.until);
      deferral = next as JobDeferral;
    }
    expect(checks()).toBe(4);
    expect(rejected).toHaveLength(0);
    // Its three scheduled runs: no check left; the last ends the round.
    for (let scheduled = 0; scheduled < 3; scheduled++) {
      const next = await run({ state: deferral.state });
      if (scheduled < 2) deferral = next as JobDeferral;
      else expect(next).toBeUndefined();
    }
    expect(checks()).toBe(4);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'NOT_CONFIRMED' })]);
  });
});
