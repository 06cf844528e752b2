// What `hubtel-trigger` sends: each kind's body, reading (or first marking paid) a sandbox's invoice.
import { HubtelApiError, HubtelError, isUssdRequest, maskPhoneNumbers } from '#light/core';
import { hexId, round2 } from '#light/sandbox';
import type { SandboxInvoice } from 'nestjs-hubtel/sandbox';
import {
  buildCheckoutCallback,
  buildFulfillmentCallback,
  buildFulfillmentRequest,
  buildServiceFlowRequest,
} from '../testing.builders.js';
import { TESTING_PATHS } from '../testing.constants.js';
import { callSandbox, markServicePaidInSandbox, sandboxRefused } from './cli.support.js';
import type { TriggerOptions } from './trigger.args.js';

async function invoiceFromSandbox(
  sandboxUrl: string,
  reference: string,
  timeoutMs: number,
): Promise<SandboxInvoice> {
  const answer = await callSandbox(sandboxUrl, invoicePath(reference), timeoutMs);
  if (answer.status === 404) throw noInvoice(sandboxUrl, reference);
  if (!answer.ok) throw sandboxRefused(`did not return invoice "${reference}"`, sandboxUrl, answer);
  return answer.body as SandboxInvoice;
}

const invoicePath = (reference: string) => `/_sandbox/invoices/${encodeURIComponent(reference)}`;
const noInvoice = (sandboxUrl: string, reference: string) =>
  new HubtelError('HUBTEL_NOT_FOUND', `The sandbox at ${sandboxUrl} has no invoice "${reference}"`);

export type MarkedPaid = 'marked' | 'already-paid';

/** Marks the invoice paid without its callback; one already paid is fine (a second run). */
async function markPaidInSandbox(
  sandboxUrl: string,
  reference: string,
  payer: Pick<TriggerOptions, 'phone' | 'channel' | 'amount' | 'chargeBearer' | 'currency'>,
  timeoutMs: number,
): Promise<{ invoice: SandboxInvoice; markedPaid: MarkedPaid }> {
  const payment = { outcome: 'paid', deliver: false, ...payer };
  const answer = await callSandbox(sandboxUrl, `${invoicePath(reference)}/pay`, timeoutMs, payment);
  const invoice = (answer.body as { invoice?: SandboxInvoice } | undefined)?.invoice;
  if (answer.ok && invoice) return { invoice, markedPaid: 'marked' };
  if (answer.status === 404) throw noInvoice(sandboxUrl, reference);
  if (answer.status !== 409)
    throw sandboxRefused(`refused to mark invoice "${reference}" paid`, sandboxUrl, answer);
  const current = await invoiceFromSandbox(sandboxUrl, reference, timeoutMs);
  if (current.state === 'paid') return { invoice: current, markedPaid: 'already-paid' };
  throw new HubtelApiError(
    `The sandbox at ${sandboxUrl} cannot mark invoice "${reference}" paid: it is ${current.state}`,
  );
}

