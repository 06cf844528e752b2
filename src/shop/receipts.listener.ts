import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import {
  HubtelLogger,
  HubtelApiError,
  HubtelError,
  HubtelNetworkError,
  HubtelRateLimitedError,
  HubtelUnknownOutcomeError,
  maskMsisdn,
  maskPhoneNumbers,
} from 'nestjs-hubtel';
import {
  CheckoutService,
  OnCheckoutAttention,
  OnCheckoutExpired,
  OnCheckoutFailed,
  OnCheckoutPaid,
  OnCheckoutRejected,
  type CheckoutAttentionEvent,
  type CheckoutExpiredEvent,
  type CheckoutFailedEvent,
  type CheckoutPaidEvent,
  type CheckoutRejectedEvent,
} from 'nestjs-hubtel/checkout';
import { SmsService } from 'nestjs-hubtel/sms';
import { formatGhs } from './catalog.js';
import { OrdersService, type Order } from './orders.service.js';
import { ShopSettings } from './shop.settings.js';

/** How long the listener keeps trying to record a receipt's outcome through a store outage. */
const RECEIPT_RECORD_PATIENCE_MS = 2 * 60 * 1000;

/** What the order page says after a failed payment attempt. */
export const FAILED_ATTEMPT_TEXT = 'The payment did not go through. You can try again.';

/**
 * What the shop does with the checkout module's outcomes. The module runs `@OnCheckoutPaid()`
 * once per paid invoice (retrying it if it throws), whether the news came by callback or by the
 * reconciler's status check; a forged or wrong-amount callback never gets here.
 */
@Injectable()
export class ReceiptsListener {
  private readonly logger = new HubtelLogger('Shop');

  constructor(
    private readonly orders: OrdersService,
    private readonly sms: SmsService,
    private readonly settings: ShopSettings,
    private readonly checkout: CheckoutService,
  ) {}

  @OnCheckoutPaid()
  async onPaid(event: CheckoutPaidEvent): Promise<void> {
    const order = await this.orders.get(event.clientReference);
    if (!order) {
      // Paid for an order the store does not know (in memory mode: the app restarted since).
      this.logger.error(
        `Payment verified for unknown order ${event.clientReference} (${formatGhs(event.amountPaid)}): settle it by hand`,
      );
      return;
    }
    // Who paid is what the shop recorded for the order (and gave the invoice as its payee), never
    // a number from a callback: callbacks are unsigned, and copies carrying someone else's number
    // can come around a genuine payment. The module keeps such numbers off paid events anyway.
    const payer = event.payee?.mobileNumber ?? order.phone;
    await this.orders.markPaid(order.id, {
      amountPaid: event.amountPaid,
      // The verified figures: what the payer paid, the platform's charge, what reaches the shop.
      ...(event.amounts
        ? {
            charges: event.amounts.charges,
            net: event.amounts.net,
            ...(event.amounts.chargesBorneBy ? { chargesBorneBy: event.amounts.chargesBorneBy } : {}),
          }
        : {}),
      source: event.source,
      confirmedByStatusCheck: event.confirmedByStatusCheck,
      ...(event.payment.channel ? { channel: event.payment.channel } : {}),
      payer,
    });
    this.logger.log(`Order ${order.id} paid (${formatGhs(event.amountPaid)}, by ${event.source})`);

    // A retry of this handler (or another replica) must not text the customer twice: only a
    // receipt that surely was not sent is sent (again), by whoever claims it first.
    const to = payer;
    if (!(await this.orders.claimReceipt(order.id, to))) {
      // Claimed by an earlier run, which is over (this one runs after it threw, or after its process
      // died): a receipt it left 'sending' lost its outcome. The SMS may have gone out, and the SMS
      // API finds a message only by the id its lost answer carried: 'unknown' now, never resent.
      if (await this.orders.settleLostReceipt(order.id))
        this.logger.warn(
          `SMS receipt for order ${order.id} to ${maskMsisdn(to)}: the run sending it ended before recording its outcome (a restart?); it may have gone out, not resent`,
        );
      return;
    }
    // The shop's own SMS account and sender: each shop texts under its own name.
    const shop = this.settings.shopOf(order.shop);
    let sent: { messageId: string };
    try {
      sent = await this.sms.forAccount(shop.account).send({
        to,
        content: `${shop.name}: we received ${formatGhs(event.amountPaid)} for order ${order.id} (${order.productName}). Thank you!`,
      });
    } catch (error) {
      // An error's text may quote the number it was sending to: it goes to logs masked.
      const message = maskPhoneNumbers(error instanceof Error ? error.message : String(error));
      if (error instanceof HubtelUnknownOutcomeError) {
        // It may have gone out: sending again could text the customer twice. Leave it to a person.
        await this.recordReceipt(order.id, { status: 'unknown', to, error: message });
        this.logger.warn(
          `SMS receipt for order ${order.id} to ${maskMsisdn(to)}: outcome unknown, not resent (${message})`,
        );
        return;
      }
      await this.recordReceipt(order.id, { status: 'failed', to, error: message });
      if (isTransient(error)) {
        // Thrown: the checkout module retries this handler with backoff (the order stays paid).
        this.logger.warn(`SMS receipt for order ${order.id} failed, will retry: ${message}`);
        throw error;
      }
      this.logger.error(`SMS receipt for order ${order.id} to ${maskMsisdn(to)} failed: ${message}`);
      return;
    }
    // Outside the try: a store error here is no failed send (the SMS went out), never resent.
    await this.recordReceipt(order.id, { status: 'sent', to, messageId: sent.messageId });
  }

