import {
  HubtelApiError,
  HubtelError,
  HubtelNetworkError,
  HubtelTimeoutError,
  HubtelValidationError,
} from 'nestjs-hubtel';
import {
  HubtelSandbox,
  type SandboxFulfillmentCallback,
  type SandboxServiceSession,
  type ServiceFlowOption,
  type ServiceFlowResponse,
} from 'nestjs-hubtel/sandbox';
import { DEFAULT_USSD_SCREEN, serviceAppChannel, type ServiceAppChannel } from '#internal';
import { randomHubtelId } from '../testing.builders.js';
import { TESTING_DEFAULTS, TESTING_PATHS } from '../testing.constants.js';
import {
  EXIT,
  LineReader,
  markServicePaidInSandbox,
  painter,
  type CliStreams,
  type Style,
} from './cli.support.js';

export interface TerminalSimulatorOptions {
  /** The Service Interaction URL (`http://127.0.0.1:3000/api/service-flow`). */
  serviceFlowUrl: string;
  /** The Service Fulfillment URL, on the same origin. Default: the service-flow URL with `service-flow` → `fulfillment`. */
  fulfillmentUrl?: string;
  serviceCode?: string;
  mobile?: string;
  operator?: string;
  /**
   * `ussd` plays a USSD phone: shows `Message` only, flags a screen over the size, sends what the
   * user types (the option's number), and pays a `Release` carrying an `Item` like an `AddToCart`.
   * `app` plays the Hubtel app (the options of `Data` listed). Default: `ussd` for a telco operator.
   */
  channel?: ServiceAppChannel;
  /** USSD screen size in characters (GSM-7). Default 182. */
  screenSize?: number;
  /** USSD screen size once any character is outside GSM-7 (UCS-2). Default 70. */
  unicodeScreenSize?: number;
  /**
   * A running sandbox (the `hubtel-sandbox` command, or an app's embedded one) that receives the
   * app's fulfillment callbacks: the simulator reads them from its admin API. Default: the
   * simulator's own receiver (`callbackPort`).
   */
  sandboxUrl?: string;
  /**
   * With `sandboxUrl`: the sandbox account whose programmable service this is (several accounts:
   * its status check confirms the payment to that account's keys only). Default: its default one.
   */
  account?: string;
  /** Port of the simulator's own fulfillment-callback receiver. Default: a free one. */
  callbackPort?: number;
  /** How long to wait for the fulfillment callback after paying. Default 60 s. */
  callbackTimeoutMs?: number;
  /** How long to wait for each answer of the service. Default 5 s (the platform's USSD limit). */
  timeoutMs?: number;
  /** Stop when an answer breaks the contract (default: warn and go on). */
  strict?: boolean;
  /** Never colour the output. */
  noColor?: boolean;
}

type Paint = (text: string, ...styles: Style[]) => string;

/** How one session ended, for the exit code. */
export interface SimulationResult {
  exitCode: number;
  sessionId: string;
  /** `ended` by the service, `released` by the user, `paid` (and fulfilled or not), `error`, `interrupted`. */
  outcome: 'ended' | 'released' | 'fulfilled' | 'not-fulfilled' | 'payment-failed' | 'error' | 'interrupted';
  callback?: SandboxFulfillmentCallback | Record<string, unknown>;
}

class Interrupted extends Error {}

/** The fulfillment URL the platform would call, from the service-flow URL. */
export function defaultFulfillmentUrl(serviceFlowUrl: URL): URL {
  const url = new URL(serviceFlowUrl.href);
  const path = url.pathname;
  const i = path.lastIndexOf('/service-flow');
  const after = i < 0 ? '' : path.charAt(i + '/service-flow'.length);
  url.pathname =
    i >= 0 && (after === '' || after === '/')
      ? `${path.slice(0, i)}/fulfillment${path.slice(i + '/service-flow'.length)}`
      : TESTING_PATHS.fulfillment;
  return url;
}

/**
 * Plays the platform's client app in a terminal, like dialing a USSD code: starts a session,
 * shows each screen (message, label, numbered options), reads the user's answers, shows the cart
 * and pays it (the fulfillment request), then reports the fulfillment callback. Built on the
 * sandbox's service-app driver, so the wire protocol is the one the sandbox plays in tests.
 */
export class TerminalSimulator {
  private readonly paint: Paint;
  private readonly flowUrl: URL;
  private readonly fulfillmentUrl: URL;
  private interruptHandler: (() => void) | undefined;

