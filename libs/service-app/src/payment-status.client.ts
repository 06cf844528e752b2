import { HubtelApiError, describeHubtelCode, type HttpTransport } from 'nestjs-hubtel';

/** What the transaction status check says of one SessionId's payment. */
export interface PaymentStatus {
  /** `Paid`, `Unpaid`, `Refunded` (as the platform spells it). */
  status: string;
  paid: boolean;
  /** The clientReference the answer is about (the SessionId asked for, unless the platform says otherwise). */
  clientReference: string;
  amount?: number;
  currencyCode?: string;
  transactionId?: string;
  externalTransactionId?: string;
  paymentMethod?: string;
  date?: string;
}

/**
 * `GET {status_url}/transactions/{posSalesId}/status?clientReference=<SessionId>` (platform facts:
 * programmable-services orders are looked up by SessionId), on the module's HttpTransport (Basic
 * auth with the status-check pair, time-outs, error mapping and redacted logs live there). One
 * attempt per call: the module's pipeline schedules the re-checks.
 */
export class PaymentStatusClient {
  constructor(
    private readonly transport: HttpTransport,
    private readonly posSalesId: string,
    private readonly timeoutMs: number,
  ) {}

  /** The payment of a SessionId; undefined when the platform knows no such transaction (404). */
  async find(sessionId: string): Promise<PaymentStatus | undefined> {
    const response = await this.transport.request<StatusEnvelope>({
      api: 'status',
      method: 'GET',
      path: `/transactions/${encodeURIComponent(this.posSalesId)}/status`,
      query: { clientReference: sessionId },
      headers: { 'Cache-Control': 'no-cache' },
      idempotent: true,
      operation: 'serviceApp.paymentStatus',
      timeoutMs: this.timeoutMs,
      acceptStatus: [404],
    });
    if (response.status === 404) return undefined;
    const envelope = response.data;
    const code = typeof envelope?.responseCode === 'string' ? envelope.responseCode : undefined;
    const data = envelope?.data;
    if ((code !== undefined && code !== '0000') || !data || typeof data.status !== 'string') {
      const meaning = describeHubtelCode('status', code);
      throw new HubtelApiError(
        `serviceApp.paymentStatus: no status for session ${sessionId}` +
          (code === undefined ? '' : ` (code ${code}${meaning ? `: ${meaning}` : ''})`),
        { httpStatus: response.status, responseCode: code },
      );
    }
    const status: PaymentStatus = {
      status: data.status,
      paid: data.status.trim().toLowerCase() === 'paid',
      clientReference: textOf(data.clientReference) ?? sessionId,
    };
    const amount = amountOf(data.amount);
    if (amount !== undefined) status.amount = amount;
    for (const key of [
      'currencyCode',
      'transactionId',
      'externalTransactionId',
      'paymentMethod',
      'date',
    ] as const) {
      const text = textOf(data[key]);
      if (text !== undefined) status[key] = text;
    }
    return status;
  }
}

interface StatusEnvelope {
  responseCode?: unknown;
  message?: unknown;
  data?: Record<string, unknown> | null;
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Amounts are numbers in the documented answer; decimal text is read too rather than lost. */
function amountOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}
