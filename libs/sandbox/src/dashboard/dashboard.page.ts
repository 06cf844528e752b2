import { escapeHtml } from '../sandbox.http.js';

// The dashboard page: one self-contained document (offline, under a strict nonce CSP). Records are
// rendered with textContent only, never as HTML: callback bodies and SMS texts are untrusted. Its
// data-testid hooks are stable: browser tests rely on them.

export interface DashboardPageOptions {
  nonce: string;
  origin: string;
  /** The accounts served; with more than one, the page offers a filter by account. */
  accounts?: string[];
}

const STYLE = `
:root { color-scheme: light; --ink:#1d2433; --muted:#5b6477; --line:#e3e7ee; --bg:#f6f8fb; --accent:#0b6bcb;
  --ok:#137333; --bad:#b3261e; --warn:#8a5a00; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", sans-serif; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink); font-size:14px; }
header { display:flex; flex-wrap:wrap; align-items:center; gap:12px 24px; padding:14px 24px; background:#fff; border-bottom:1px solid var(--line); position:sticky; top:0; z-index:2; }
header h1 { font-size:18px; margin:0; }
header .origin { color:var(--muted); font-family:ui-monospace, "Liberation Mono", monospace; font-size:12px; }
.pill { border-radius:999px; padding:2px 10px; font-size:12px; font-weight:600; background:#eceff4; color:var(--muted); }
.pill[data-state="live"] { background:#e6f4ea; color:var(--ok); }
.pill[data-state="offline"] { background:#fce8e6; color:var(--bad); }
.stats { display:flex; flex-wrap:wrap; gap:6px 16px; margin-left:auto; color:var(--muted); }
.stats b { color:var(--ink); }
main { padding:16px 24px 48px; display:grid; gap:18px; }
section { background:#fff; border:1px solid var(--line); border-radius:8px; overflow:hidden; }
section h2 { font-size:15px; margin:0; padding:10px 14px; border-bottom:1px solid var(--line); display:flex; gap:8px; align-items:baseline; }
section h2 small { color:var(--muted); font-weight:normal; }
.scroll { overflow-x:auto; max-height:460px; overflow-y:auto; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:12px; color:var(--muted); font-weight:600; background:#fafbfd; position:sticky; top:0; }
td.mono, .mono { font-family:ui-monospace, "Liberation Mono", monospace; font-size:12px; }
td.wrap { max-width:380px; overflow-wrap:anywhere; }
td.nowrap { white-space:nowrap; }
tr.empty td { color:var(--muted); font-style:italic; }
tr.clickable { cursor:pointer; }
tr.clickable:hover { background:#f3f7fd; }
.state { font-weight:600; }
.state[data-v="delivered"], .state[data-v="paid"], .state[data-v="Delivered"], .state[data-v="fulfilled"], .state[data-v="success"] { color:var(--ok); }
.state[data-v="failed"], .state[data-v="dropped"], .state[data-v="error"], .state[data-v="Failed"], .state[data-v="payment-failed"], .state[data-v="fulfillment-failed"] { color:var(--bad); }
.state[data-v="scheduled"], .state[data-v="sending"], .state[data-v="pending"], .state[data-v="cart"] { color:var(--warn); }
.code { font-weight:700; }
.code.ok { color:var(--ok); } .code.bad { color:var(--bad); }
.tag { display:inline-block; background:#eef1f6; border-radius:4px; padding:0 6px; margin:0 4px 2px 0; font-size:11px; }
button { white-space:nowrap; font:inherit; font-size:12px; border:1px solid var(--accent); color:var(--accent); background:#fff; border-radius:6px; padding:3px 10px; cursor:pointer; }
button:hover { background:#eef5fd; } button:disabled { opacity:.5; cursor:progress; }
tr.details td { background:#fafbfd; }
pre { margin:4px 0 8px; white-space:pre-wrap; overflow-wrap:anywhere; font-size:12px; font-family:ui-monospace, "Liberation Mono", monospace; }
.details h3 { font-size:12px; margin:6px 0 0; color:var(--muted); }
#notice { min-height:20px; color:var(--muted); }
#notice[data-kind="error"] { color:var(--bad); } #notice[data-kind="ok"] { color:var(--ok); }
`;