  constructor(
    private readonly options: TerminalSimulatorOptions,
    private readonly io: CliStreams,
  ) {
    this.paint = painter(io.stdout, io.env, options.noColor);
    this.flowUrl = new URL(options.serviceFlowUrl);
    this.fulfillmentUrl = options.fulfillmentUrl
      ? new URL(options.fulfillmentUrl)
      : defaultFulfillmentUrl(this.flowUrl);
    if (this.fulfillmentUrl.origin !== this.flowUrl.origin) {
      throw new HubtelValidationError(
        'The fulfillment URL must be on the same origin as the service-flow URL',
        [{ field: 'fulfillmentUrl', message: `must start with ${this.flowUrl.origin}` }],
      );
    }
  }

  async run(): Promise<SimulationResult> {
    const sandbox = await HubtelSandbox.start({
      port: this.options.callbackPort ?? 0,
      host: '127.0.0.1',
      logger: quietLogger,
    });
    let session: SandboxServiceSession;
    const operator = this.options.operator ?? TESTING_DEFAULTS.operator;
    try {
      session = sandbox.serviceApp(this.flowUrl.origin, {
        serviceCode: this.options.serviceCode ?? TESTING_DEFAULTS.serviceCode,
        mobile: this.options.mobile ?? TESTING_DEFAULTS.phone,
        operator,
        channel: this.options.channel ?? serviceAppChannel({ Operator: operator }),
        ussd: dropUndefinedSizes(this.options.screenSize, this.options.unicodeScreenSize),
        serviceFlowPath: `${this.flowUrl.pathname}${this.flowUrl.search}`,
        fulfillmentPath: `${this.fulfillmentUrl.pathname}${this.fulfillmentUrl.search}`,
        timeoutMs: this.options.timeoutMs,
        strict: false,
      });
    } catch (err) {
      await sandbox.stop();
      throw err;
    }
    const reader = new LineReader(this.io.stdin, this.io.stdout);
    const interrupted = new Promise<never>((_, reject) => {
      this.interruptHandler = () => reject(new Interrupted());
    });
    interrupted.catch(() => undefined);
    reader.onInterrupt(() => this.interrupt());
    try {
      this.header(sandbox, session);
      return await Promise.race([this.play(session, sandbox, reader, interrupted), interrupted]);
    } catch (err) {
      if (err instanceof Interrupted) {
        this.out(`\n${this.paint('Interrupted.', 'yellow')}`);
        await this.releaseQuietly(session);
        return { exitCode: EXIT.interrupted, sessionId: session.sessionId, outcome: 'interrupted' };
      }
      this.out(this.paint(`✗ ${describeError(err)}`, 'red'));
      // Nothing answered (a service not started, a wrong port): its own code, as hubtel-trigger's.
      const exitCode = err instanceof HubtelNetworkError ? EXIT.network : EXIT.failed;
      return { exitCode, sessionId: session.sessionId, outcome: 'error' };
    } finally {
      this.interruptHandler = undefined;
      reader.close();
      await sandbox.stop();
    }
  }

  /** Ends the session as the user would by hanging up (Ctrl+C, SIGTERM): released, exit code 130. */
  interrupt(): void {
    this.interruptHandler?.();
  }

  private out(line = ''): void {
    this.io.stdout.write(`${line}\n`);
  }

  private header(sandbox: HubtelSandbox, session: SandboxServiceSession): void {
    const p = this.paint;
    const record = session.record;
    this.out(
      p(
        `Hubtel service simulator — dialing ${record.serviceCode} as ${record.mobile} (${record.operator})`,
        'bold',
      ),
    );
    const screen = session.record.channel === 'ussd' ? this.screenLimits() : undefined;
    this.out(
      screen
        ? `  Channel                   USSD ${p(`(the phone shows Message only; screens of ${screen.screenSize} characters, ${screen.unicodeScreenSize} with a non-GSM character)`, 'dim')}`
        : `  Channel                   app ${p('(the Hubtel app lists the options of Data)', 'dim')}`,
    );
    this.out(`  Service Interaction URL   ${this.flowUrl.href}`);
    this.out(`  Service Fulfillment URL   ${this.fulfillmentUrl.href}`);
    if (this.options.sandboxUrl)
      this.out(`  Fulfillment callbacks     read from the sandbox at ${this.options.sandboxUrl}`);
    if (this.options.sandboxUrl && this.options.account)
      this.out(`  Sandbox account           ${this.options.account}`);
    else
      this.out(
        `  Fulfillment callbacks     ${sandbox.url}/callback  ${p("(your ServiceAppModule's callbackUrl must be " + sandbox.url + ')', 'dim')}`,
      );
    this.out(
      p(
        `  Session ${session.sessionId}. Answer each screen and press Enter; Ctrl+C ends the session.`,
        'dim',
      ),
    );
  }

