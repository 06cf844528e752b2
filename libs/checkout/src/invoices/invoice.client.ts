import { HubtelApiError, HubtelError } from 'nestjs-hubtel';
import {
  refusalDetail,
  requestTransactionStatus,
  type HttpTransport,
  type StatusCheckBudget,
  ANSWER_FIELDS,
  withFieldNames,
} from '#internal';
import type {
  CheckoutInitiateRequestBody,
  CheckoutInitiateResponseBody,
  CheckoutInvoiceCreated,
  CheckoutTransactionStatus,
} from './invoice.dto.js';

/** The two platform calls of checkout on the shared HttpTransport: paths, headers, envelopes. */
export class CheckoutApiClient {
  constructor(
    private readonly transport: HttpTransport,
    private readonly posSalesId: string | undefined,
    private readonly budget?: StatusCheckBudget,
    /** Whose options, in errors: `checkout[north]` for a named account. */
    private readonly scope = 'checkout',
  ) {}

  /** `POST /items/initiate`: not idempotent, so a time-out is a HubtelUnknownOutcomeError, not retried. */
  async initiate(body: CheckoutInitiateRequestBody): Promise<CheckoutInvoiceCreated> {
    const response = await this.transport.request<CheckoutInitiateResponseBody>({
      api: 'checkout',
      method: 'POST',
      path: '/items/initiate',
      headers: { 'Cache-Control': 'no-cache' },
      body,
      idempotent: false,
      operation: 'checkout.createInvoice',
    });
    // Field names read without regard to case, as the platform's SDKs do.
    const envelope = withFieldNames(response.data, ANSWER_FIELDS.envelope);
    const code = typeof envelope?.responseCode === 'string' ? envelope.responseCode : undefined;
    if (code !== '0000')
      throw new HubtelApiError(
        `checkout.createInvoice: the platform refused invoice ${body.clientReference}` +
          (code === undefined ? ' (no responseCode)' : '') +
          refusalDetail('checkout', code, envelope),
        { httpStatus: response.status, responseCode: code, body: envelope },
      );
    const data = withFieldNames(envelope?.data, ANSWER_FIELDS.checkoutCreated);
    if (
      typeof data?.checkoutUrl !== 'string' ||
      typeof data.checkoutId !== 'string' ||
      data.checkoutId === ''
    )
      throw new HubtelApiError(
        `checkout.createInvoice: the platform answered 0000 for ${body.clientReference} without data.checkoutUrl and data.checkoutId`,
        { httpStatus: response.status, responseCode: code, body: envelope },
      );
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

  /** `GET /transactions/{posSalesId}/status`: idempotent, retried by the transport. */
  async status(clientReference: string): Promise<CheckoutTransactionStatus> {
    const status = await this.findStatus(clientReference);
    if (status === undefined)
      throw new HubtelError(
        'HUBTEL_NOT_FOUND',
        `checkout.getStatus: the platform has no transaction with clientReference "${clientReference}"`,
        { httpStatus: 404 },
      );
    return status;
  }

  /**
   * `status()`, with an unknown transaction (404) as undefined: nothing was paid.
   * @throws HubtelStatusCheckBudgetError when the instance's budget refused the check (not sent).
   */
  async findStatus(clientReference: string): Promise<CheckoutTransactionStatus | undefined> {
    if (this.posSalesId === undefined)
      throw new HubtelError(
        'HUBTEL_CONFIG_INVALID',
        `checkout.getStatus needs the ${this.scope}.posSalesId option (the status check is per POS Sales ID)`,
      );
    return requestTransactionStatus(this.transport, {
      posSalesId: this.posSalesId,
      clientReference,
      operation: 'checkout.getStatus',
      ...(this.budget ? { budget: this.budget } : {}),
    });
  }
}
