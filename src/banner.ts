import type { ExampleApp } from './bootstrap.js';

/** What `npm start` prints once the app listens: where to go, and where records are kept. */
export function banner(example: ExampleApp): string {
  const a = example.addresses;
  const lines = [
    '',
    example.mode === 'sandbox'
      ? 'Example merchant app — running against the embedded Hubtel sandbox (no real money moves)'
      : 'Example merchant app — running against the REAL Hubtel platform',
    '',
    `  Shop:                  ${a.shop}`,
  ];
  const otherShops = a.otherShops ?? [];
  for (const shop of otherShops)
    lines.push(
      `  Shop "${shop.name}":${' '.repeat(Math.max(1, 14 - shop.name.length))}${shop.url}  (Hubtel account ${shop.account})`,
    );
  if (a.simulator) lines.push(`  Data-bundle simulator: ${a.simulator}`);
  lines.push(
    `  Service flow URL:      ${a.serviceFlow}`,
    `  Fulfillment URL:       ${a.fulfillment}`,
    `  Checkout callback:     ${a.checkoutCallback}${otherShops.length > 0 ? '  (/<account> for the other shops)' : ''}`,
    `  Store:                 ${example.store.describe()}`,
    `  Health and metrics:    ${example.opsUrl}/health, ${example.opsUrl}/metrics  (OPS_PORT; not on the shop's port)`,
  );
  if (example.sandbox) {
    const { sms, api } = example.sandbox.credentials;
    lines.push(`  Sandbox:               ${a.sandbox}`);
    if (a.sandboxDashboard)
      lines.push(`  Sandbox dashboard:     ${a.sandboxDashboard}  (SMS sent, invoices, callbacks, sessions)`);
    lines.push(
      // The sandbox's fixed, documented credentials: they protect nothing and are no secret.
      `  Sandbox credentials:   SMS ${sms.clientId} / ${sms.clientSecret}; checkout + status ${api.clientId} / ${api.clientSecret}; POS Sales ID ${example.sandbox.posSalesId}`,
    );
  }
  lines.push('', 'Press Ctrl+C to stop.', '');
  return lines.join('\n');
}