/** Builds the body a trigger sends (reads the sandbox's invoice when told to). */
export async function buildTriggerBody(
  options: TriggerOptions,
): Promise<{ body: unknown; path: string; summary: string; markedPaid?: MarkedPaid }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  if (options.kind === 'service-flow') {
    const flow = options.serviceFlow!;
    // The channel played is the channel the service must see: Platform USSD for a non-telco operator.
    const platform =
      flow.channel === 'ussd' && !isUssdRequest({ Operator: flow.operator }) ? { Platform: 'USSD' } : {};
    const body = buildServiceFlowRequest({
      type: flow.type,
      message: flow.message ?? '',
      sessionId: options.sessionId,
      operator: flow.operator,
      mobile: flow.mobile,
      serviceCode: flow.serviceCode,
      extraFields: platform,
    });
    return {
      body,
      path: TESTING_PATHS.serviceFlow,
      summary: `service-flow ${body.Type} of session ${body.SessionId} from ${maskPhoneNumbers(body.Mobile)} (${body.Operator}, ${flow.channel === 'ussd' ? 'USSD' : 'app'})`,
    };
  }
  if (options.kind === 'fulfillment' || options.kind === 'fulfillment-forged') {
    const body = buildFulfillmentRequest({ sessionId: options.sessionId!, orderId: options.orderId });
    let markedPaid: MarkedPaid | undefined;
    // A dry run sends nothing, to the app or to the sandbox.
    if (options.markPaid && !options.dryRun) {
      // Its errors tell an unreachable sandbox (exit 3) from a refusal with the sandbox's reason (1).
      const { amount, chargeBearer, currency } = options;
      const payment = { amount, orderId: body.OrderId, chargeBearer, currency };
      await markServicePaidInSandbox(options.sandboxUrl!, body.SessionId, payment, timeoutMs);
      markedPaid = 'marked';
    }
    const forged = options.kind === 'fulfillment-forged';
    return {
      body,
      path: TESTING_PATHS.fulfillment,
      summary: `${forged ? 'forged (unpaid) ' : ''}fulfillment request for order ${body.OrderId} of session ${body.SessionId}`,
      ...(markedPaid ? { markedPaid } : {}),
    };
  }
  if (options.kind === 'fulfillment-callback') {
    const body = buildFulfillmentCallback({
      sessionId: options.sessionId!,
      orderId: options.orderId!,
      serviceStatus: options.serviceStatus,
    });
    return {
      body,
      path: TESTING_PATHS.fulfillmentCallback,
      summary: `fulfillment callback (${body.ServiceStatus}) for order ${body.OrderId}`,
    };
  }
  const forgingUnknown = options.kind === 'checkout-forged' && options.forge === 'unknown-reference';
  let invoice: SandboxInvoice | undefined;
  let markedPaid: MarkedPaid | undefined;
  const { phone, channel, chargeBearer, currency } = options;
  if (options.sandboxUrl && !forgingUnknown) {
    const ref = options.reference!;
    // A dry run sends nothing, to the app or to the sandbox: it only reads the invoice.
    if (options.markPaid && !options.dryRun) {
      // The price paid (an underpayment); a forgery's --amount is only what its callback claims.
      const amount = options.kind === 'checkout' ? options.amount : undefined;
      const payer = { phone, channel, amount, chargeBearer, currency };
      ({ invoice, markedPaid } = await markPaidInSandbox(options.sandboxUrl, ref, payer, timeoutMs));
    } else invoice = await invoiceFromSandbox(options.sandboxUrl, ref, timeoutMs);
  }
  // What the payer paid, as the platform's callback says: with a payer-borne charge (or another
  // amount --mark-paid recorded), not the invoice's total.
  const realAmount = (invoice?.amountPaid || invoice?.totalAmount) ?? options.amount;
  const given = { invoice, clientReference: options.reference, phone, channel };
  let body;
  let what: string;
  if (options.kind === 'checkout-forged') {
    if (options.forge === 'unknown-reference') {
      const clientReference = `forged-${hexId().slice(0, 16)}`;
      body = buildCheckoutCallback({ ...given, clientReference, amount: options.amount ?? 1 });
      what = `forged callback: unknown reference ${body.Data.ClientReference}`;
    } else if (options.forge === 'wrong-amount') {
      const claimed =
        options.amount ?? (realAmount! >= 0.02 ? round2(realAmount! / 2) : round2(realAmount! + 1));
      body = buildCheckoutCallback({ ...given, checkoutId: options.checkoutId, amount: claimed });
      what = `forged callback: ${options.reference} claims GHS ${claimed.toFixed(2)}${invoice ? ` (invoiced GHS ${invoice.totalAmount.toFixed(2)})` : ''}`;
    } else {
      body = buildCheckoutCallback({ ...given, amount: realAmount, checkoutId: hexId() });
      what = `forged callback: ${options.reference} with checkout id ${body.Data.CheckoutId}`;
    }
  } else {
    const { checkoutId, amount, outcome } = options;
    body = buildCheckoutCallback({ ...given, checkoutId, amount, outcome });
    what = `checkout callback (${options.outcome}) for ${body.Data.ClientReference}: GHS ${body.Data.Amount.toFixed(2)}, checkout ${body.Data.CheckoutId}`;
  }
  return { body, path: TESTING_PATHS.checkoutCallback, summary: what, markedPaid };
}