// Plain ES2020, no template literals (this is itself a template literal), no innerHTML with data.
const SCRIPT = `
(function () {
  'use strict';
  var LIMIT = 500;
  var KINDS = ['delivery', 'invoice', 'message', 'session', 'fulfillment-callback'];
  var stores = {};
  KINDS.forEach(function (k) { stores[k] = new Map(); });
  var open = new Set();
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (key) {
      var v = attrs[key];
      if (v === undefined || v === null || v === false) return;
      if (key === 'text') node.textContent = String(v);
      else if (key === 'className') node.className = v;
      else if (key === 'testid') node.setAttribute('data-testid', v);
      else if (key.indexOf('on') === 0) node.addEventListener(key.slice(2), v);
      else node.setAttribute(key, String(v));
    });
    (children || []).forEach(function (c) { if (c !== null && c !== undefined) node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return node;
  }
  function td(testid, text, className) { return el('td', { testid: testid, text: text === null || text === undefined ? '' : text, className: className }); }
  function time(iso) { if (!iso) return ''; var d = new Date(iso); return isNaN(d) ? String(iso) : d.toLocaleTimeString([], { hour12: false }); }
  function money(n) { return typeof n === 'number' ? 'GHS ' + n.toFixed(2) : ''; }
  function pretty(v) { if (v === null || v === undefined) return ''; if (typeof v === 'string') { try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; } } return JSON.stringify(v, null, 2); }
  function stateCell(testid, value) { return el('td', { testid: testid }, [el('span', { className: 'state', 'data-v': value, text: value })]); }
  var accountFilter = $('account-filter');
  function shown(r) { var v = accountFilter ? accountFilter.value : ''; return !v || r.account === v; }
  function newestFirst(kind, timeField) {
    return Array.from(stores[kind].values()).filter(shown).sort(function (a, b) { return String(b[timeField] || '').localeCompare(String(a[timeField] || '')); });
  }
  function notice(text, kind) { var n = $('notice'); n.textContent = text; n.setAttribute('data-kind', kind || 'info'); }

  function upsert(rec) {
    var store = stores[rec.kind];
    if (!store) return;
    store.delete(rec.id);
    store.set(rec.id, rec.record);
    while (store.size > LIMIT) store.delete(store.keys().next().value);
  }

  function body(section, rows, emptyText, columns) {
    var tbody = $(section + '-body');
    tbody.replaceChildren();
    if (rows.length === 0) tbody.appendChild(el('tr', { className: 'empty', testid: section + '-empty' }, [el('td', { colspan: columns, text: emptyText })]));
    rows.forEach(function (r) { tbody.appendChild(r); });
  }

  function renderDeliveries() {
    var rows = [];
    newestFirst('delivery', 'createdAt').forEach(function (d) {
      var code = d.statusCode === null || d.statusCode === undefined ? '' : String(d.statusCode);
      var ref = d.clientReference || d.orderId || d.sessionId || '';
      var faults = el('td', { testid: 'delivery-faults' }, (d.faults || []).map(function (f) { return el('span', { className: 'tag', text: f }); }));
      if (d.copies > 1) faults.appendChild(el('span', { className: 'tag', text: 'copy ' + d.copy + '/' + d.copies }));
      var button = el('button', {
        testid: 'redeliver-button', type: 'button', 'data-id': d.id, text: 'Re-send',
        disabled: d.state === 'sending' || d.state === 'scheduled',
        onclick: function (ev) { ev.stopPropagation(); redeliver(d.id, button); },
      });
      var row = el('tr', {
        testid: 'delivery-row', className: 'clickable', 'data-id': d.id, 'data-account': d.account, 'data-kind': d.kind, 'data-state': d.state,
        'data-status-code': code, 'data-redelivery-of': d.redeliveryOf || '', title: 'Show the body',
        onclick: function () { if (open.has(d.id)) open.delete(d.id); else open.add(d.id); renderDeliveries(); },
      }, [
        td('delivery-time', time(d.createdAt), 'mono'),
        td('delivery-kind', d.kind === 'checkout-callback' ? 'checkout callback' : 'fulfillment request', 'nowrap'),
        td('delivery-url', d.url, 'mono wrap'),
        td('delivery-reference', ref, 'mono'),
        stateCell('delivery-state', d.state),
        el('td', { testid: 'delivery-status-code', className: 'code ' + (code === '' ? '' : (code[0] === '2' ? 'ok' : 'bad')), text: code || (d.error ? 'no answer' : '') }),
        faults,
        td('delivery-redelivery-of', d.redeliveryOf ? 're-send of ' + d.redeliveryOf : '', 'mono'),
        el('td', null, [button]),
      ]);
      rows.push(row);
      if (open.has(d.id)) {
        rows.push(el('tr', { className: 'details', testid: 'delivery-details', 'data-id': d.id }, [el('td', { colspan: 9 }, [
          el('div', { className: 'details' }, [
            el('h3', { text: 'POST ' + d.url }),
            el('pre', { testid: 'delivery-body', text: pretty(d.body) }),
            el('h3', { text: 'Answer' + (code ? ' (HTTP ' + code + ')' : '') + (d.durationMs !== null && d.durationMs !== undefined ? ' in ' + d.durationMs + ' ms' : '') }),
            el('pre', { testid: 'delivery-response', text: d.error ? d.error + (d.responseBody ? '\\n' + pretty(d.responseBody) : '') : pretty(d.responseBody) }),
          ]),
        ])]));
      }
    });
    body('deliveries', rows, 'No callback has been sent yet.', 9);
  }

  // Re-sends count too: they are callbacks the merchant received for the invoice.
  function callbacksFor(ref) {
    var n = 0;
    stores.delivery.forEach(function (d) { if (d.kind === 'checkout-callback' && d.clientReference === ref) n++; });
    return n;
  }

  // What the status check reports of a payment: the payer paid the gross, the merchant gets the net.
  function paidText(gross, charges, net, bearer, currency) {
    return money(gross) + ' − ' + money(charges) + ' = ' + money(net) + ' ' + (currency || '') + ' (' + bearer + ' bore the charge)';
  }

  function renderInvoices() {
    body('invoices', newestFirst('invoice', 'createdAt').map(function (i) {
      return el('tr', { testid: 'invoice-row', 'data-account': i.account, 'data-id': i.checkoutId, 'data-reference': i.clientReference, 'data-state': i.state }, [
        td('invoice-time', time(i.createdAt), 'mono'),
        td('invoice-reference', i.clientReference, 'mono'),
        td('invoice-checkout-id', i.checkoutId, 'mono'),
        td('invoice-amount', money(i.totalAmount)),
        td('invoice-description', i.description, 'wrap'),
        stateCell('invoice-state', i.refunded ? 'refunded' : i.state),
        td('invoice-paid', i.chargeBearer ? paidText(i.amountPaid, i.charges, i.amountAfterCharges, i.chargeBearer, i.currency) : ''),
        td('invoice-deliveries', String(callbacksFor(i.clientReference))),
      ]);
    }), 'No invoice yet.', 8);
  }

  function renderMessages() {
    body('messages', newestFirst('message', 'time').map(function (m) {
      return el('tr', { testid: 'message-row', 'data-account': m.account, 'data-id': m.messageId, 'data-to': m.msisdn }, [
        td('message-time', time(m.time), 'mono'),
        td('message-from', m.from),
        td('message-to', m.msisdn, 'mono'),
        td('message-content', m.content, 'wrap'),
        stateCell('message-status', m.status),
        td('message-batch', m.batchId || 'single', 'mono'),
      ]);
    }), 'No SMS yet.', 6);
  }

  function renderSessions() {
    body('sessions', newestFirst('session', 'createdAt').map(function (s) {
      var last = (s.exchanges || [])[s.exchanges.length - 1];
      var screen = last ? (last.error ? 'error: ' + last.error : (last.answer || '')) : '';
      // A USSD screen over the size is what the phone could not show: flagged where it is read.
      if (last && last.screen && !last.screen.fits) screen += ' ⚠ ' + last.screen.length + '/' + last.screen.limit + ' characters';
      var channel = (s.channel === 'ussd' ? 'USSD' : s.channel || '') + (s.operator ? ' · ' + s.operator : '');
      var cart = s.cart ? s.cart.ItemName + ' × ' + s.cart.Qty + ' @ ' + money(s.cart.Price) : '';
      var order = s.order ? s.order.orderId + ' (' + s.order.outcome + (s.order.serviceStatus ? ', ' + s.order.serviceStatus : '') + ')' : '';
      return el('tr', { testid: 'session-row', 'data-account': s.account, 'data-id': s.sessionId, 'data-state': s.state, 'data-channel': s.channel || '' }, [
        td('session-time', time(s.createdAt), 'mono'),
        td('session-id', s.sessionId, 'mono'),
        td('session-service-code', s.serviceCode),
        td('session-mobile', s.mobile, 'mono'),
        td('session-channel', channel),
        stateCell('session-state', s.state),
        td('session-screen', screen, 'wrap'),
        td('session-steps', String(s.exchangeCount || 0)),
        td('session-cart', cart),
        td('session-order', order, 'mono'),
        td('session-paid', s.order && s.order.outcome === 'paid' ? paidText(s.order.amount, s.order.charges, s.order.amountAfterCharges, s.order.chargeBearer, s.order.currency) : ''),
      ]);
    }), 'No service session yet.', 11);
  }

  function renderCallbacks() {
    body('fulfillment-callbacks', newestFirst('fulfillment-callback', 'receivedAt').map(function (f) {
      return el('tr', { testid: 'fulfillment-callback-row', 'data-account': f.account || '', 'data-id': f.id }, [
        td('fulfillment-callback-time', time(f.receivedAt), 'mono'),
        td('fulfillment-callback-session', f.sessionId, 'mono'),
        td('fulfillment-callback-order', f.orderId, 'mono'),
        stateCell('fulfillment-callback-status', f.serviceStatus),
        td('fulfillment-callback-matched', f.matched ? 'yes' : 'no (unknown order)'),
      ]);
    }), 'No fulfillment callback yet.', 5);
  }

  var RENDER = { delivery: renderDeliveries, invoice: renderInvoices, message: renderMessages, session: renderSessions, 'fulfillment-callback': renderCallbacks };

  function stats(s) {
    if (!s) return;
    Object.keys(s).forEach(function (k) { var n = document.querySelector('[data-testid="stat-' + k + '"] b'); if (n) n.textContent = String(s[k]); });
  }

  function apply(payload, replace) {
    if (replace) { KINDS.forEach(function (k) { stores[k].clear(); }); }
    var touched = new Set(replace ? KINDS : []);
    (payload.records || []).forEach(function (r) { upsert(r); touched.add(r.kind); });
    if (touched.has('delivery')) touched.add('invoice');
    touched.forEach(function (k) { RENDER[k](); });
    stats(payload.stats);
  }

  function redeliver(id, button) {
    button.disabled = true;
    notice('Re-sending ' + id + '…');
    // JSON, as the admin API requires of every POST (a cross-site page cannot send it unasked).
    var url = '/_sandbox/deliveries/' + encodeURIComponent(id) + '/redeliver';
    fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })
      .then(function (res) { return res.json().then(function (json) { return { ok: res.ok, json: json }; }); })
      .then(function (r) {
        if (!r.ok) { notice('Could not re-send ' + id + ': ' + (r.json && r.json.message || 'error'), 'error'); return; }
        upsert({ kind: 'delivery', id: r.json.id, record: r.json });
        renderDeliveries();
        renderInvoices();
        notice('Re-sent ' + id + ' as ' + r.json.id + ': ' + (r.json.statusCode ? 'HTTP ' + r.json.statusCode : r.json.state), r.json.state === 'delivered' ? 'ok' : 'error');
      })
      .catch(function (e) { notice('Could not re-send ' + id + ': ' + e.message, 'error'); })
      .finally(function () { button.disabled = false; });
  }

  function connect() {
    var source = new EventSource('/_dashboard/events');
    function status(state, text) { var s = $('connection'); s.setAttribute('data-state', state); s.textContent = text || state; }
    status('connecting');
    source.addEventListener('open', function () { status('live'); });
    source.addEventListener('error', function () { var closed = source.readyState === EventSource.CLOSED; status(closed ? 'offline' : 'connecting', closed ? 'offline' : 'reconnecting'); });
    source.addEventListener('snapshot', function (e) { apply(JSON.parse(e.data), true); });
    source.addEventListener('reset', function (e) { open.clear(); apply(JSON.parse(e.data), true); notice('The sandbox was reset.'); });
    source.addEventListener('update', function (e) { apply(JSON.parse(e.data), false); });
  }

  if (accountFilter) accountFilter.addEventListener('change', function () { KINDS.forEach(function (k) { RENDER[k](); }); });
  KINDS.forEach(function (k) { RENDER[k](); });
  connect();
})();
`;

