import { HubtelApiError, HubtelError, describeHubtelCode, type HttpTransport } from 'nestjs-hubtel';
import type {
  CheckoutInitiateRequestBody,
  CheckoutInitiateResponseBody,
  CheckoutInvoiceCreated,
} from './dto/create-invoice.dto.js';
import type {
  CheckoutTransactionStatus,
  TransactionStatusResponseBody,
} from './dto/transaction-status.dto.js';

/**
 * The two platform calls of checkout, on the shared HttpTransport (Basic auth, time-outs, the
 * retry policy and error mapping live there). This class only adds the contract's paths, headers
 * and the reading of its `responseCode` envelopes.
 */
export class CheckoutApiClient {
  constructor(
    private readonly transport: HttpTransport,
    private readonly posSalesId: string | undefined,
  ) {}

  /**
   * `POST {checkout_url}/items/initiate`. Not idempotent (it creates an invoice): a time-out or a
   * gateway error is a HubtelUnknownOutcomeError, never retried blindly.
   */
  async initiate(body: CheckoutInitiateRequestBody): Promise<CheckoutInvoiceCreated> {
    const response = await this.transport.request<CheckoutInitiateResponseBody>({
      api: 'checkout',
      method: 'POST',
      path: '/items/initiate',
      // Accept, Content-Type and Authorization come from the transport; the contract adds this one.
      headers: { 'Cache-Control': 'no-cache' },
      body,
      idempotent: false,
      operation: 'checkout.createInvoice',
    });
    const envelope = response.data;
    const code = typeof envelope?.responseCode === 'string' ? envelope.responseCode : undefined;
    if (code !== '0000') {
      const meaning = describeHubtelCode('checkout', code);
      const text = platformMessage(envelope);
      throw new HubtelApiError(
        `checkout.createInvoice: the platform refused invoice ${body.clientReference}` +
          (code === undefined ? ' (no responseCode)' : ` (code ${code}${meaning ? `: ${meaning}` : ''})`) +
          (text ? ` — ${text}` : ''),
        { httpStatus: response.status, responseCode: code, body: envelope },
      );
    }
    const data = envelope?.data;
    if (
      !data ||
      typeof data.checkoutUrl !== 'string' ||
      typeof data.checkoutId !== 'string' ||
      data.checkoutId === ''
    ) {
      throw new HubtelApiError(
        `checkout.createInvoice: the platform answered 0000 for ${body.clientReference} without data.checkoutUrl and data.checkoutId`,
        { httpStatus: response.status, responseCode: code, body: envelope },
      );
    }
    return {
      checkoutUrl: data.checkoutUrl,
      checkoutId: data.checkoutId,
      clientReference:
        typeof data.clientReference === 'string' && data.clientReference !== ''
          ? data.clientReference
          : body.clientReference,
      checkoutDirectUrl: typeof data.checkoutDirectUrl === 'string' ? data.checkoutDirectUrl : '',
      message: typeof data.message === 'string' ? data.message : '',
    };
  }

  /**
   * `GET {status_url}/transactions/{posSalesId}/status?clientReference=...`. Idempotent: retried by
   * the transport on time-outs and gateway errors.
   */
  async status(clientReference: string): Promise<CheckoutTransactionStatus> {
    if (this.posSalesId === undefined) {
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        'checkout.getStatus needs the checkout.posSalesId option (the status check is per POS Sales ID)',
      );
    }
    const response = await this.transport.request<TransactionStatusResponseBody>({
      api: 'status',
      method: 'GET',
      path: `/transactions/${encodeURIComponent(this.posSalesId)}/status`,
      query: { clientReference },
      headers: { 'Cache-Control': 'no-cache' },
      idempotent: true,
      operation: 'checkout.getStatus',
      acceptStatus: [404],
    });
    const envelope = response.data;
    const code = typeof envelope?.responseCode === 'string' ? envelope.responseCode : undefined;
    if (response.status === 404) {
      throw new HubtelError(
        'HUBTEL_NOT_FOUND',
        `checkout.getStatus: the platform has no transaction with clientReference "${clientReference}"`,
        {
          httpStatus: 404,
          responseCode: code,
          body: envelope,
        },
      );
    }
    const data = envelope?.data;
    if ((code !== undefined && code !== '0000') || !data || typeof data.status !== 'string') {
      const meaning = describeHubtelCode('status', code);
      const text = platformMessage(envelope);
      throw new HubtelApiError(
        `checkout.getStatus: no status for ${clientReference}` +
          (code === undefined ? '' : ` (code ${code}${meaning ? `: ${meaning}` : ''})`) +
          (text ? ` — ${text}` : ''),
        { httpStatus: response.status, responseCode: code, body: envelope },
      );
    }
    const status: CheckoutTransactionStatus = {
      clientReference:
        typeof data.clientReference === 'string' && data.clientReference !== ''
          ? data.clientReference
          : clientReference,
      status: data.status,
      paid: data.status.trim().toLowerCase() === 'paid',
    };
    assign(status, 'amount', amountOf(data.amount));
    assign(status, 'charges', amountOf(data.charges));
    assign(status, 'amountAfterCharges', amountOf(data.amountAfterCharges));
    assign(status, 'currencyCode', textOf(data.currencyCode));
    assign(status, 'transactionId', textOf(data.transactionId));
    assign(status, 'externalTransactionId', textOf(data.externalTransactionId));
    assign(status, 'paymentMethod', textOf(data.paymentMethod));
    assign(status, 'date', textOf(data.date));
    if (typeof data.isFulfilled === 'boolean') status.isFulfilled = data.isFulfilled;
    assign(status, 'responseCode', code);
    assign(status, 'message', textOf(envelope?.message));
    return status;
  }
  /** `status()`, with a transaction the platform does not know (404) as undefined: nothing was paid. */
  async findStatus(clientReference: string): Promise<CheckoutTransactionStatus | undefined> {
    try {
      return await this.status(clientReference);
    } catch (error) {
      if (error instanceof HubtelError && error.code === 'HUBTEL_NOT_FOUND') return undefined;
      throw error;
    }
  }
}

function assign<K extends keyof CheckoutTransactionStatus>(
  target: CheckoutTransactionStatus,
  key: K,
  value: CheckoutTransactionStatus[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Amounts are numbers in the documented response; decimal text is read too rather than lost. */
function amountOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return undefined;
}

function platformMessage(envelope: unknown): string | undefined {
  if (!envelope || typeof envelope !== 'object') return undefined;
  const e = envelope as Record<string, unknown>;
  const data = e.data && typeof e.data === 'object' ? (e.data as Record<string, unknown>) : {};
  for (const value of [e.message, e.status, data.message]) {
    if (typeof value === 'string' && value.trim() !== '')
      return value.length > 200 ? `${value.slice(0, 200)}…` : value;
  }
  return undefined;
}
