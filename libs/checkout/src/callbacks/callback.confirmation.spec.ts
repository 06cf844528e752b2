import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { JobDeferral, type InboundPipeline, type JobRunContext, type JobRecord } from '#internal';
import type { CheckoutApiClient } from '../invoices/invoice.client.js';
import type { CheckoutAccount, CheckoutAccountSource } from '../checkout.accounts.js';
import type { CheckoutInvoice, CheckoutInvoiceStore } from '../invoices/invoice.store.js';
import type { CheckoutSettlement } from './payment.settlement.js';
import type { CheckoutVerifier } from './callback.verifier.js';
import { CheckoutConfirmation } from './callback.confirmation.js';
import type { ResolvedCheckoutOptions } from '../checkout.options.js';
import type { CheckoutCallbackDto } from './callback.dto.js';

/**
 * The confirmation job's schedule of status checks, run directly (its pipeline is a stub, its
 * clock `Date.now`, set by the test): which run is the scheduled re-check must not
 * depend on this process's clock agreeing to the millisecond with the one that asked for the run.
 */
function setup(
  recheck: { attempts: number; delayMs: number; maxDelayMs: number; minIntervalMs: number },
  paidAtCheck = 0,
) {
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
  const checks: number[] = [];
  const api = {
    findStatus: async () => {
      checks.push(Date.now());
      return checks.length === paidAtCheck
        ? { status: 'Paid', paid: true }
        : { status: 'Unpaid', paid: false };
    },
  } as unknown as CheckoutApiClient;
  const rejected: unknown[] = [];
  const settlement = {
    reject: (event: unknown) => void rejected.push(event),
  } as unknown as CheckoutSettlement;
  const options = { verification: { recheck }, handlers: {} } as unknown as ResolvedCheckoutOptions;
  const account = { name: 'default', options, api, verifier: {} as CheckoutVerifier } as CheckoutAccount;
  const accounts: CheckoutAccountSource = { get: async () => account, forInvoice: async () => account };
  new CheckoutConfirmation(options, pipeline, invoices, accounts, settlement);
  const payload = { claim: 'paid', callback: { Data: { ClientReference: 'r1' } } as CheckoutCallbackDto };
  let state: unknown;
  /** One run (a wake's, or its deferral's); returns when it asked to run next (undefined: over). */
  const run = async (woken = false): Promise<number | undefined> => {
    const outcome = await definition!.run!(payload, {
      attempt: 1,
      record: { payload, state } as JobRecord,
      woken,
      defer: (until: number, next?: unknown) => new JobDeferral(until, next),
      takeWake: async () => undefined,
    });
    if (!(outcome instanceof JobDeferral)) return undefined;
    state = outcome.state;
    return outcome.until;
  };
  return { run, checks, rejected };
}

describe('CheckoutConfirmation schedule', () => {
  beforeAll(() => Logger.overrideLogger(false));
  let clock = 0;
  beforeEach(() => {
    clock = 1_700_000_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
  });
  afterEach(() => jest.restoreAllMocks());

  it('checks a callback at once and after its re-check delays, moved later to keep the spacing', async () => {
    const { run, checks, rejected } = setup({
      attempts: 3,
      delayMs: 2_000,
      maxDelayMs: 10_000,
      minIntervalMs: 10_000,
    });
    const start = Date.now();
    let until = await run();
    // Due at 0, 2, 6 and 14 s: each moved to keep 10 s from the check before.
    while (until !== undefined) {
      clock = until;
      until = await run();
    }
    expect(checks.map((at) => at - start)).toEqual([0, 10_000, 20_000, 30_000]);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'NOT_CONFIRMED' })]);
  });

  it('the run of its own deferral is the scheduled check even when it comes before its time by this clock', async () => {
    const { run, checks, rejected } = setup({
      attempts: 1,
      delayMs: 60_000,
      maxDelayMs: 60_000,
      minIntervalMs: 0,
    });
    expect(await run()).toBe(Date.now() + 60_000);
    // Its deferral's run (not a wake), a minute early by this clock: the re-check, then rejected.
    expect(await run()).toBeUndefined();
    expect(checks).toHaveLength(2);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'NOT_CONFIRMED' })]);
  });

  it('copies wake it without a check before the spacing allows one, and each starts the schedule again', async () => {
    const { run, checks, rejected } = setup({
      attempts: 1,
      delayMs: 2_000,
      maxDelayMs: 2_000,
      minIntervalMs: 10_000,
    });
    const start = Date.now();
    await run();
    // A copy every 100 ms for a minute: a check every 10 s, never more.
    let until: number | undefined;
    for (let copy = 1; copy <= 600; copy++) {
      clock = start + copy * 100;
      // Its scheduled run first when one is due by now (the runner's timer).
      if (until !== undefined && until <= Date.now()) await run();
      until = await run(true);
    }
    expect(checks.map((at) => at - start)).toEqual([0, 10_000, 20_000, 30_000, 40_000, 50_000, 60_000]);
    expect(rejected).toHaveLength(0);
    // The stream stops: the last copy (at 60 s) gets its two checks, at 70 s and 80 s (due at
    // 60 s and 62 s, spaced), then the round ends.
    while (until !== undefined) {
      clock = until;
      until = await run();
    }
    expect(checks.map((at) => at - start).slice(-2)).toEqual([70_000, 80_000]);
    expect(rejected).toEqual([expect.objectContaining({ reason: 'NOT_CONFIRMED' })]);
  });

  it('a callback after the copies is confirmed by the next check the spacing allows', async () => {
    const { run, checks } = setup(
      { attempts: 3, delayMs: 2_000, maxDelayMs: 10_000, minIntervalMs: 10_000 },
      2,
    );
    const start = Date.now();
    await run();
    clock = start + 300;
    const until = await run(true); // the genuine callback, 0.3 s after a forged one
    expect(until).toBe(start + 10_000);
    clock = until!;
    await expect(run()).rejects.toThrow(); // settles: the stub settlement has no paid()
    expect(checks.map((at) => at - start)).toEqual([0, 10_000]);
  });
});

describe('CheckoutConfirmation submit', () => {
  it('a paid callback whose round ended as it came is submitted to the next round, not taken for a duplicate', async () => {
    const submitted: string[] = [];
    // The round-0 job has just settled (the round ended) when the callback is submitted to it.
    const pipeline = {
      define: () => pipeline,
      submit: async (_type: string, key: string) => {
        submitted.push(key);
        return key === 'r1:paid'
          ? { duplicate: true, record: { status: 'done' } }
          : { duplicate: false, record: {} };
      },
    } as unknown as InboundPipeline;
    const invoice = { clientReference: 'r1', amount: 12.5, status: 'pending' } as CheckoutInvoice;
    const invoices = {
      get: async () => ({ ...invoice, confirmRound: 1 }),
    } as unknown as CheckoutInvoiceStore;
    const options = { handlers: {} } as unknown as ResolvedCheckoutOptions;
    const accounts = {} as CheckoutAccountSource;
    const confirmation = new CheckoutConfirmation(
      options,
      pipeline,
      invoices,
      accounts,
      {} as CheckoutSettlement,
    );
    const callback = { Data: { ClientReference: 'r1' } } as CheckoutCallbackDto;
    await expect(confirmation.submit('paid', callback, invoice, undefined)).resolves.toBe('accepted');
    expect(submitted).toEqual(['r1:paid', 'r1:paid:1']);
  });
});
