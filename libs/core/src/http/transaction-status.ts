import { HubtelApiError } from '../errors/hubtel.errors.js';
import { dropUndefined } from '../options/hubtel-env.js';
import { ANSWER_FIELDS, withFieldNames } from './answer-fields.js';
import { refusalDetail } from './hubtel-codes.js';
import type { HttpTransport } from './http-transport.js';
import type { StatusCheckBudget } from './status-check.budget.js';

/** The status check's `data.status`: `Paid`, `Unpaid` or `Refunded` (other values are passed through). */
export type TransactionPaymentStatus = 'Paid' | 'Unpaid' | 'Refunded' | (string & {});

/** The status check's answer for one clientReference; fields left out or empty are absent. */
export interface TransactionStatus {
  clientReference: string;
  status: TransactionPaymentStatus;
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
  date?: string;
  /** The platform's `responseCode` (`0000`). */
  responseCode?: string;
  message?: string;
}

export interface TransactionStatusQuery {
  posSalesId: string;
  clientReference: string;
  /** Names the call in errors and logs (`checkout.getStatus`). */
  operation: string;
  /** Per-attempt time-out; default the transport's. */
  timeoutMs?: number;
  /** The instance's budget: a check it refuses is not sent (HubtelStatusCheckBudgetError). */
  budget?: StatusCheckBudget;
}

/**
 * `GET {status_url}/transactions/{posSalesId}/status?clientReference=…`, read once for checkout and
 * the service app: undefined on a 404 (nothing was paid); HubtelApiError for an error code or no
 * status; HubtelStatusCheckBudgetError when `budget` refused it (not sent).
 */
export async function requestTransactionStatus(
  transport: HttpTransport,
  query: TransactionStatusQuery,
): Promise<TransactionStatus | undefined> {
  const { clientReference, operation } = query;
  query.budget?.take(operation);
  const response = await transport.request<StatusEnvelope>({
    api: 'status',
    method: 'GET',
    path: `/transactions/${encodeURIComponent(query.posSalesId)}/status`,
    query: { clientReference },
    headers: { 'Cache-Control': 'no-cache' },
    idempotent: true,
    operation,
    ...(query.timeoutMs === undefined ? {} : { timeoutMs: query.timeoutMs }),
    acceptStatus: [404],
  });
  if (response.status === 404) return undefined;
  // Field names read without regard to case, as the platform's own SDKs read them.
  const envelope = withFieldNames(response.data, ANSWER_FIELDS.envelope);
  const code = typeof envelope?.responseCode === 'string' ? envelope.responseCode : undefined;
  const data = withFieldNames(envelope?.data, ANSWER_FIELDS.transactionStatus);
  if ((code !== undefined && code !== '0000') || !data || typeof data.status !== 'string')
    throw new HubtelApiError(
      `${operation}: no status for ${clientReference}${refusalDetail('status', code, envelope)}`,
      { httpStatus: response.status, responseCode: code, body: envelope },
    );
  return {
    clientReference: textOf(data.clientReference) ?? clientReference,
    status: data.status,
    paid: data.status.trim().toLowerCase() === 'paid',
    ...dropUndefined({
      amount: amountOf(data.amount),
      charges: amountOf(data.charges),
      amountAfterCharges: amountOf(data.amountAfterCharges),
      currencyCode: textOf(data.currencyCode),
      transactionId: textOf(data.transactionId),
      externalTransactionId: textOf(data.externalTransactionId),
      paymentMethod: textOf(data.paymentMethod),
      date: textOf(data.date),
      isFulfilled: typeof data.isFulfilled === 'boolean' ? data.isFulfilled : undefined,
      responseCode: code,
      message: textOf(envelope?.message),
    }),
  };
}

/** The raw answer (platform facts: `{ message, responseCode, data: {...} }`). */
interface StatusEnvelope {
  message?: unknown;
  responseCode?: unknown;
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
