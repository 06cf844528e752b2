import { Body, Controller, Get, Header, HttpStatus, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  HubtelLogger,
  HubtelError,
  HubtelValidationError,
  maskMsisdn,
  maskPhoneNumbers,
  tryNormalizeMsisdn,
  type ValidationIssue,
} from 'nestjs-hubtel';
import { CHECKOUT_DEFAULT_CALLBACK_PATH, CheckoutService } from 'nestjs-hubtel/checkout';
import { AppUrls } from '../platform/app-urls.service.js';
import { findProduct, type Product } from './catalog.js';
import { OrdersRateLimitGuard } from './orders.rate-limit.js';
import { OrdersService, publicOrder, type Order } from './orders.service.js';
import { ShopSettings, type Shop } from './shop.settings.js';
import { renderOrder, renderProblem, renderShop, type ShopFormValues } from './shop.views.js';

/** A 4xx/5xx answer of the shop's own endpoints: JSON for API clients, a page for browsers. */
interface Problem {
  status: number;
  code: string;
  message: string;
  issues?: ValidationIssue[];
}

const NAME_MAX = 60;

/**
 * The shop: the product page, ordering (an invoice through CheckoutService, then the payer goes to
 * the platform's payment page), the return and cancellation pages, and the order's JSON.
 *
 * `POST /orders` takes a form (browsers: answered with a 303 to the payment page) or JSON (API
 * clients: answered 201 `{orderId, checkoutUrl, orderUrl}`). Bad input is answered 400 with a
 * JSON body `{statusCode, code, message, issues}` (or the shop page with the error, for a form).
 */
@Controller()
export class ShopController {
  private readonly logger = new HubtelLogger('Shop');

