import { type TransactionPaymentStatus, type TransactionStatus } from '#internal';

/** The status check's `data.status`: `Paid`, `Unpaid` or `Refunded` (other values are passed through). */
export type CheckoutPaymentStatus = TransactionPaymentStatus;

/**
 * The typed answer of `CheckoutService.getStatus` (transaction status check,
 * `GET /transactions/{posSalesId}/status?clientReference=...`), read by core's
 * `requestTransactionStatus`, which the service app's payment verification uses too.
 */
export type CheckoutTransactionStatus = TransactionStatus;
