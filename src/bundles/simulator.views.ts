import type { SandboxServiceSession } from 'nestjs-hubtel/sandbox';
import type { ShopSettings } from '../shop/shop.settings.js';
import { escapeHtml, renderLayout } from '../views/layout.js';
import type { BundleDelivery } from './bundle-deliveries.service.js';

export function renderSimulatorHome(
  settings: ShopSettings,
  options: { deliveries: BundleDelivery[]; serviceFlowUrl: string; error?: string; mobile?: string },
): string {
  const rows = options.deliveries
    .map(
      (d) =>
        `<tr><td>${escapeHtml(d.deliveredAt.slice(11, 19))}</td><td>${escapeHtml(d.bundleName)}</td><td>${escapeHtml(d.destination)}</td><td><code>${escapeHtml(d.orderId.slice(0, 12))}</code></td><td>${escapeHtml(d.reported ?? 'reporting…')}</td></tr>`,
    )
    .join('');
  const body = `
<h1>Data bundles — a programmable service</h1>
<p class="muted">This app is also a Hubtel programmable service: the Hubtel app calls <code>${escapeHtml(options.serviceFlowUrl)}</code>
to run the session, and the fulfillment URL once the customer paid. Here the sandbox plays the Hubtel app, so you can try it.</p>
${options.error ? `<div class="error" role="alert" data-testid="error">${escapeHtml(options.error)}</div>` : ''}
<div class="phone"><div class="screen">
  <p class="message">Dial the data-bundle service</p>
  <form method="post" action="/simulator/sessions">
    <label for="mobile">Your phone number</label>
    <input id="mobile" name="mobile" data-testid="mobile" inputmode="tel" required value="${escapeHtml(options.mobile ?? '0241234567')}">
    <fieldset class="channel"><legend>Dial from</legend>
      <label><input type="radio" name="channel" value="app" data-testid="channel-app" checked> the Hubtel app</label>
      <label><input type="radio" name="channel" value="ussd" data-testid="channel-ussd"> a USSD phone (MTN)</label>
    </fieldset>
    <p><button type="submit" data-testid="dial">Dial</button></p>
  </form>
</div></div>
<div class="card">
  <h2>Bundles delivered</h2>
  ${rows ? `<table data-testid="deliveries"><tr><th>Time</th><th>Bundle</th><th>To</th><th>Order</th><th>Reported to Hubtel</th></tr>${rows}</table>` : '<p class="muted">None yet.</p>'}
</div>`;
  return renderLayout({ title: 'Data bundles', shopName: settings.shopName, mode: settings.mode, body });
}

