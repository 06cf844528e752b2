import { HubtelApiError, HubtelNetworkError, HubtelValidationError } from 'nestjs-hubtel';
import {
  HubtelSandbox,
  type SandboxServiceSession,
  type ServiceFlowOption,
  type ServiceFlowResponse,
} from 'nestjs-hubtel/sandbox';
import { DEFAULT_USSD_SCREEN, type UssdScreenLimits } from '#internal';
import { TESTING_PATHS } from '../testing.constants.js';
import { EXIT } from '#light/sandbox';
import { LineReader, painter, ussdTitle, type CliStreams } from './cli.support.js';
import { payCart, releaseQuietly, type SimulatorTerminal } from './simulate.checkout.js';
import type { SimulationResult, TerminalSimulatorOptions } from './simulate.types.js';

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
 * Plays the platform's client app in a terminal, like dialing a USSD code, through the sandbox's
 * service-app driver: screens, answers, the cart's payment and the fulfillment callback.
 */
export class TerminalSimulator {
  private readonly paint: SimulatorTerminal['paint'];
  private readonly flowUrl: URL;
  private readonly fulfillmentUrl: URL;
  /** The USSD screen sizes played (core's defaults unless given). */
  private readonly screen: UssdScreenLimits;
  private interruptHandler: (() => void) | undefined;

  constructor(
    private readonly options: TerminalSimulatorOptions,
    private readonly io: CliStreams,
  ) {
    this.paint = painter(io.stdout, io.env, options.noColor);
    this.screen = {
      screenSize: options.screenSize ?? DEFAULT_USSD_SCREEN.screenSize,
      unicodeScreenSize: options.unicodeScreenSize ?? DEFAULT_USSD_SCREEN.unicodeScreenSize,
    };
    this.flowUrl = new URL(options.serviceFlowUrl);
    this.fulfillmentUrl = options.fulfillmentUrl
      ? new URL(options.fulfillmentUrl)
      : defaultFulfillmentUrl(this.flowUrl);
    if (this.fulfillmentUrl.origin !== this.flowUrl.origin)
      throw new HubtelValidationError(
        'The fulfillment URL must be on the same origin as the service-flow URL',
        [{ field: 'fulfillmentUrl', message: `must start with ${this.flowUrl.origin}` }],
      );
  }

  async run(): Promise<SimulationResult> {
    const sandbox = await HubtelSandbox.start({
      port: this.options.callbackPort ?? 0,
      host: '127.0.0.1',
      logger: quietLogger,
    });
    let session: SandboxServiceSession;
    const { serviceCode, mobile, operator, channel } = this.options; // unset: the driver's defaults
    try {
      session = sandbox.serviceApp(this.flowUrl.origin, {
        serviceCode,
        mobile,
        operator,
        channel,
        ussd: this.screen,
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
        await releaseQuietly(session);
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

  /** What the cart step (simulate.checkout.ts) writes to and asks through. */
  private terminal(ask: (prompt: string) => Promise<string>): SimulatorTerminal {
    return { options: this.options, paint: this.paint, out: (line) => this.out(line), ask };
  }

  private header(sandbox: HubtelSandbox, session: SandboxServiceSession): void {
    const p = this.paint;
    const { serviceCode, mobile, operator } = session.record;
    this.out(p(`Hubtel service simulator — dialing ${serviceCode} as ${mobile} (${operator})`, 'bold'));
    const screen = session.record.channel === 'ussd' ? this.screen : undefined;
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
    const howTo = 'Answer each screen and press Enter; Ctrl+C ends the session.';
    this.out(p(`  Session ${session.sessionId}. ${howTo}`, 'dim'));
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
    // USSD: `Message` only, input sent as typed, the cart a `Release` with an `Item`.
    const ussd = session.channel === 'ussd';
    for (;;) {
      const type = String(response.Type ?? '').toLowerCase();
      if (!ussd) this.warnIssues(session);
      this.out();
      if (ussd) {
        // The screen first, then what is wrong with it (--strict stops there, the screen seen).
        this.showUssdScreen(session, response);
        this.warnIssues(session);
      } else {
        if (response.Label) this.out(p(`── ${response.Label} ──`, 'bold'));
        if (response.Message) this.out(response.Message);
      }
      const ussdCart =
        ussd && type === 'release' && response.Item !== null && typeof response.Item === 'object';
      if (ussdCart) this.out(p('Session ended on the phone; the payment prompt follows.', 'dim'));
      if (ussdCart || type === 'addtocart')
        return payCart(this.terminal(ask), session, sandbox, response.Item!);
      if (type === 'release') {
        this.out(p('Session ended by the service.', 'dim'));
        return { exitCode: EXIT.ok, sessionId: session.sessionId, outcome: 'ended' };
      }
      const options = !ussd && Array.isArray(response.Data) ? (response.Data as ServiceFlowOption[]) : [];
      let answer: string;
      if (String(response.DataType).toLowerCase() === 'select' && options.length > 0) {
        options.forEach((o, i) => this.out(`  ${p(`${i + 1}.`, 'cyan')} ${o.Display}`));
        answer = toOptionValue(await ask(p(`Choose 1-${options.length} > `, 'bold')), options);
      } else {
        const field = response.FieldType ? ` (${response.FieldType})` : '';
        answer = await ask(p(`Your answer${field} > `, 'bold'));
      }
      response = await session.reply(answer);
    }
  }

  /** The phone's screen: its size, `Message` as is (nothing else), and what a USSD user would trip on. */
  private showUssdScreen(session: SandboxServiceSession, response: ServiceFlowResponse): void {
    const p = this.paint;
    const exchange = session.record.exchanges.at(-1);
    const screen = exchange?.screen;
    // The contract warning below says why a screen is too long; the title only marks it.
    if (screen) this.out(ussdTitle(screen, p));
    if (typeof response.Message === 'string' && response.Message !== '') this.out(response.Message);
    for (const warning of exchange?.warnings ?? []) this.out(p(`⚠ ussd: ${warning}`, 'yellow'));
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
}

/** The user's answer to a select prompt as the platform sends it: the `Value` of option N, a `Value` typed as is, or the raw text. */
export function toOptionValue(answer: string, options: ServiceFlowOption[]): string {
  const trimmed = answer.trim();
  const n = /^\d+$/.test(trimmed) ? Number(trimmed) : 0;
  if (n >= 1 && n <= options.length) return options[n - 1]!.Value;
  const byValue =
    options.find((o) => o.Value === trimmed) ??
    options.find((o) => o.Value.toLowerCase() === trimmed.toLowerCase());
  // Anything else goes as typed: the service decides (a "0" to go back, a re-ask).
  return byValue ? byValue.Value : trimmed;
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
  return err instanceof Error ? err.message : String(err);
}