  constructor(
    private readonly orders: OrdersService,
    private readonly checkout: CheckoutService,
    private readonly urls: AppUrls,
    private readonly settings: ShopSettings,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  shop(): string {
    return renderShop(this.settings);
  }

  /** Another shop of the app: the same products, paid into its own Hubtel account. */
  @Get('shops/:account')
  otherShop(@Param('account') account: string, @Res() res: Response): void {
    const shop = this.settings.shop(account);
    if (!shop || shop.path === '/') {
      sendHtml(res, 404, renderProblem(this.settings, 'Shop not found', 'There is no shop at this address.'));
      return;
    }
    sendHtml(res, 200, renderShop(this.settings, { shop }));
  }

  /** Limited (OrdersRateLimitGuard): each order is an invoice at the platform. */
  @Post('orders')
  @UseGuards(OrdersRateLimitGuard)
  async order(@Body() body: unknown, @Req() req: Request, @Res() res: Response): Promise<void> {
    const json = isJsonRequest(req);
    const input = readOrderInput(body, this.settings);
    if ('problem' in input) return this.fail(res, json, input.problem, input.values, input.shop);

    const { shop } = input;
    const order = await this.orders.create(input.product, input.phone, input.name, shop.account);
    let checkoutUrl: string;
    try {
      // The shop's own Hubtel account: its keys, its POS Sales ID, and its callback route (the
      // module's path, then the account's name), so its invoices are confirmed on its own keys.
      const invoice = await this.checkout.forAccount(shop.account).createInvoice({
        clientReference: order.id,
        totalAmount: order.amount,
        description: `${order.productName} - order ${order.id.slice(-8)}`,
        callbackUrl: this.urls.to(
          shop.path === '/'
            ? CHECKOUT_DEFAULT_CALLBACK_PATH
            : `${CHECKOUT_DEFAULT_CALLBACK_PATH}/${shop.account}`,
        ),
        returnUrl: this.urls.to(`/orders/${order.id}`),
        cancellationUrl: this.urls.to(`/orders/${order.id}/cancelled`),
        payeeMobileNumber: order.phone,
        ...(order.customerName ? { payeeName: order.customerName } : {}),
        metadata: { orderId: order.id, productId: order.productId },
      });
      checkoutUrl = invoice.checkoutUrl;
      await this.orders.checkoutStarted(order.id, invoice);
    } catch (error) {
      if (!(error instanceof HubtelError)) throw error;
      // The platform refused or did not answer: no payment page to send the payer to.
      const reason =
        error instanceof HubtelValidationError ? error.message : 'Hubtel checkout is not available right now';
      await this.orders.markFailed(order.id, `Checkout could not start: ${reason}`);
      this.logger.warn(
        `Checkout for order ${order.id} could not start: ${error.code} ${maskPhoneNumbers(error.message)}`,
      );
      return this.fail(
        res,
        json,
        {
          status: error instanceof HubtelValidationError ? HttpStatus.BAD_REQUEST : HttpStatus.BAD_GATEWAY,
          code: error instanceof HubtelValidationError ? 'INVALID_ORDER' : 'CHECKOUT_UNAVAILABLE',
          message: `${reason}. Please try again in a moment.`,
          ...(error instanceof HubtelValidationError ? { issues: error.issues } : {}),
        },
        input.values,
        shop,
      );
    }
    this.logger.log(
      `Order ${order.id} (${shop.name}): ${order.productName} for ${maskMsisdn(order.phone)}, sent to checkout`,
    );
    if (json) {
      res
        .status(HttpStatus.CREATED)
        .json({ orderId: order.id, checkoutUrl, orderUrl: this.urls.to(`/orders/${order.id}`) });
      return;
    }
    res
      .status(HttpStatus.SEE_OTHER)
      .setHeader('Location', checkoutUrl)
      .setHeader('Cache-Control', 'no-store')
      .end();
  }

  /** The return page: the order's status, following the callback as it arrives. */
  @Get('orders/:id')
  async orderPage(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const order = await this.orders.get(id);
    if (!order) return this.unknownOrder(res);
    sendHtml(res, 200, renderOrder(this.settings, this.view(order)));
  }

  /** The cancellation page: the payer cancelled on the payment page; the order stays unpaid. */
  @Get('orders/:id/cancelled')
  async cancelledPage(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const order = (await this.orders.get(id)) && (await this.orders.markCancelled(id));
    if (!order) return this.unknownOrder(res);
    // A payment that did arrive wins over the cancel link: say so rather than "cancelled".
    sendHtml(res, 200, renderOrder(this.settings, this.view(order), { cancelled: order.status !== 'paid' }));
  }

  /** The order as JSON (what the order page polls). */
  @Get('api/orders/:id')
  @Header('Cache-Control', 'no-store')
  async orderJson(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const order = await this.orders.get(id);
    if (!order) {
      res.status(404).json({ statusCode: 404, code: 'ORDER_NOT_FOUND', message: 'No such order' });
      return;
    }
    res.status(200).json(this.view(order));
  }

  private view(order: Order) {
    return publicOrder(order, maskMsisdn);
  }

  private unknownOrder(res: Response): void {
    sendHtml(
      res,
      404,
      renderProblem(
        this.settings,
        'Order not found',
        'There is no order at this address. Check the link, or start again from the shop.',
      ),
    );
  }

  private fail(res: Response, json: boolean, problem: Problem, values: ShopFormValues, shop?: Shop): void {
    if (json) {
      res.status(problem.status).json({
        statusCode: problem.status,
        code: problem.code,
        message: problem.message,
        ...(problem.issues ? { issues: problem.issues } : {}),
      });
      return;
    }
    sendHtml(
      res,
      problem.status,
      renderShop(this.settings, { error: problem.message, values, ...(shop ? { shop } : {}) }),
    );
  }
}

function sendHtml(res: Response, status: number, html: string): void {
  res
    .status(status)
    .setHeader('Content-Type', 'text/html; charset=utf-8')
    .setHeader('Cache-Control', 'no-store')
    .send(html);
}

function isJsonRequest(req: Request): boolean {
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  return type.startsWith('application/json') || !type.startsWith('application/x-www-form-urlencoded');
}

/** Checks an order form / JSON body; every problem is reported together. */
function readOrderInput(
  body: unknown,
  settings: ShopSettings,
):
  | { product: Product; phone: string; name?: string; shop: Shop; values: ShopFormValues }
  | { problem: Problem; values: ShopFormValues; shop?: Shop } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return {
      problem: {
        status: 400,
        code: 'INVALID_ORDER',
        message: 'Send a form or a JSON object with product and phone',
        issues: [{ field: '(body)', message: 'must be an object' }],
      },
      values: {},
    };
  }
  const b = body as Record<string, unknown>;
  const values: ShopFormValues = {
    ...(typeof b.phone === 'string' ? { phone: b.phone.slice(0, 40) } : {}),
    ...(typeof b.name === 'string' ? { name: b.name.slice(0, NAME_MAX) } : {}),
  };
  const issues: ValidationIssue[] = [];
  // Which shop (account) sells it: the form's hidden field; none is the default account's shop.
  const shop = settings.shop(b.shop === undefined || b.shop === '' ? undefined : String(b.shop).slice(0, 70));
  if (!shop) issues.push({ field: 'shop', message: 'must be one of the app’s shops' });
  const product = findProduct(b.product);
  if (!product) issues.push({ field: 'product', message: 'must be one of the shop’s products' });
  let phone: string | undefined;
  if (typeof b.phone !== 'string' || b.phone.trim() === '')
    issues.push({ field: 'phone', message: 'is required' });
  else {
    const normalised = tryNormalizeMsisdn(b.phone);
    if (normalised.ok) phone = normalised.msisdn;
    else
      issues.push({
        field: 'phone',
        message: 'must be a mobile number such as 024 123 4567 or 233241234567',
      });
  }
  let name: string | undefined;
  if (b.name !== undefined && b.name !== null && b.name !== '') {
    // Printable, no angle brackets or the characters the payment processor refuses.
    if (
      typeof b.name !== 'string' ||
      b.name.trim().length > NAME_MAX ||
      !/^[^\p{C}<>&*!%@]*$/u.test(b.name)
    ) {
      issues.push({
        field: 'name',
        message: `must be at most ${NAME_MAX} characters, without & * ! % @ < >`,
      });
    } else name = b.name.trim() || undefined;
  }
  if (issues.length > 0) {
    const message = issues.map((i) => `${i.field} ${i.message}`).join('; ');
    return {
      problem: { status: 400, code: 'INVALID_ORDER', message: capitalise(message), issues },
      values,
      ...(shop ? { shop } : {}),
    };
  }
  return { product: product!, phone: phone!, ...(name ? { name } : {}), shop: shop!, values };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
