/** The status check's `data.status`: `Paid`, `Unpaid` or `Refunded` (other values are passed through). */
export type CheckoutPaymentStatus = 'Paid' | 'Unpaid' | 'Refunded' | (string & {});

/**
 * The typed answer of `CheckoutService.getStatus` (transaction status check,
 * `GET /transactions/{posSalesId}/status?clientReference=...`).
 */
export interface CheckoutTransactionStatus {
  clientReference: string;
  /** As the platform wrote it. */
  status: CheckoutPaymentStatus;
  /** True only for `Paid` (compared case-insensitively). */
  paid: boolean;
  amount?: number;
  charges?: number;
  amountAfterCharges?: number;
  currencyCode?: string;
  transactionId?: string;
  externalTransactionId?: string;
  paymentMethod?: string;
  isFulfilled?: boolean;
  /** The platform's `date` (as given). */
  date?: string;
  /** The platform's `responseCode` (`0000`). */
  responseCode?: string;
  message?: string;
}

/** The raw response of the status check. */
export interface TransactionStatusResponseBody {
  message?: string;
  responseCode?: string;
  data?: {
    date?: string;
    status?: string;
    transactionId?: string;
    externalTransactionId?: string;
    paymentMethod?: string;
    clientReference?: string;
    currencyCode?: string;
    amount?: number | string;
    charges?: number | string;
    amountAfterCharges?: number | string;
    isFulfilled?: boolean;
  } | null;
}
