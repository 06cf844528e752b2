import { HubtelTimeoutError } from 'nestjs-hubtel';
import { hexId, type CartItem, type HubtelSandbox, type SandboxServiceSession } from 'nestjs-hubtel/sandbox';
import { EXIT } from '#light/sandbox';
import { callSandbox, markServicePaidInSandbox, type Style } from './cli.support.js';
import type { SimulationResult, TerminalSimulatorOptions } from './simulate.types.js';

/** The terminal as the cart step uses it. */
export interface SimulatorTerminal {
  options: TerminalSimulatorOptions;
  paint: (text: string, ...styles: Style[]) => string;
  out(line?: string): void;
  ask(prompt: string): Promise<string>;
}

/** The cart: the user pays it, declines it or fails the payment; then the fulfillment callback. */
export async function payCart(
  term: SimulatorTerminal,
  session: SandboxServiceSession,
  sandbox: HubtelSandbox,
  item: CartItem,
): Promise<SimulationResult> {
  const p = term.paint;
  const total = item.Qty * item.Price;
  term.out(p(`🛒 Cart: ${item.ItemName} × ${item.Qty} @ ${money(item.Price)} = ${money(total)}`, 'magenta'));
  if (item.ServiceData && typeof item.ServiceData === 'object') {
    const data = Object.entries(item.ServiceData).map(
      ([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`,
    );
    term.out(p(`   Service data: ${data.join('  ')}`, 'dim'));
  }
  const question = `Pay ${money(total)} with mobile money? [y]es / [n]o / [f]ail the payment > `;
  let choice: 'y' | 'n' | 'f' | undefined;
  while (!choice) {
    const raw = (await term.ask(p(question, 'bold'))).trim().toLowerCase();
    if (raw === '' || raw === 'y' || raw === 'yes') choice = 'y';
    else if (raw === 'n' || raw === 'no') choice = 'n';
    else if (raw === 'f' || raw === 'fail') choice = 'f';
    else term.out(p('Please answer y, n or f.', 'yellow'));
  }
  if (choice === 'n') {
    const why = endedByService(session)
      ? 'nothing is sent (the USSD session already ended)'
      : 'the session was released';
    await releaseQuietly(session);
    term.out(p(`Payment declined; ${why}.`, 'yellow'));
    return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'released' };
  }
  if (choice === 'f') {
    const { order } = await session.pay({ outcome: 'failed' });
    term.out(
      p(`✗ The payment of ${money(order.amount)} failed (simulated); no fulfillment request is sent.`, 'red'),
    );
    return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'payment-failed' };
  }

  // The app's status check asks its sandbox (--sandbox), not this simulator's private one:
  // the payment is recorded there first, so an app that verifies payments accepts the order.
  const orderId = hexId();
  if (term.options.sandboxUrl) {
    try {
      const payment = { amount: total, orderId, account: term.options.account };
      await markServicePaidInSandbox(term.options.sandboxUrl, session.sessionId, payment, 10_000);
    } catch (err) {
      term.out(
        p(`  (${(err as Error).message}; an app that verifies payments will refuse this order)`, 'yellow'),
      );
    }
  }
  const { order, deliveries } = await session.pay({ orderId });
  term.out(p(`✓ Payment of ${money(order.amount)} approved — order ${order.orderId}`, 'green'));
  const delivery = deliveries[0];
  if (delivery) {
    const answer =
      delivery.statusCode === null
        ? `no answer (${delivery.error ?? delivery.state})`
        : `HTTP ${delivery.statusCode} ${delivery.responseBody ?? ''}`.trim();
    const ok = delivery.state === 'delivered';
    term.out(p(`→ Fulfillment request POST ${delivery.url}: ${answer}`, ok ? 'green' : 'red'));
    if (!ok) return { exitCode: EXIT.failed, sessionId: session.sessionId, outcome: 'not-fulfilled' };
  }
  const timeoutMs = term.options.callbackTimeoutMs ?? 60_000;
  term.out(p(`Waiting up to ${Math.round(timeoutMs / 1000)} s for the fulfillment callback…`, 'dim'));
  const callback = await (term.options.sandboxUrl
    ? pollRemoteCallback(term.options.sandboxUrl, session.sessionId, order.orderId, timeoutMs)
    : session.waitForCallback(timeoutMs).catch((err: unknown) => {
        if (err instanceof HubtelTimeoutError) return undefined;
        throw err;
      }));
  if (!callback) {
    term.out(p(`✗ No fulfillment callback within ${Math.round(timeoutMs / 1000)} s.`, 'red'));
    term.out(
      p(
        term.options.sandboxUrl
          ? `  Does the app post its callbacks to ${term.options.sandboxUrl}/callback?`
          : `  Point the app's ServiceAppModule callbackUrl at ${sandbox.url} (or use --sandbox <url> / --callback-port).`,
        'dim',
      ),
    );
    return { exitCode: EXIT.failed, sessionId: session.sessionId, outcome: 'not-fulfilled' };
  }
  // Both the simulator's own sandbox and a running one (its admin API) record it as SandboxFulfillmentCallback.
  const status = String(callback.serviceStatus);
  const success = status.toLowerCase() === 'success';
  const [mark, style, verdict] = success
    ? (['✓', 'green', 'The purchase succeeded.'] as const)
    : (['✗', 'red', 'The service reported a failed fulfillment.'] as const);
  term.out(p(`${mark} Fulfillment callback received: ServiceStatus ${status}`, style));
  term.out(p(`${verdict} Session ended.`, 'dim'));
  return {
    exitCode: success ? EXIT.ok : EXIT.failed,
    sessionId: session.sessionId,
    outcome: success ? 'fulfilled' : 'not-fulfilled',
    callback,
  };
}

/** Hangs up: releases the session unless it is already over. */
export async function releaseQuietly(session: SandboxServiceSession): Promise<void> {
  const state = session.record.state;
  if (state === 'new' || state === 'released' || state === 'ended') return;
  // A USSD cart came as Release: the service already ended the session, there is nothing to release.
  if (endedByService(session)) return;
  try {
    await session.release();
  } catch {
    // The user is leaving; a service that cannot take the release changes nothing.
  }
}

/** True when the service's last answer ended the session (a `Release`, the USSD cart included). */
function endedByService(session: SandboxServiceSession): boolean {
  return String(session.last?.Type ?? '').toLowerCase() === 'release';
}

function money(amount: number): string {
  return `GHS ${amount.toFixed(2)}`;
}

/** Polls a running sandbox's admin API for the fulfillment callback of one order. */
async function pollRemoteCallback(
  sandboxUrl: string,
  sessionId: string,
  orderId: string,
  timeoutMs: number,
): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    // The sandbox may be restarting: keep trying until the deadline.
    const answer = await callSandbox(sandboxUrl, '/_sandbox/fulfillment-callbacks?limit=200', 5_000).catch(
      () => undefined,
    );
    const list = answer?.ok && Array.isArray(answer.body) ? (answer.body as Record<string, unknown>[]) : [];
    const found = list.find((cb) => cb.sessionId === sessionId && cb.orderId === orderId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}
