/*
 * Server-rendered pages: one self-contained HTML document each, no external assets (works
 * offline and in a headless browser). Every dynamic value goes through `escapeHtml`.
 */
import { currentScriptNonce } from '../platform/http-security.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** JSON for an inline <script>: `<` escaped so a value can never close the script element. */
export function inlineJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export interface LayoutOptions {
  title: string;
  shopName: string;
  mode: 'sandbox' | 'hubtel';
  body: string;
  /** The shop's own page (default `/`): where its name and "Shop" link lead. */
  home?: string;
  /** Every shop of the app, linked from the top bar when there are several. */
  shops?: ReadonlyArray<{ name: string; path: string }>;
  /** Inline script, placed at the end of the body. */
  script?: string;
  /** Extra <head> content (a refresh fallback). */
  head?: string;
}

const STYLE = `
  :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  * { box-sizing: border-box; }
  body { margin: 0; background: #f6f4ef; color: #1d232b; }
  a { color: #0b6b4b; }
  .banner { background: #fff3cd; color: #6b4e00; text-align: center; padding: .4rem; font-size: .85rem; }
  header.top { background: #1d232b; color: #fff; }
  header.top .inner { max-width: 60rem; margin: 0 auto; padding: .9rem 1rem; display: flex; gap: 1rem; align-items: baseline; justify-content: space-between; flex-wrap: wrap; }
  header.top a { color: #fff; text-decoration: none; }
  header.top .brand { font-weight: 700; font-size: 1.2rem; letter-spacing: .02em; }
  header.top nav a { margin-left: 1rem; font-size: .9rem; opacity: .85; }
  main { max-width: 60rem; margin: 1.5rem auto 3rem; padding: 0 1rem; }
  h1 { font-size: 1.6rem; margin: .2rem 0 1rem; }
  .muted { color: #5b6675; }
  .small { font-size: .85rem; }
  .card { background: #fff; border-radius: .8rem; padding: 1.1rem 1.2rem; box-shadow: 0 1px 3px rgba(0,0,0,.08); margin: 1rem 0; }
  .grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 1rem; }
  .product { display: flex; flex-direction: column; gap: .5rem; }
  .swatch { height: 6rem; border-radius: .6rem; display: flex; align-items: flex-end; padding: .5rem .7rem; color: #fff; font-weight: 600; text-shadow: 0 1px 2px rgba(0,0,0,.35); }
  .price { font-size: 1.3rem; font-weight: 700; }
  label { display: block; font-size: .85rem; margin: .6rem 0 .25rem; }
  input, select { width: 100%; padding: .6rem; font-size: 1rem; border: 1px solid #c8d0da; border-radius: .5rem; background: #fff; }
  .row { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
  button, .button { display: inline-block; font-size: 1rem; padding: .65rem 1rem; border-radius: .5rem; border: 1px solid #0b6b4b; background: #0b6b4b; color: #fff; font-weight: 600; cursor: pointer; text-decoration: none; text-align: center; }
  button.secondary, .button.secondary { background: #fff; color: #0b6b4b; }
  .product button { margin-top: auto; width: 100%; }
  .error { background: #fde8e8; color: #8a1c1c; border-radius: .5rem; padding: .7rem .9rem; margin: 1rem 0; }
  .status { display: inline-flex; align-items: center; gap: .5rem; font-size: 1.5rem; font-weight: 700; padding: .4rem .9rem; border-radius: 2rem; background: #e7ecf2; }
  .status[data-status="paid"] { background: #d9f2e4; color: #0b5a3c; }
  .status[data-status="failed"], .status[data-status="cancelled"], .status[data-status="expired"] { background: #fde8e8; color: #8a1c1c; }
  .status[data-status="awaiting-payment"]::before { content: ""; width: .8rem; height: .8rem; border-radius: 50%; border: 2px solid currentColor; border-right-color: transparent; animation: spin 1s linear infinite; }
  @keyframes spin { to { transform: rotate(360deg); } }
  dl { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 1rem 0 0; }
  dt { color: #5b6675; } dd { margin: 0; word-break: break-all; }
  table { width: 100%; border-collapse: collapse; font-size: .9rem; }
  th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #e5e8ec; }
  code { background: #eef1f4; padding: .05rem .3rem; border-radius: .25rem; font-size: .85em; }
  .phone { max-width: 22rem; margin: 0 auto; background: #111; border-radius: 1.6rem; padding: 1rem .8rem; }
  .screen { background: #fff; border-radius: 1rem; padding: 1rem; min-height: 18rem; }
  .screen .message { white-space: pre-wrap; font-size: 1.05rem; margin: 0 0 1rem; }
  .screen pre.message { font-family: inherit; }
  fieldset.channel { border: 0; padding: 0; margin: .8rem 0 0; }
  fieldset.channel label { display: block; font-weight: normal; }
  .options { display: flex; flex-direction: column; gap: .5rem; }
  .options button { text-align: left; }
`;

export function renderLayout(options: LayoutOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)} — ${escapeHtml(options.shopName)}</title>
<style>${STYLE}</style>
${options.head ?? ''}
</head>
<body>
${options.mode === 'sandbox' ? '<div class="banner" data-testid="sandbox-banner">Example shop running against the Hubtel sandbox — no real money moves</div>' : ''}
<header class="top"><div class="inner">
  <a class="brand" href="${escapeHtml(options.home ?? '/')}">${escapeHtml(options.shopName)}</a>
  <nav>${shopLinks(options)}${options.mode === 'sandbox' ? '<a href="/simulator">Data bundles (service simulator)</a>' : ''}</nav>
</div></header>
<main>
${options.body}
</main>
${options.script ? `<script${nonceAttribute()}>${options.script}</script>` : ''}
</body>
</html>`;
}

/** "Shop", or one link per shop when the app runs several (each on its own Hubtel account). */
function shopLinks(options: LayoutOptions): string {
  const shops = options.shops ?? [];
  if (shops.length < 2) return `<a href="${escapeHtml(options.home ?? '/')}">Shop</a>`;
  return shops
    .map((shop) => `<a href="${escapeHtml(shop.path)}" data-testid="shop-link">${escapeHtml(shop.name)}</a>`)
    .join('');
}

/** The request's CSP nonce as an attribute (the Content-Security-Policy allows no other inline script). */
function nonceAttribute(): string {
  const nonce = currentScriptNonce();
  return nonce ? ` nonce="${escapeHtml(nonce)}"` : '';
}
