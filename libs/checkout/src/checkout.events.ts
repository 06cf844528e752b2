import { type DeadLetterEvent, type PaymentAmounts } from 'nestjs-hubtel';

/**
 * Domain events of the CheckoutModule, handled once per invoice (`@OnCheckoutPaid()`, ...). Payloads
 * are plain JSON, recorded before handlers run: do not rely on `instanceof` after a restart.
 */
export const CheckoutEvents = Object.freeze({
  /** A payment was verified: deliver the goods. Exactly once per invoice. */
  Paid: 'hubtel.checkout.paid',
  /** The platform reported a failed payment attempt (the payer may still retry and pay). */
  Failed: 'hubtel.checkout.failed',
  /** A callback (or status answer) failed verification: never treat it as paid. */
  Rejected: 'hubtel.checkout.rejected',
  /** The reconciler gave up on an invoice that was never paid. */
  Expired: 'hubtel.checkout.expired',
  /** A handler kept failing and was given up on (payload: `CheckoutDeadLetterEvent`). */
  DeadLetter: 'hubtel.checkout.dead-letter',
  /** A verified payment that fits the invoice on neither count: `resolveAttention()` it. Once. */
  Attention: 'hubtel.checkout.attention',
} as const);

/** The recorded outcomes: job types of the module's pipeline. */
export const CHECKOUT_EVENT_JOBS = [
  CheckoutEvents.Paid,
  CheckoutEvents.Failed,
  CheckoutEvents.Expired,
  CheckoutEvents.Attention,
] as const;

export type CheckoutEventName = (typeof CheckoutEvents)[keyof typeof CheckoutEvents];

export type CheckoutEvidenceSource = 'callback' | 'status-check';

/** Who pays, as `createInvoice` was told: where a receipt goes. Personal data: mask it in logs. */
export interface CheckoutPayee {
  name?: string;
  mobileNumber?: string;
  email?: string;
}

/**
 * The platform's payment details, as far as given. On `paid` only what was verified: no callback is
 * signed, so its phone numbers are left out. Send receipts to `payee`, never to a claimed number.
 */
export interface CheckoutPaymentInfo {
  /** `mobilemoney`, `card`, ... */
  paymentType?: string;
  /** `mtn-gh`, ... (callback only). */
  channel?: string;
  /** Numbers a `failed` callback claimed (never on `paid`: unverifiable). Mask them in logs. */
  mobileMoneyNumber?: string;
  customerPhoneNumber?: string;
  salesInvoiceId?: string;
  transactionId?: string;
  /** The network's reference. */
  externalTransactionId?: string;
  charges?: number;
  amountAfterCharges?: number;
  currencyCode?: string;
}

/** What every recorded event (paid, failed, expired, attention) says of its invoice. */
export interface CheckoutInvoiceEvent {
  /** The key of exactly-once. */
  clientReference: string;
  /** The invoice's account (`default` or a name), as `{ account }` of the decorators filters. */
  account: string;
  checkoutId?: string;
  amount: number;
  description: string;
  metadata?: Record<string, unknown>;
}

/** Payload of `CheckoutEvents.Paid`. */
export interface CheckoutPaidEvent extends CheckoutInvoiceEvent {
  /** As the platform reported it (may differ within the configured tolerance). */
  amountPaid: number;
  source: CheckoutEvidenceSource;
  confirmedByStatusCheck: boolean;
  /** Verified details only: no phone number a callback claimed. */
  payment: CheckoutPaymentInfo;
  payee?: CheckoutPayee;
  paidAt: string;
  /** The verified figures and who bore the charge (absent without a status check). */
  amounts?: PaymentAmounts;
  /** Why it needed attention, when you chose to deliver anyway. */
  attention?: CheckoutAttention;
}

/** Why an invoice needs attention: a verified payment that fits it on neither count. */
export interface CheckoutAttention {
  reason: CheckoutRejectionReason;
  message: string;
  /** ISO time it was found. */
  at: string;
  amounts?: PaymentAmounts;
  payment?: CheckoutPaymentInfo;
  /** Set once resolved from code. */
  resolution?: { action: 'delivered' | 'refunded'; at: string; note?: string };
}

/** Payload of `CheckoutEvents.Attention`: then `resolveAttention(clientReference, action)`. */
export interface CheckoutAttentionEvent
  extends CheckoutInvoiceEvent, Pick<CheckoutAttention, 'reason' | 'message' | 'at' | 'amounts'> {
  payment: CheckoutPaymentInfo;
  payee?: CheckoutPayee;
}

/** Payload of `CheckoutEvents.Failed`. */
export interface CheckoutFailedEvent extends CheckoutInvoiceEvent {
  source: CheckoutEvidenceSource;
  /** The platform's code (`2001`, ...) and status text (`Failed`, `Refunded`, ...). */
  responseCode?: string;
  status: string;
  reason?: string;
  payment: CheckoutPaymentInfo;
  failedAt: string;
}

/**
 * Why a claim was not believed. `FORGOTTEN_REFERENCE`: the store lost the invoice (maybe a genuine
 * payment: `reconcile(ref, { amount })`). `WRONG_ACCOUNT`: another account's path (no event).
 */
export type CheckoutRejectionReason =
  | 'UNKNOWN_REFERENCE'
  | 'FORGOTTEN_REFERENCE'
  | 'CHECKOUT_ID_MISMATCH'
  | 'AMOUNT_MISMATCH'
  | 'CURRENCY_MISMATCH'
  | 'NOT_CONFIRMED'
  | 'WRONG_ACCOUNT';

/** Payload of `CheckoutEvents.Rejected`: nothing was paid; an alert (a forgery, a misconfiguration). */
export interface CheckoutRejectedEvent {
  reason: CheckoutRejectionReason;
  /** Safe to log: no phone numbers. */
  message: string;
  source: CheckoutEvidenceSource;
  /** As claimed. */
  clientReference: string;
  /** The invoice's account, else that of the callback's path. */
  account: string;
  checkoutId?: string;
  amountClaimed?: number;
  amountExpected?: number;
  status?: string;
  sourceAddress?: string;
  /** The callback body as validated (callback rejections only). */
  callback?: Record<string, unknown>;
  rejectedAt: string;
}

/** Payload of `CheckoutEvents.Expired`: the reconciler stopped watching an unpaid invoice. */
export interface CheckoutExpiredEvent extends CheckoutInvoiceEvent {
  /** `pending` (never heard of) or `failed` (only failed attempts were seen). */
  lastStatus: 'pending' | 'failed';
  createdAt: string;
  expiredAt: string;
}

/** Payload of `CheckoutEvents.DeadLetter`: `type` is the event, or `hubtel.checkout.confirm`. */
export type CheckoutDeadLetterEvent<P = unknown> = DeadLetterEvent<P>;