function section(id: string, title: string, hint: string, columns: string[]): string {
  return `<section data-testid="section-${id}" id="section-${id}">
  <h2>${escapeHtml(title)} <small>${escapeHtml(hint)}</small></h2>
  <div class="scroll"><table><thead><tr>${columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('')}</tr></thead><tbody id="${id}-body"></tbody></table></div>
</section>`;
}

const STAT_LABELS: [string, string][] = [
  ['messages', 'SMS'],
  ['invoices', 'invoices'],
  ['payments', 'payments'],
  ['deliveries', 'deliveries'],
  ['sessions', 'sessions'],
  ['fulfillmentCallbacks', 'fulfillment callbacks'],
];

/** The account filter, on a sandbox serving several accounts. */
function accountSelect(accounts: string[]): string {
  if (accounts.length < 2) return '';
  const choices = accounts.map((name) => `<option value="${escapeHtml(name)}">${escapeHtml(name)}</option>`);
  return `<label class="origin">Account <select id="account-filter" data-testid="account-filter"><option value="">all</option>${choices.join('')}</select></label>`;
}

export function renderDashboardPage(options: DashboardPageOptions): string {
  const nonce = escapeHtml(options.nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hubtel sandbox — dashboard</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header>
  <h1>Hubtel sandbox</h1>
  <span class="origin">${escapeHtml(options.origin)}</span>
  <span class="pill" id="connection" data-testid="connection-status" data-state="connecting">connecting</span>
  ${accountSelect(options.accounts ?? [])}
  <div class="stats">${STAT_LABELS.map(([key, label]) => `<span data-testid="stat-${key}"><b>0</b> ${escapeHtml(label)}</span>`).join('')}</div>
</header>
<main data-testid="dashboard">
  <div id="notice" data-testid="notice" role="status" aria-live="polite"></div>
  ${section('deliveries', 'Callback deliveries', 'checkout web callbacks and fulfillment requests the sandbox sent — click a row for its body', ['Time', 'Kind', 'URL', 'Reference', 'State', 'HTTP', 'Faults', 'Re-send of', ''])}
  ${section('invoices', 'Invoices', 'checkout invoices created on /items/initiate', ['Time', 'Client reference', 'Checkout id', 'Amount', 'Description', 'State', 'Paid', 'Callbacks'])}
  ${section('messages', 'SMS messages', 'what the SMS API was asked to send', ['Time', 'From', 'To', 'Content', 'Status', 'Batch'])}
  ${section('sessions', 'Service sessions', 'programmable-services sessions played by the driver or the simulator', ['Time', 'Session', 'Service code', 'Mobile', 'Channel', 'State', 'Last screen', 'Steps', 'Cart', 'Order', 'Paid'])}
  ${section('fulfillment-callbacks', 'Fulfillment callbacks', 'received on POST /callback', ['Time', 'Session', 'Order', 'ServiceStatus', 'Matched'])}
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>`;
}