  /**
   * Writes a receipt's outcome, trying again through a store outage (a stalled Redis times each
   * write out) for RECEIPT_RECORD_PATIENCE_MS: only this run knows the outcome, and a retried
   * handler finds the receipt claimed and sends nothing. Past that, the handler throws: its next
   * run settles the receipt as unknown (settleLostReceipt), so the receipt converges either way.
   */
  private async recordReceipt(id: string, receipt: Order['receipt']): Promise<void> {
    const deadline = Date.now() + RECEIPT_RECORD_PATIENCE_MS;
    for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        await this.orders.setReceipt(id, receipt);
        return;
      } catch (error) {
        if (Date.now() + delay > deadline) throw error;
        this.logger.warn(
          `Recording the SMS receipt of order ${id} (${receipt.status}) failed, trying again: ${maskPhoneNumbers(error instanceof Error ? error.message : String(error))}`,
        );
        await sleep(delay);
      }
    }
  }

  @OnCheckoutFailed()
  async onFailed(event: CheckoutFailedEvent): Promise<void> {
    // An attempt failed, not the order: the payer can still pay it, and a later payment wins
    // (markPaid). The shop's own words only: the callback's Description (event.reason) is text
    // from whoever sent the callback, and a forged one could tell the buyer anything.
    await this.orders.noteFailedAttempt(event.clientReference, FAILED_ATTEMPT_TEXT);
  }

  /**
   * Money arrived that matches the order on neither count (amount, currency): the module keeps the
   * invoice `attention` and never delivers it by itself. The shop's policy, in code: a payment
   * in cedis that brought the shop at least the price (an overpayment) is delivered anyway; any
   * other waits for a person, who resolves it with `checkout.resolveAttention(orderId, 'deliver' |
   * 'refund')` (an invoice's reference is unique across the shops' accounts).
   */
  @OnCheckoutAttention()
  async onAttention(event: CheckoutAttentionEvent): Promise<void> {
    if (event.reason === 'AMOUNT_MISMATCH' && event.amounts && event.amounts.net >= event.amount) {
      await this.checkout.resolveAttention(event.clientReference, 'deliver', 'paid more than the price');
      return;
    }
    await this.orders.markNeedsAttention(event.clientReference, event.message);
    this.logger.error(
      `Order ${event.clientReference} was paid but needs attention (${event.reason}): ${maskPhoneNumbers(event.message)}. ` +
        `Deliver or refund it: resolveAttention('${event.clientReference}', 'deliver' | 'refund')`,
    );
  }

  @OnCheckoutExpired()
  async onExpired(event: CheckoutExpiredEvent): Promise<void> {
    await this.orders.markExpired(event.clientReference);
  }

  @OnCheckoutRejected()
  onRejected(event: CheckoutRejectedEvent): void {
    // Nothing was paid: a forgery, a tampered amount or a misconfiguration. Alert, change nothing.
    this.logger.warn(
      `Rejected a ${event.source} for ${event.clientReference}: ${event.reason} — ${maskPhoneNumbers(event.message)}`,
    );
  }
}

/** Failures that may heal by themselves, worth retrying the handler for. */
function isTransient(error: unknown): boolean {
  if (error instanceof HubtelNetworkError || error instanceof HubtelRateLimitedError) return true;
  if (error instanceof HubtelApiError) return (error.httpStatus ?? 0) >= 500;
  return error instanceof HubtelError && error.code === 'HUBTEL_TIMEOUT';
}
