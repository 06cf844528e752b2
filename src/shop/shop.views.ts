import { escapeHtml, inlineJson, renderLayout } from '../views/layout.js';
import { CATALOG, formatGhs } from './catalog.js';
import type { PublicOrder } from './orders.service.js';
import type { Shop, ShopSettings } from './shop.settings.js';

export interface ShopFormValues {
  phone?: string;
  name?: string;
}

/** The shop: the products, one form (the buyer's number once, a buy button per product). */
export function renderShop(
  settings: ShopSettings,
  options: { error?: string; values?: ShopFormValues; shop?: Shop } = {},
): string {
  const values = options.values ?? {};
  const shop = options.shop ?? settings.shopOf(undefined);
  const products = CATALOG.map(
    (p) => `<div class="card product" data-testid="product-${escapeHtml(p.id)}">
      <div class="swatch" style="background:${escapeHtml(p.colour)}">${escapeHtml(p.name)}</div>
      <div class="muted">${escapeHtml(p.blurb)}</div>
      <div class="price">${escapeHtml(formatGhs(p.price))}</div>
      <button type="submit" name="product" value="${escapeHtml(p.id)}" id="buy-${escapeHtml(p.id)}" data-testid="buy-${escapeHtml(p.id)}">Buy — ${escapeHtml(formatGhs(p.price))}</button>
    </div>`,
  ).join('\n');
  const body = `
<h1>Handmade goods from Ghana</h1>
<p class="muted">Pay with mobile money through Hubtel checkout. Your SMS receipt goes to the number that pays.</p>
${settings.shops.length > 1 ? `<p class="small muted" data-testid="shop-account">${escapeHtml(shop.name)} is paid into its own Hubtel account (<code>${escapeHtml(shop.account)}</code>) and sends its receipts from its own SMS sender.</p>` : ''}
${options.error ? `<div class="error" role="alert" id="error" data-testid="error">${escapeHtml(options.error)}</div>` : ''}
<form method="post" action="/orders" id="order-form">
  <input type="hidden" name="shop" value="${escapeHtml(shop.account)}">
  <div class="card row">
    <div>
      <label for="phone">Your mobile money number</label>
      <input id="phone" name="phone" data-testid="phone" inputmode="tel" autocomplete="tel" required placeholder="024 123 4567" value="${escapeHtml(values.phone ?? '')}">
    </div>
    <div>
      <label for="name">Your name (optional)</label>
      <input id="name" name="name" data-testid="name" autocomplete="name" maxlength="60" value="${escapeHtml(values.name ?? '')}">
    </div>
  </div>
  <div class="grid">${products}</div>
</form>`;
  return renderLayout({ title: 'Shop', ...layoutOf(settings, shop), body });
}

/** The top bar of a shop's pages: its name and home, and every shop's link. */
function layoutOf(settings: ShopSettings, shop: Shop) {
  return { shopName: shop.name, home: shop.path, shops: settings.shops, mode: settings.mode };
}

const STATUS_TEXT: Record<string, string> = {
  'awaiting-payment': 'Waiting for payment confirmation…',
  paid: 'Paid',
  failed: 'Payment failed',
  cancelled: 'Not paid — cancelled',
  expired: 'Not paid — expired',
  'needs-attention': 'Paid — the shop is checking your payment',
};

const RECEIPT_TEXT: Record<string, string> = {
  'not-sent': '',
  sending: 'Sending your SMS receipt…',
  sent: 'SMS receipt sent to {to}.',
  failed: 'The SMS receipt could not be sent; we will try again.',
  unknown: 'We could not confirm that the SMS receipt to {to} went out.',
};

/**
 * The order page (the checkout's return page). It follows the order as the platform's callback
 * updates it: a small script polls `/api/orders/{id}` and rewrites the status in place.
 */
export function renderOrder(
  settings: ShopSettings,
  order: PublicOrder,
  options: { cancelled?: boolean } = {},
): string {
  const shop = settings.shopOf(order.shop);
  const heading = options.cancelled
    ? 'Payment cancelled'
    : order.status === 'paid'
      ? 'Thank you for your order'
      : 'Your order';
  const body = `
<h1 data-testid="heading">${escapeHtml(heading)}</h1>
${options.cancelled ? '<p class="muted" data-testid="cancel-note">You cancelled on the payment page. Nothing was charged; the order stays unpaid.</p>' : ''}
<div class="card" data-testid="order">
  <span class="status" id="order-status" data-testid="order-status" data-status="${escapeHtml(order.status)}" role="status" aria-live="polite">${escapeHtml(STATUS_TEXT[order.status] ?? order.status)}</span>
  <p id="order-detail" data-testid="order-detail" class="muted">${escapeHtml(detailText(order))}</p>
  <p id="receipt" data-testid="receipt" class="small">${escapeHtml(receiptText(order))}</p>
  <p id="retry" data-testid="retry"${order.checkoutUrl && (order.status === 'failed' || order.failure) ? '' : ' hidden'}><a class="button" id="retry-link" href="${escapeHtml(order.checkoutUrl ?? '#')}">Try the payment again</a></p>
  <dl>
    <dt>Order</dt><dd data-testid="order-id">${escapeHtml(order.id)}</dd>
    <dt>Item</dt><dd>${escapeHtml(order.product)}</dd>
    <dt>Amount</dt><dd data-testid="order-amount">${escapeHtml(formatGhs(order.amount))}</dd>
  </dl>
</div>
<p><a href="${escapeHtml(shop.path)}" class="button secondary">Back to the shop</a></p>
<noscript><p class="small muted">This page refreshes itself while the payment is confirmed.</p></noscript>`;
  // Without scripts, a plain refresh does the same job, more coarsely.
  const head = order.settled ? '' : '<noscript><meta http-equiv="refresh" content="3"></noscript>';
  return renderLayout({
    title: heading,
    ...layoutOf(settings, shop),
    body,
    head,
    script: order.settled ? undefined : pollScript(order),
  });
}

