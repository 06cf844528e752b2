import { MOBILE_MONEY_CHANNELS, escapeHtml, ghanaNetwork, platformMsisdn } from './sandbox.http.js';
import type { SandboxInvoice } from './sandbox.types.js';

// The hosted payment page (`checkoutUrl`): one self-contained document, no scripts, no external assets
// (offline, under a strict CSP). Its `id`/`data-testid` hooks are stable for browser tests.

export interface PayPageOptions {
  merchantName: string;
  defaultPhone: string;
  /** The `checkoutDirectUrl` variant: the same page without the header, for embedding. */
  direct?: boolean;
  error?: string;
  /** Payer number to pre-fill (after an error, what they typed). */
  phone?: string;
  warnSpecialCharacters?: boolean;
}

const STATE_TEXT: Record<SandboxInvoice['state'], string> = {
  pending: 'Awaiting payment',
  failed: 'Last attempt failed — you can try again',
  paid: 'Paid',
  cancelled: 'Cancelled',
};

export function renderPayPage(invoice: SandboxInvoice, options: PayPageOptions): string {
  const base = `/pay/${encodeURIComponent(invoice.checkoutId)}`;
  const phone = options.phone ?? invoice.payeeMobileNumber ?? options.defaultPhone;
  const msisdn = platformMsisdn(phone);
  const defaultChannel = msisdn ? ghanaNetwork(msisdn).channel : 'mtn-gh';
  const open = invoice.state === 'pending' || invoice.state === 'failed';
  const amount = `GHS ${invoice.totalAmount.toFixed(2)}`;

  const channelOptions = MOBILE_MONEY_CHANNELS.map(
    (c) =>
      `<option value="${c.channel}"${c.channel === defaultChannel ? ' selected' : ''}>${escapeHtml(c.label)}</option>`,
  ).join('');

  const actions = open
    ? `<form method="post" action="${base}/momo" class="card">
    <h2>Pay with mobile money</h2>
    <label for="momo-number">Mobile money number</label>
    <input id="momo-number" data-testid="momo-number" name="phone" inputmode="tel" autocomplete="tel" required value="${escapeHtml(phone)}">
    <label for="momo-channel">Network</label>
    <select id="momo-channel" data-testid="momo-channel" name="channel">${channelOptions}</select>
    <button id="pay-momo" data-testid="pay-momo" type="submit" class="primary">Pay ${escapeHtml(amount)}</button>
  </form>
  <div class="row">
    <form method="post" action="${base}/fail"><button id="pay-fail" data-testid="pay-fail" type="submit">Simulate a failed payment (2001)</button></form>
    <form method="post" action="${base}/cancel"><button id="cancel" data-testid="cancel" type="submit">Cancel</button></form>
  </div>`
    : `<p class="card">This invoice is ${escapeHtml(invoice.state)}.
    <a id="return-link" data-testid="return-link" href="${escapeHtml(invoice.state === 'paid' ? invoice.returnUrl : invoice.cancellationUrl)}">Back to ${escapeHtml(options.merchantName)}</a></p>`;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pay ${escapeHtml(amount)} to ${escapeHtml(options.merchantName)} — Hubtel sandbox</title>
<style>
  :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  body { margin: 0; background: #f3f5f8; color: #1b2430; }
  .banner { background: #fff3cd; color: #6b4e00; text-align: center; padding: .4rem; font-size: .85rem; }
  main { max-width: 28rem; margin: 1.5rem auto; padding: 0 1rem; }
  header h1 { font-size: 1.1rem; margin: 0 0 .25rem; }
  .amount { font-size: 2rem; font-weight: 700; margin: .25rem 0; }
  .muted { color: #5b6675; font-size: .9rem; }
  .card { background: #fff; border-radius: .75rem; padding: 1rem; box-shadow: 0 1px 3px rgba(0,0,0,.08); margin: 1rem 0; }
  label { display: block; font-size: .85rem; margin: .75rem 0 .25rem; }
  input, select { width: 100%; box-sizing: border-box; padding: .6rem; font-size: 1rem; border: 1px solid #c8d0da; border-radius: .5rem; }
  button { font-size: 1rem; padding: .6rem 1rem; border-radius: .5rem; border: 1px solid #c8d0da; background: #fff; cursor: pointer; }
  button.primary { width: 100%; margin-top: 1rem; background: #0a7c4a; border-color: #0a7c4a; color: #fff; font-weight: 600; }
  .row { display: flex; gap: .5rem; justify-content: space-between; flex-wrap: wrap; }
  .status { display: inline-block; padding: .15rem .5rem; border-radius: 1rem; background: #e7ecf2; font-size: .8rem; }
  .error, .warn { border-radius: .5rem; padding: .6rem; margin: .75rem 0; }
  .error { background: #fde8e8; color: #8a1c1c; }
  .warn { background: #fff3cd; color: #6b4e00; }
  dl { display: grid; grid-template-columns: auto 1fr; gap: .25rem .75rem; font-size: .85rem; margin: .75rem 0 0; }
  dt { color: #5b6675; } dd { margin: 0; word-break: break-all; }
</style>
</head>
<body>
${options.direct ? '' : '<div class="banner">Hubtel sandbox — no real money moves</div>'}
<main>
  <header>
    <h1 id="merchant-name" data-testid="merchant-name">${escapeHtml(options.merchantName)}</h1>
    <div class="amount" id="invoice-amount" data-testid="invoice-amount">${escapeHtml(amount)}</div>
    <div id="invoice-description" data-testid="invoice-description">${escapeHtml(invoice.description)}</div>
    <p><span class="status" id="invoice-status" data-testid="invoice-status" data-state="${invoice.state}">${escapeHtml(STATE_TEXT[invoice.state])}</span></p>
    <dl>
      <dt>Reference</dt><dd data-testid="client-reference">${escapeHtml(invoice.clientReference)}</dd>
      <dt>Checkout id</dt><dd data-testid="checkout-id">${escapeHtml(invoice.checkoutId)}</dd>
      ${invoice.payeeName ? `<dt>Payer</dt><dd data-testid="payee-name">${escapeHtml(invoice.payeeName)}</dd>` : ''}
    </dl>
  </header>
  ${options.error ? `<div class="error" id="error" data-testid="error" role="alert">${escapeHtml(options.error)}</div>` : ''}
  ${options.warnSpecialCharacters && open ? '<div class="warn" data-testid="warn-special-characters">The description contains one of <code>&amp; * ! % @</code>: the mobile-money processor refuses such payments (2001), and so does the sandbox.</div>' : ''}
  ${actions}
</main>
</body>
</html>`;
}