  private async play(
    session: SandboxServiceSession,
    sandbox: HubtelSandbox,
    reader: LineReader,
    interrupted: Promise<never>,
  ): Promise<SimulationResult> {
    const p = this.paint;
    const ask = async (prompt: string): Promise<string> => {
      const line = await Promise.race([reader.ask(prompt), interrupted]);
      if (line === null) throw new Interrupted();
      return line;
    };
    let response = await session.start();
    if (session.channel === 'ussd') return this.playUssd(session, sandbox, response, ask);
    for (;;) {
      this.warnIssues(session);
      const type = String(response.Type ?? '').toLowerCase();
      this.out();
      if (response.Label) this.out(p(`── ${response.Label} ──`, 'bold'));
      if (response.Message) this.out(response.Message);

      if (type === 'release') {
        this.out(p('Session ended by the service.', 'dim'));
        return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'ended' };
      }
      if (type === 'addtocart') return this.checkout(session, sandbox, response, ask);

      const options = Array.isArray(response.Data) ? (response.Data as ServiceFlowOption[]) : [];
      const isSelect = String(response.DataType).toLowerCase() === 'select' && options.length > 0;
      let answer: string;
      if (isSelect) {
        options.forEach((o, i) => this.out(`  ${p(`${i + 1}.`, 'cyan')} ${o.Display}`));
        answer = toOptionValue(await ask(p(`Choose 1-${options.length} > `, 'bold')), options);
      } else {
        const field = response.FieldType ? ` (${response.FieldType})` : '';
        answer = await ask(p(`Your answer${field} > `, 'bold'));
      }
      response = await session.reply(answer);
    }
  }

  /**
   * The USSD phone: the screen is `Message` and nothing else (no label, no list from `Data`); what
   * the user types is sent as typed; the cart is a `Release` carrying the `Item`, paid outside the
   * session (the mobile-money prompt), or an `AddToCart` (warned about: USSD expects Release).
   */
  private async playUssd(
    session: SandboxServiceSession,
    sandbox: HubtelSandbox,
    first: ServiceFlowResponse,
    ask: (prompt: string) => Promise<string>,
  ): Promise<SimulationResult> {
    const p = this.paint;
    let response = first;
    for (;;) {
      const type = String(response.Type ?? '').toLowerCase();
      this.out();
      // The screen first, then what is wrong with it (--strict stops there, the screen seen).
      this.showUssdScreen(session, response);
      this.warnIssues(session);
      const hasItem = response.Item !== null && typeof response.Item === 'object';
      if (type === 'release' && hasItem) {
        this.out(p('Session ended on the phone; the payment prompt follows.', 'dim'));
        return this.checkout(session, sandbox, response, ask);
      }
      if (type === 'release') {
        this.out(p('Session ended by the service.', 'dim'));
        return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'ended' };
      }
      if (type === 'addtocart') return this.checkout(session, sandbox, response, ask);
      // What the user types goes as typed: on USSD the service maps an option's number itself.
      const field = response.FieldType ? ` (${response.FieldType})` : '';
      const answer = await ask(p(`Your answer${field} > `, 'bold'));
      response = await session.reply(answer);
    }
  }

  /** The phone's screen: its size, `Message` as is (nothing else), and what a USSD user would trip on. */
  private showUssdScreen(session: SandboxServiceSession, response: ServiceFlowResponse): void {
    const p = this.paint;
    const exchange = session.record.exchanges.at(-1);
    const screen = exchange?.screen;
    // The contract warning below says why a screen is too long; the title only marks it.
    if (screen)
      this.out(
        screen.fits
          ? p(`── USSD ${screen.length}/${screen.limit} ──`, 'dim')
          : p(`── USSD ${screen.length}/${screen.limit} TOO LONG ──`, 'bold', 'yellow'),
      );
    if (typeof response.Message === 'string' && response.Message !== '') this.out(response.Message);
    for (const warning of exchange?.warnings ?? []) this.out(p(`⚠ ussd: ${warning}`, 'yellow'));
  }

  private screenLimits(): { screenSize: number; unicodeScreenSize: number } {
    return {
      screenSize: this.options.screenSize ?? DEFAULT_USSD_SCREEN.screenSize,
      unicodeScreenSize: this.options.unicodeScreenSize ?? DEFAULT_USSD_SCREEN.unicodeScreenSize,
    };
  }

  private async checkout(
    session: SandboxServiceSession,
    sandbox: HubtelSandbox,
    response: ServiceFlowResponse,
    ask: (prompt: string) => Promise<string>,
  ): Promise<SimulationResult> {
    const p = this.paint;
    const item = response.Item!;
    const total = item.Qty * item.Price;
    this.out(
      p(`🛒 Cart: ${item.ItemName} × ${item.Qty} @ ${money(item.Price)} = ${money(total)}`, 'magenta'),
    );
    if (item.ServiceData && typeof item.ServiceData === 'object') {
      this.out(
        p(
          `   Service data: ${Object.entries(item.ServiceData)
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join('  ')}`,
          'dim',
        ),
      );
    }
    let choice: 'y' | 'n' | 'f' | undefined;
    while (!choice) {
      const raw = (
        await ask(p(`Pay ${money(total)} with mobile money? [y]es / [n]o / [f]ail the payment > `, 'bold'))
      )
        .trim()
        .toLowerCase();
      if (raw === '' || raw === 'y' || raw === 'yes') choice = 'y';
      else if (raw === 'n' || raw === 'no') choice = 'n';
      else if (raw === 'f' || raw === 'fail') choice = 'f';
      else this.out(p('Please answer y, n or f.', 'yellow'));
    }
    if (choice === 'n') {
      const ended = endedByService(session);
      await this.releaseQuietly(session);
      this.out(
        p(
          ended
            ? 'Payment declined; nothing is sent (the USSD session already ended).'
            : 'Payment declined; the session was released.',
          'yellow',
        ),
      );
      return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'released' };
    }
    if (choice === 'f') {
      const { order } = await session.pay({ outcome: 'failed' });
      this.out(
        p(
          `✗ The payment of ${money(order.amount)} failed (simulated); no fulfillment request is sent.`,
          'red',
        ),
      );
      return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'payment-failed' };
    }

    // The app's status check asks its sandbox (--sandbox), not this simulator's private one:
    // the payment is recorded there first, so an app that verifies payments accepts the order.
    const orderId = randomHubtelId();
    if (this.options.sandboxUrl) {
      try {
        await markServicePaidInSandbox(
          this.options.sandboxUrl,
          session.sessionId,
          { amount: total, orderId, ...(this.options.account ? { account: this.options.account } : {}) },
          10_000,
        );
      } catch (err) {
        this.out(
          p(`  (${(err as Error).message}; an app that verifies payments will refuse this order)`, 'yellow'),
        );
      }
    }
    const { order, deliveries } = await session.pay({ orderId });
    this.out(p(`✓ Payment of ${money(order.amount)} approved — order ${order.orderId}`, 'green'));
    const delivery = deliveries[0];
    if (delivery) {
      const answer =
        delivery.statusCode === null
          ? `no answer (${delivery.error ?? delivery.state})`
          : `HTTP ${delivery.statusCode} ${delivery.responseBody ?? ''}`.trim();
      const ok = delivery.state === 'delivered';
      this.out(p(`→ Fulfillment request POST ${delivery.url}: ${answer}`, ok ? 'green' : 'red'));
      if (!ok) return { exitCode: EXIT.failed, sessionId: session.sessionId, outcome: 'not-fulfilled' };
    }
    const timeoutMs = this.options.callbackTimeoutMs ?? 60_000;
    this.out(p(`Waiting up to ${Math.round(timeoutMs / 1000)} s for the fulfillment callback…`, 'dim'));
    const callback = await (this.options.sandboxUrl
      ? pollRemoteCallback(this.options.sandboxUrl, session.sessionId, order.orderId, timeoutMs)
      : session.waitForCallback(timeoutMs).catch((err: unknown) => {
          if (err instanceof HubtelTimeoutError) return undefined;
          throw err;
        }));
    if (!callback) {
      this.out(p(`✗ No fulfillment callback within ${Math.round(timeoutMs / 1000)} s.`, 'red'));
      this.out(
        p(
          this.options.sandboxUrl
            ? `  Does the app post its callbacks to ${this.options.sandboxUrl}/callback?`
            : `  Point the app's ServiceAppModule callbackUrl at ${sandbox.url} (or use --sandbox <url> / --callback-port).`,
          'dim',
        ),
      );
      return { exitCode: EXIT.failed, sessionId: session.sessionId, outcome: 'not-fulfilled' };
    }
    const status = String(
      (callback as { serviceStatus?: unknown; ServiceStatus?: unknown }).serviceStatus ??
        (callback as { ServiceStatus?: unknown }).ServiceStatus,
    );
    const success = status.toLowerCase() === 'success';
    this.out(
      p(
        `${success ? '✓' : '✗'} Fulfillment callback received: ServiceStatus ${status}`,
        success ? 'green' : 'red',
      ),
    );
    this.out(
      p(
        success
          ? 'The purchase succeeded. Session ended.'
          : 'The service reported a failed fulfillment. Session ended.',
        'dim',
      ),
    );
    return {
      exitCode: success ? EXIT.ok : EXIT.failed,
      sessionId: session.sessionId,
      outcome: success ? 'fulfilled' : 'not-fulfilled',
      callback,
    };
  }

  private warnIssues(session: SandboxServiceSession): void {
    const issues = session.record.exchanges.at(-1)?.issues ?? [];
    if (issues.length === 0) return;
    for (const issue of issues) this.out(this.paint(`⚠ contract: ${issue}`, 'yellow'));
    if (this.options.strict)
      throw new HubtelValidationError(
        `The answer breaks the contract (--strict): ${issues.join('; ')}`,
        issues.map((message) => ({ field: 'response', message })),
      );
  }

  private async releaseQuietly(session: SandboxServiceSession): Promise<void> {
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
}