export function renderSimulatorSession(
  settings: ShopSettings,
  session: SandboxServiceSession,
  error: string | undefined,
  delivery: BundleDelivery | undefined,
): string {
  const base = `/simulator/sessions/${encodeURIComponent(session.sessionId)}`;
  const last = session.last;
  const state = session.record.state;
  let screen: string;
  let refresh = false;
  if (state === 'cart' && session.cart) {
    const total = session.cart.Qty * session.cart.Price;
    screen = `<p class="message" data-testid="message">${escapeHtml(last?.Message ?? '')}</p>
      <p><strong>${escapeHtml(session.cart.ItemName)}</strong><br>GHS ${escapeHtml(total.toFixed(2))}</p>
      <form method="post" action="${base}/pay"><button type="submit" data-testid="pay">Pay GHS ${escapeHtml(total.toFixed(2))} with mobile money</button></form>`;
  } else if (state === 'paid') {
    refresh = true;
    screen = '<p class="message" data-testid="message">Payment received. Delivering your bundle…</p>';
  } else if (state === 'fulfilled') {
    screen = `<p class="message" data-testid="message">Purchase successful.</p>
      <p class="small" data-testid="fulfilled">${escapeHtml(delivery ? `${delivery.bundleName} sent to ${delivery.destination}.` : 'Delivered.')} The service reported <code>${escapeHtml(session.order?.serviceStatus ?? '')}</code> to Hubtel.</p>
      <p><a class="button secondary" href="/simulator">Dial again</a></p>`;
  } else if (state === 'fulfillment-failed' || state === 'payment-failed') {
    screen = `<p class="message" data-testid="message">${state === 'payment-failed' ? 'Payment failed.' : 'The service could not deliver; Hubtel refunds the payment.'}</p><p><a class="button secondary" href="/simulator">Dial again</a></p>`;
  } else if (state === 'active' && last && session.channel === 'ussd') {
    screen = renderUssdScreen(session, base);
  } else if (state === 'active' && last) {
    const dataType = String(last.DataType ?? '').toLowerCase();
    const prompt = `<p class="message" data-testid="message">${escapeHtml(last.Message)}</p>`;
    if (dataType === 'select' && Array.isArray(last.Data)) {
      const options = last.Data.map(
        (o, i) =>
          `<button type="submit" class="secondary" name="input" value="${escapeHtml(o.Value)}" data-testid="option-${escapeHtml(o.Value)}">${i + 1}. ${escapeHtml(o.Display)}</button>`,
      ).join('');
      screen = `${prompt}<form method="post" action="${base}/reply" class="options">${options}</form>`;
    } else {
      screen = `${prompt}<form method="post" action="${base}/reply">
        <label for="input">${escapeHtml(last.Label ?? 'Your answer')}</label>
        <input id="input" name="input" data-testid="input" autofocus ${String(last.FieldType).toLowerCase() === 'phone' ? 'inputmode="tel"' : ''}>
        <p><button type="submit" data-testid="send">Send</button></p></form>`;
    }
  } else {
    screen = `<p class="message" data-testid="message">${escapeHtml(last?.Message || 'The session has ended.')}</p><p><a class="button secondary" href="/simulator">Dial again</a></p>`;
  }
  const body = `
<h1>Data bundles</h1>
${error ? `<div class="error" role="alert" data-testid="error">${escapeHtml(error)}</div>` : ''}
<div class="phone"><div class="screen" data-testid="screen" data-state="${escapeHtml(state)}" data-channel="${escapeHtml(session.channel)}">${screen}</div></div>
<p class="small muted">Session <code>${escapeHtml(session.sessionId)}</code> · ${session.channel === 'ussd' ? 'USSD (Operator mtn)' : 'Hubtel app'} · ${session.record.exchanges.length} call(s) to <code>/api/service-flow</code></p>`;
  return renderLayout({
    title: 'Data bundles',
    shopName: settings.shopName,
    mode: settings.mode,
    body,
    head: refresh ? '<meta http-equiv="refresh" content="1">' : '',
  });
}

/**
 * A USSD phone's screen: the answer's `Message` and nothing else (a handset never sees `Data`),
 * its size against the screen, and a box to type the answer (an option's number) in.
 */
function renderUssdScreen(session: SandboxServiceSession, base: string): string {
  const last = session.last!;
  const exchange = session.record.exchanges.at(-1);
  const size = exchange?.screen;
  const sizeLine = size
    ? `<p class="small ${size.fits ? 'muted' : 'error'}" data-testid="screen-size" data-fits="${size.fits}">${size.length}/${size.limit} characters${size.fits ? '' : ': too long for one USSD screen'}</p>`
    : '';
  const warnings = (exchange?.warnings ?? [])
    .map((w) => `<p class="small error" data-testid="ussd-warning">${escapeHtml(w)}</p>`)
    .join('');
  return `<pre class="message ussd" data-testid="message">${escapeHtml(last.Message)}</pre>${sizeLine}${warnings}
    <form method="post" action="${base}/reply">
      <label for="input">Reply</label>
      <input id="input" name="input" data-testid="input" autofocus inputmode="${String(last.DataType).toLowerCase() === 'select' ? 'numeric' : 'text'}">
      <p><button type="submit" data-testid="send">Send</button></p></form>`;
}
