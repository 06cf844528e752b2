import {
  requestTransactionStatus,
  type HttpTransport,
  type StatusCheckBudget,
  type TransactionStatus,
} from '#internal';

/** What the transaction status check says of one SessionId's payment. */
export type PaymentStatus = TransactionStatus;

/** The status check of a programmable-services order (`clientReference` is the SessionId). */
export class PaymentStatusClient {
  constructor(
    private readonly transport: HttpTransport,
    private readonly posSalesId: string,
    private readonly timeoutMs: number,
    /** The instance's status checks a minute, shared with checkout: over it, find() throws. */
    private readonly budget?: StatusCheckBudget,
  ) {}

  /** The payment of a SessionId; undefined when the platform knows no such transaction (404). */
  find(sessionId: string): Promise<PaymentStatus | undefined> {
    return requestTransactionStatus(this.transport, {
      posSalesId: this.posSalesId,
      clientReference: sessionId,
      operation: 'serviceApp.paymentStatus',
      timeoutMs: this.timeoutMs,
      ...(this.budget ? { budget: this.budget } : {}),
    });
  }
}