/** The user's answer to a select prompt as the platform sends it: the `Value` of option N, a `Value` typed as is, or the raw text. */
export function toOptionValue(answer: string, options: ServiceFlowOption[]): string {
  const trimmed = answer.trim();
  if (/^\d+$/.test(trimmed)) {
    const n = Number(trimmed);
    if (n >= 1 && n <= options.length) return options[n - 1]!.Value;
  }
  const byValue =
    options.find((o) => o.Value === trimmed) ??
    options.find((o) => o.Value.toLowerCase() === trimmed.toLowerCase());
  // Anything else goes as typed: the service decides (a "0" to go back, a re-ask).
  return byValue ? byValue.Value : trimmed;
}

/** True when the service's last answer ended the session (a `Release`, the USSD cart included). */
function endedByService(session: SandboxServiceSession): boolean {
  return String(session.last?.Type ?? '').toLowerCase() === 'release';
}

function dropUndefinedSizes(
  screenSize: number | undefined,
  unicodeScreenSize: number | undefined,
): { screenSize?: number; unicodeScreenSize?: number } {
  return {
    ...(screenSize === undefined ? {} : { screenSize }),
    ...(unicodeScreenSize === undefined ? {} : { unicodeScreenSize }),
  };
}

function money(amount: number): string {
  return `GHS ${amount.toFixed(2)}`;
}

const quietLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };

export function describeError(err: unknown): string {
  if (err instanceof HubtelApiError) {
    const body =
      err.body === undefined
        ? ''
        : ` — ${typeof err.body === 'string' ? err.body : JSON.stringify(err.body)}`.slice(0, 600);
    return `${err.message}${body}`;
  }
  if (err instanceof HubtelNetworkError || err instanceof HubtelTimeoutError || err instanceof HubtelError)
    return err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Polls a running sandbox's admin API for the fulfillment callback of one order. */
async function pollRemoteCallback(
  sandboxUrl: string,
  sessionId: string,
  orderId: string,
  timeoutMs: number,
): Promise<Record<string, unknown> | undefined> {
  const deadline = Date.now() + timeoutMs;
  const url = `${sandboxUrl.replace(/\/+$/, '')}/_sandbox/fulfillment-callbacks?limit=200`;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      if (res.ok) {
        const list = (await res.json()) as Record<string, unknown>[];
        const found = Array.isArray(list)
          ? list.find((cb) => cb.sessionId === sessionId && cb.orderId === orderId)
          : undefined;
        if (found) return found;
      }
    } catch {
      // The sandbox may be restarting: keep trying until the deadline.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}