function detailText(order: PublicOrder): string {
  switch (order.status) {
    case 'paid':
      return `${formatGhs(order.payment?.amountPaid ?? order.amount)} received by mobile money${order.payment?.channel ? ` (${order.payment.channel})` : ''}${chargesText(order)}. Your order is on its way.`;
    case 'needs-attention':
      return 'Your payment arrived but does not match the order. The shop is looking at it and will deliver or refund it.';
    case 'failed':
      return order.failure ?? 'The payment did not go through.';
    case 'cancelled':
      return 'The payment was cancelled. The order is not paid.';
    case 'expired':
      return 'No payment arrived in time. The order is not paid.';
    default:
      // Still awaiting payment after a failed attempt: say so, the retry link is shown with it.
      return (
        order.failure ?? 'We are waiting for Hubtel to confirm your payment. This page updates by itself.'
      );
  }
}

/** Gross, charges and net, as the status check verified them: ` (charges GHS 0.02, GHS 1.00 to the shop)`. */
function chargesText(order: PublicOrder): string {
  const p = order.payment;
  if (!p || p.charges === null || p.net === null) return '';
  return ` (charges ${formatGhs(p.charges)}, ${formatGhs(p.net)} to the shop)`;
}

function receiptText(order: PublicOrder): string {
  return (RECEIPT_TEXT[order.receipt.status] ?? '').replace('{to}', order.receipt.to ?? 'your number');
}

function pollScript(order: PublicOrder): string {
  return `
(function () {
  var STATUS = ${inlineJson(STATUS_TEXT)};
  var RECEIPT = ${inlineJson(RECEIPT_TEXT)};
  var url = ${inlineJson(`/api/orders/${order.id}`)};
  var started = Date.now();
  var delay = 700;
  function money(n) { return 'GHS ' + Number(n).toFixed(2); }
  function detail(o) {
    if (o.status === 'paid') return money(o.payment ? o.payment.amountPaid : o.amount) + ' received by mobile money' + (o.payment && o.payment.channel ? ' (' + o.payment.channel + ')' : '') + (o.payment && o.payment.charges !== null && o.payment.net !== null ? ' (charges ' + money(o.payment.charges) + ', ' + money(o.payment.net) + ' to the shop)' : '') + '. Your order is on its way.';
    if (o.status === 'needs-attention') return 'Your payment arrived but does not match the order. The shop is looking at it and will deliver or refund it.';
    if (o.status === 'failed') return o.failure || 'The payment did not go through.';
    if (o.status === 'cancelled') return 'The payment was cancelled. The order is not paid.';
    if (o.status === 'expired') return 'No payment arrived in time. The order is not paid.';
    return o.failure || 'We are waiting for Hubtel to confirm your payment. This page updates by itself.';
  }
  function render(o) {
    var status = document.getElementById('order-status');
    status.setAttribute('data-status', o.status);
    status.textContent = STATUS[o.status] || o.status;
    document.getElementById('order-detail').textContent = detail(o);
    document.getElementById('receipt').textContent = (RECEIPT[o.receipt.status] || '').replace('{to}', o.receipt.to || 'your number');
    var retry = document.getElementById('retry');
    if ((o.status === 'failed' || o.failure) && o.checkoutUrl) { document.getElementById('retry-link').href = o.checkoutUrl; retry.hidden = false; } else { retry.hidden = true; }
    if (o.status === 'paid') document.querySelector('[data-testid=heading]').textContent = 'Thank you for your order';
  }
  function tick() {
    fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (o) {
        if (o) { render(o); if (o.settled) return; }
        next();
      })
      .catch(next);
  }
  function next() {
    if (Date.now() - started > 15 * 60 * 1000) return; // a quarter of an hour: reload to look again
    delay = Math.min(delay * 1.3, 5000);
    setTimeout(tick, delay);
  }
  setTimeout(tick, 300);
})();`;
}

/** A page for a problem (unknown order, checkout unavailable). */
export function renderProblem(settings: ShopSettings, title: string, message: string): string {
  const body = `<h1>${escapeHtml(title)}</h1><div class="error" role="alert" data-testid="error">${escapeHtml(message)}</div><p><a href="/" class="button secondary">Back to the shop</a></p>`;
  return renderLayout({ title, ...layoutOf(settings, settings.shopOf(undefined)), body });
}
