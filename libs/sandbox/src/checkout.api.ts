import { HubtelError } from 'nestjs-hubtel';
import { owned } from './sandbox.accounts.js';
import { apiErrorReply, type FieldError } from './sandbox.errors.js';
import { hexId, htmlReply, isHttpUrl, isoNow, platformMsisdn } from './sandbox.http.js';
import { renderPayPage } from './checkout.pay-page.js';
import { cancelInvoice, invoiceStatusData, orderStatusData, payInvoice } from './checkout.payments.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxInvoice } from './sandbox.types.js';
import type { SandboxReply, SandboxRequestContext } from './sandbox.route-types.js';

// Online checkout, the hosted payment page and the status check, on the same invoice records.

const URL_FIELDS = ['callbackUrl', 'returnUrl', 'cancellationUrl'] as const;
const OPTIONAL_STRINGS = ['PayeeName', 'PayeeMobileNumber', 'PayeeEmail'] as const;

export function registerCheckoutApi(router: SandboxRouter, state: SandboxState): void {
  const o = state.options;
  const authorized = (ctx: SandboxRequestContext) =>
    state.accounts.authenticate(ctx.req.headers.authorization, 'api');
  const wrongKeys = (api: 'checkout' | 'status') =>
    apiErrorReply(api, 401, {
      responseCode: '4101',
      message: 'Wrong keys: the API credentials are not valid',
    });
  const found = (data: unknown): SandboxReply => ({
    status: 200,
    json: { message: 'Successful', responseCode: '0000', data },
  });

  router.add('POST', '/items/initiate', 'checkout', async (ctx) => {
    const owner = authorized(ctx);
    if (!owner) return wrongKeys('checkout');
    const b = await ctx.jsonObject();
    const errors: FieldError[] = [];
    if (typeof b.totalAmount !== 'number' || !Number.isFinite(b.totalAmount))
      errors.push({ field: 'totalAmount', message: 'totalAmount is required and must be a number' });
    else if (b.totalAmount <= 0)
      errors.push({ field: 'totalAmount', message: 'totalAmount must be greater than 0' });
    if (typeof b.description !== 'string' || b.description.trim() === '')
      errors.push({ field: 'description', message: 'description is required' });
    for (const field of URL_FIELDS)
      if (!isHttpUrl(b[field]))
        errors.push({ field, message: `${field} is required and must be an absolute http(s) URL` });
    const ref = b.clientReference;
    if (typeof ref !== 'string' || ref.trim() === '')
      errors.push({ field: 'clientReference', message: 'clientReference is required' });
    else if (ref.length > 32)
      errors.push({ field: 'clientReference', message: 'clientReference must be at most 32 characters' });
    else if (state.invoices.has(`ref:${ref}`))
      errors.push({ field: 'clientReference', message: 'clientReference has already been used' });
    for (const field of OPTIONAL_STRINGS)
      if (b[field] !== undefined && b[field] !== null && typeof b[field] !== 'string')
        errors.push({ field, message: `${field} must be a string` });
    const payeePhone = b.PayeeMobileNumber;
    if (typeof payeePhone === 'string' && payeePhone !== '' && !platformMsisdn(payeePhone))
      errors.push({ field: 'PayeeMobileNumber', message: 'PayeeMobileNumber is not a valid phone number' });
    if (typeof b.PayeeEmail === 'string' && b.PayeeEmail !== '' && !/^[^\s@]+@[^\s@]+$/.test(b.PayeeEmail))
      errors.push({ field: 'PayeeEmail', message: 'PayeeEmail is not a valid e-mail address' });
    const account = b.merchantAccountNumber ?? undefined;
    if (account !== undefined && typeof account !== 'string' && typeof account !== 'number')
      errors.push({ field: 'merchantAccountNumber', message: 'merchantAccountNumber must be a string' });
    if (errors.length > 0) return apiErrorReply('checkout', 400, { message: 'Validation error', errors });
    if (account !== undefined && account !== '' && String(account) !== owner.posSalesId)
      return apiErrorReply('checkout', 403, {
        responseCode: '4101',
        message: 'The merchant account number (POS Sales ID) does not belong to these API keys',
      });
    const amount = b.totalAmount as number;
    if (o.checkout.minAmount !== undefined && amount < o.checkout.minAmount)
      return apiErrorReply('checkout', 400, {
        responseCode: '4070',
        message: `The amount is below the minimum of ${o.checkout.minAmount}`,
        errors: [{ field: 'totalAmount', message: `must be at least ${o.checkout.minAmount}` }],
      });

    const checkoutId = hexId();
    const now = isoNow();
    const checkoutUrl = `${state.baseUrl}/pay/${checkoutId}`;
    const invoice: SandboxInvoice = {
      checkoutId,
      account: owner.name,
      clientReference: ref as string,
      totalAmount: amount,
      description: b.description as string,
      callbackUrl: b.callbackUrl as string,
      returnUrl: b.returnUrl as string,
      cancellationUrl: b.cancellationUrl as string,
      payeeName: (b.PayeeName as string | undefined) || null,
      payeeMobileNumber: (b.PayeeMobileNumber as string | undefined) || null,
      payeeEmail: (b.PayeeEmail as string | undefined) || null,
      merchantAccountNumber: account === undefined || account === '' ? null : String(account),
      checkoutUrl,
      checkoutDirectUrl: `${checkoutUrl}/direct`,
      state: 'pending',
      createdAt: now,
      updatedAt: now,
      salesInvoiceId: null,
      transactionId: null,
      externalTransactionId: null,
      customerPhoneNumber: null,
      channel: null,
      paidAt: null,
      charges: 0,
      amountPaid: 0,
      amountAfterCharges: 0,
      chargeBearer: null,
      currency: 'GHS',
      refunded: false,
      attempts: [],
      deliveryIds: [],
      request: b,
    };
    state.invoices.push(invoice, [checkoutId, `ref:${invoice.clientReference}`]);
    state.emit('invoice', invoice);
    return {
      status: 200,
      json: {
        responseCode: '0000',
        status: 'Success',
        data: {
          checkoutUrl: invoice.checkoutUrl,
          checkoutId,
          clientReference: invoice.clientReference,
          checkoutDirectUrl: invoice.checkoutDirectUrl,
          message: '',
        },
      },
    };
  });

  const page = (
    invoice: SandboxInvoice,
    status: number,
    extra: { direct?: boolean; error?: string; phone?: string } = {},
  ): SandboxReply =>
    // No scripts, no external anything: the page is plain forms.
    htmlReply(
      renderPayPage(invoice, {
        merchantName: state.accounts.get(invoice.account)?.merchantName ?? o.checkout.merchantName,
        defaultPhone: o.checkout.defaultPhone,
        warnSpecialCharacters: o.checkout.rejectSpecialCharacters && /[&*!%@]/.test(invoice.description),
        ...extra,
      }),
      status,
    );

  const invoiceOr404 = (checkoutId: string): SandboxInvoice | SandboxReply =>
    state.invoices.get(checkoutId) ??
    apiErrorReply('pay-page', 404, {
      message: 'No checkout with this id (unknown, or expired from the sandbox).',
    });

  const redirect = (location: string): SandboxReply => ({
    status: 303,
    headers: { Location: location, 'Cache-Control': 'no-store' },
  });

  for (const direct of [false, true]) {
    router.add('GET', `/pay/:checkoutId${direct ? '/direct' : ''}`, 'pay-page', (ctx) => {
      const invoice = invoiceOr404(ctx.params.checkoutId!);
      return 'checkoutId' in invoice ? page(invoice, 200, direct ? { direct } : {}) : invoice;
    });
  }

  for (const action of ['momo', 'fail', 'cancel'] as const) {
    router.add('POST', `/pay/:checkoutId/${action}`, 'pay-page', async (ctx) => {
      const invoice = invoiceOr404(ctx.params.checkoutId!);
      if (!('checkoutId' in invoice)) return invoice;
      const form = await ctx.form();
      if (invoice.state === 'paid' || invoice.state === 'cancelled') return page(invoice, 409);
      if (action === 'cancel') {
        cancelInvoice(state, invoice);
        return redirect(invoice.cancellationUrl);
      }
      const phone = form.get('phone') ?? undefined;
      const channel = form.get('channel') || undefined;
      try {
        await payInvoice(state, invoice, { outcome: action === 'momo' ? 'paid' : 'failed', phone, channel });
      } catch (err) {
        if (err instanceof HubtelError) return page(invoice, 400, { error: err.message, phone });
        throw err;
      }
      return redirect(invoice.returnUrl);
    });
  }

  router.add('GET', '/transactions/:posSalesId/status', 'status', (ctx) => {
    const owner = authorized(ctx);
    if (!owner) return wrongKeys('status');
    const q = ctx.query;
    if (ctx.params.posSalesId !== owner.posSalesId) {
      // Programmable-services orders (SessionId as clientReference) answer 4105, as the platform does.
      const ref = q.get('clientReference');
      const service = ref !== null && !state.invoices.has(`ref:${ref}`) && state.sessions.has(ref);
      return apiErrorReply('status', 403, {
        responseCode: service ? '4105' : '4101',
        message: service
          ? 'These API keys do not own the POS Sales ID of this programmable service'
          : 'The POS Sales ID does not belong to these API keys',
      });
    }
    const clientReference = q.get('clientReference');
    const hubtelTransactionId = q.get('hubtelTransactionId');
    const networkTransactionId = q.get('networkTransactionId');
    if (!clientReference && !hubtelTransactionId && !networkTransactionId)
      return apiErrorReply('status', 400, {
        message: 'One of clientReference, hubtelTransactionId or networkTransactionId is required',
        errors: [
          {
            field: 'clientReference',
            message: 'is required (or hubtelTransactionId, or networkTransactionId)',
          },
        ],
      });
    const key = clientReference
      ? `ref:${clientReference}`
      : hubtelTransactionId
        ? `tx:${hubtelTransactionId}`
        : `ext:${networkTransactionId}`;
    const invoice = owned(state.invoices.get(key), owner);
    if (invoice) return found(invoiceStatusData(invoice));
    // Programmable-services orders are looked up by SessionId as clientReference (platform facts).
    const session = owned(state.sessions.get(clientReference || key), owner);
    // An order the platform has not recorded yet is unknown to the status check, as a forged one is.
    if (session?.order?.recorded) return found(orderStatusData(session, session.order));
    return apiErrorReply('status', 404, { message: 'Transaction not found' });
  });
}
