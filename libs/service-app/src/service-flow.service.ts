import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { deleteIfVersion, type InboundAccessPolicy, type InboundPipeline } from '#internal';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  HUBTEL_TELEMETRY,
  HubtelStoreUnavailableError,
  HubtelValidationError,
  maskMsisdn,
  type HubtelStore,
  type HubtelTelemetry,
  type StoreWriteOptions,
} from 'nestjs-hubtel';
import {
  SERVICE_APP_ACCESS_POLICY,
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_KEYS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STORE,
} from './service-app.constants.js';
import { ServiceAppEvents, ServiceQueryEvent, type ServiceQueryAnswer } from './service-app.events.js';
import { parseRequest, validateServiceFlowRequest } from './service-app.dto.js';
import { ServiceAppLogger } from './service-app.logger.js';
import type { ResolvedServiceAppOptions } from './service-app.options.js';
import type { SelectOption, ServiceFlowRequest, ServiceFlowResponse } from './service-app.types.js';
import { checkAnswer } from './service-flow.answers.js';
import { PendingStarts, type EvictedStart } from './service-flow.pending.js';
import { ServiceFlowRegistry } from './service-flow.registry.js';
import {
  ScreenCache,
  cartResponse,
  checkCartItem,
  promptResponse,
  queryResponse,
  releaseResponse,
} from './service-flow.responses.js';
import type { FavoriteStart } from './service-flow.context.js';
import { UssdScreens, detectChannel } from './service-flow.ussd.js';
import { FlowStepRunner, describe, stepOf, type Answered, type StepRun } from './service-flow.runner.js';
import {
  SharedStrings,
  accountOf,
  cartKey,
  readRecord,
  readResume,
  record,
  resumeKey,
  resumeRecord,
  selectionsWithout,
  sessionKey,
  storedSession,
  withLast,
  without,
  type ResumeRecord,
  type SessionRecord,
} from './service-flow.session.js';
import { timedStep } from './service-flow.telemetry.js';
import { ServiceAppUnknownAccountError, ServiceAppWrongAccountError } from './service-app.errors.js';
import type { ServiceFlowDefinition, StoredCart, StoredScreen, StoredSession } from './service-flow.types.js';

/** Most prompts kept for "back" (older ones are dropped; a session is short anyway). */
const HISTORY_LIMIT = 32;
/** Step name of the resume question (no flow step can be named so: `@` marks the module's own). */
const RESUME_STEP = '@resume';
/** Most flow/step pairs remembered as already warned about a text cut to the USSD screen. */
const CUT_WARNINGS_LIMIT = 1_000;

/**
 * Serves the service interaction endpoint: one call = one answer of the user, one response.
 *
 * - `initiation` starts the flow routed by ServiceCode (or the default flow) at its start step;
 *   never over a SessionId that has a cart, nor over another account's session (see `taken`).
 * - `Response` checks the entry against the prompt it answers (re-asking with an explanation when
 *   it does not pass), handles "back", then runs the prompt's `next` step.
 * - `release` forgets the session; `timeout` marks it timed out (nothing more runs in it).
 * - `favorite` starts like `initiation`, the start step seeing what the request carried.
 * - `query` is answered by the @OnServiceQuery() handler; any other Type by a polite `Release`.
 *
 * On the USSD channel (decided at the start: `Platform` USSD or a telco `Operator`) the phone shows
 * `Message` only: select prompts are written into it as numbered lines, paged to the screen
 * (UssdScreens), texts longer than a screen are cut, and the cart is a `Release`. A resumable
 * flow's unfinished session leaves its state under the Mobile and ServiceCode for the next dial
 * (behind a guarded endpoint only: the Mobile is all that names the customer).
 *
 * Sessions live in the store under their SessionId with a sliding TTL, written with
 * compare-and-set so two concurrent calls for one session cannot both advance it. Steps run under
 * the step budget: past it the user gets "please try again" on the same prompt and the late
 * answer is dropped. Nothing here answers a 500: an unexpected failure ends the session politely,
 * and a stored session this version cannot read is treated as expired.
 */
@Injectable()
export class ServiceFlowService implements OnApplicationBootstrap {
  private readonly logger = new ServiceAppLogger();
  private readonly screens = new ScreenCache();
  private readonly sessionWrite: StoreWriteOptions;
  /** A start is written with the shorter `sessionStartTtlMs`; its first answer re-writes it with `sessionTtlMs`. */
  private readonly startWrite: StoreWriteOptions;
  /** Shared by every account's engine: `maxPendingSessions` is the instance's. */
  private pending: PendingStarts;
  /** The named account this engine serves (see forAccount); undefined: the default account. */
  private named: string | undefined;
  /** When the cap of pending starts was last reported (said at most once a minute). */
  private capWarnedAt = -Infinity;
  private readonly keepHistory: boolean;
  private readonly sharedStrings = new SharedStrings();
  private readonly runner: FlowStepRunner;
  /** False for a MemoryStore (it answers at once): no time-out guard is armed per request then. */
  private readonly storeMayStall: boolean;
  private readonly ussd: UssdScreens;
  /** Flow/step pairs already warned about a text cut to the screen (one line each, not one per session). */
  private readonly cutWarned = new Set<string>();
  /** The resume question of each resumable flow (shared, frozen: one per flow). */
  private readonly resumeScreens = new Map<string, StoredScreen>();
  private resumableFlows?: boolean;
  /**
   * Whether resume is offered: only behind a path secret or an IP allow-list. An open endpoint
   * would show what a customer typed to anyone who sends their Mobile.
   */
  private readonly resumeGuarded: boolean;

  constructor(
    private readonly registry: ServiceFlowRegistry,
    @Inject(SERVICE_APP_STORE) private readonly store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
    /** Its emitter answers `query` requests (@OnServiceQuery()); absent in unit tests. */
    @Optional() @Inject(SERVICE_APP_PIPELINE) private readonly pipeline?: InboundPipeline,
    /** The account's access policy (path secret, allow-list): resume is offered only behind one. */
    @Optional() @Inject(SERVICE_APP_ACCESS_POLICY) access?: InboundAccessPolicy,
  ) {
    this.resumeGuarded = access?.enabled ?? false;
    this.sessionWrite = Object.freeze({ ttlMs: options.sessionTtlMs });
    this.startWrite = Object.freeze({ ttlMs: options.sessionStartTtlMs });
    this.pending = new PendingStarts(options.maxPendingSessions, options.sessionStartTtlMs);
    // Without "back" no earlier prompt is ever shown again: none is kept.
    this.keepHistory = options.backInputs.length > 0;
    this.storeMayStall = !store.local;
    this.runner = new FlowStepRunner(options, this.logger);
    this.ussd = new UssdScreens(options.ussd, options.backInputs);
  }

  /**
   * @internal The engine of named account `account`: the same flows and store, with the account's
   * own options (messages, TTLs, USSD...); its sessions and carts record the account. Built once
   * per account by the module's accounts; the instance-wide start cap is shared.
   */
  forAccount(
    account: string,
    options: ResolvedServiceAppOptions,
    access: InboundAccessPolicy,
  ): ServiceFlowService {
    const engine = new ServiceFlowService(
      this.registry,
      this.store,
      options,
      this.telemetry,
      this.pipeline,
      access,
    );
    engine.pending = this.pending;
    engine.accountEngines = this.accountEngines;
    engine.named = account === HUBTEL_DEFAULT_ACCOUNT ? undefined : account;
    engine.warnUnguardedResume();
    return engine;
  }

  /** At start-up (and when a named account is built): resume is off behind an open endpoint; said once. */
  onApplicationBootstrap(): void {
    this.warnUnguardedResume();
  }

  private warnUnguardedResume(): void {
    if (this.resumeGuarded || !this.anyResumable()) return;
    const flows = this.registry
      .list()
      .filter((flow) => flow.resume)
      .map((flow) => flow.name);
    const path = this.named === undefined ? 'serviceApp' : `serviceApp[${this.named}]`;
    this.logger.warn(
      `Flows ${flows.join(', ')} are resumable, but the service-flow endpoint of account "${this.account}" has neither a path secret nor an IP allow-list (${path}.access): resume is off there, since anyone sending a customer's Mobile would see what they typed`,
    );
  }

  /** The account this engine serves. */
  get account(): string {
    return this.named ?? HUBTEL_DEFAULT_ACCOUNT;
  }

  /** @internal Set by the module's accounts: how `handle(body, account)` finds another account. */
  accountEngines?: { get(name: string): Promise<{ flows: ServiceFlowService }> };

  /**
   * Answers one service-flow request (the body as received). Throws HubtelValidationError (with
   * `issues`) when the body is not a valid service-flow request; never throws otherwise, but for
   * a session of another account than `account` (ServiceAppWrongAccountError). `account`: the
   * account whose endpoint it came to, when you mount the endpoint yourself (default: this
   * service's, the default account); an unknown name rejects (ServiceAppUnknownAccountError).
   */
  async handle(body: unknown, account?: string): Promise<ServiceFlowResponse> {
    if (account !== undefined && account !== this.account) {
      if (!this.accountEngines) throw new ServiceAppUnknownAccountError(account, [this.account], false);
      return (await this.accountEngines.get(account)).flows.handle(body);
    }
    if (this.telemetry) return timedStep(this.telemetry, body, (input) => this.step(input));
    return this.step(body);
  }

  private async step(body: unknown): Promise<ServiceFlowResponse> {
    const request = parseRequest(validateServiceFlowRequest, body, 'service-flow request');
    const answer = this.dispatch(request);
    return this.storeMayStall ? this.withinBudget(request.SessionId, answer) : answer;
  }

  /**
   * The answer, or the `outage` end screen when it is not ready `stepBudgetMs + storeGraceMs` after
   * the request came (a stalled store, or a client of yours without a command time-out): the
   * platform shows the user a message within its 5 s instead of nothing. The late work goes on
   * (it writes nothing the platform will act on: the session has ended) and is never unhandled.
   */
  private async withinBudget(
    sessionId: string,
    answer: Promise<ServiceFlowResponse>,
  ): Promise<ServiceFlowResponse> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(
        () => resolve(undefined),
        this.options.stepBudgetMs + SERVICE_APP_DEFAULTS.storeGraceMs,
      );
    });
    try {
      const result = await Promise.race([answer, late]);
      if (result) return result;
      this.logger.warn(
        `Service-flow request of session ${sessionId} not answered within ${this.options.stepBudgetMs} ms (the store is slow); answered "${this.options.messages.outage}"`,
      );
      return releaseResponse(sessionId, this.options.messages.outage);
    } finally {
      clearTimeout(timer);
    }
  }

  private async dispatch(request: ServiceFlowRequest): Promise<ServiceFlowResponse> {
    const key = sessionKey(request.SessionId);
    try {
      switch (request.Type.toLowerCase()) {
        case 'initiation':
          return await this.initiate(request, key);
        case 'response':
          return await this.respond(request, key);
        case 'release':
          return await this.release(request, key);
        case 'timeout':
          return await this.timeout(request, key);
        case 'favorite':
          return await this.initiate(request, key, {
            message: request.Message,
            clientState: request.ClientState ?? '',
          });
        case 'query':
          return await this.query(request);
        default:
          return this.unsupported(request);
      }
    } catch (error) {
      // Another account's session: refused as it is (the endpoint answers 409), nothing changed.
      if (error instanceof ServiceAppWrongAccountError) throw error;
      if (error instanceof HubtelStoreUnavailableError) {
        // Redis is down: end the session with a message the phone shows (a 503 shows nothing).
        // Nothing to forget: the store cannot be written, and the session expires there anyway.
        this.logger.warn(
          `Service-flow request of session ${request.SessionId}: the store is unavailable (${error.message}); answered "${this.options.messages.outage}"`,
        );
        return releaseResponse(request.SessionId, this.options.messages.outage);
      }
      // A bug, or another store failure: the platform still gets a well-formed answer.
      this.logger.error(`Service-flow request of session ${request.SessionId} failed: ${describe(error)}`);
      await this.forget(key).catch(() => undefined);
      return releaseResponse(request.SessionId, this.options.messages.error);
    }
  }

  /** The stored session of a SessionId, if it is active (for diagnostics and tests). */
  async getSession(sessionId: string): Promise<StoredSession | undefined> {
    const entry = await this.store.get<unknown>(sessionKey(sessionId));
    const record = entry && readRecord(entry.value);
    // A timed-out session is kept only to refuse late answers: it is no longer active.
    if (!record || record.timedOut) return undefined;
    return storedSession(sessionId, record);
  }

  private async initiate(
    request: ServiceFlowRequest,
    key: string,
    favorite?: FavoriteStart,
  ): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const flow = this.registry.route(request.ServiceCode);
    if (!flow) {
      this.logger.warn(
        `No flow serves ServiceCode "${request.ServiceCode}" (session ${sessionId}); answered "${this.options.messages.unavailable}"`,
      );
      return releaseResponse(sessionId, this.options.messages.unavailable);
    }
    if (await this.taken(sessionId, key, request.Mobile)) {
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug(
        `Session ${sessionId} started by ${maskMsisdn(request.Mobile)} on ${request.ServiceCode} → flow ${flow.name}`,
      );
    }
    const session: SessionRecord = {
      flow: flow.name,
      serviceCode: this.serviceCodeOf(flow, request.ServiceCode),
      mobile: request.Mobile,
      operator: request.Operator === undefined ? undefined : this.shared(request.Operator),
      screen: undefined as unknown as StoredScreen,
      history: undefined,
      data: {},
      selections: undefined,
      startedAt: Date.now(),
      ussd:
        detectChannel(request.Platform, request.Operator, this.options.ussd) === 'ussd' ? true : undefined,
      page: undefined,
      resume: undefined,
      timedOut: undefined,
      account: this.named,
    };
    if (flow.resume && this.resumeGuarded && !favorite) {
      const offer = await this.resumeOffer(flow, session, sessionId);
      if (offer) {
        const screen = this.resumeScreen(flow);
        session.screen = screen;
        session.resume = offer;
        return this.save(sessionId, key, session, undefined, () => this.prompt(session, sessionId, screen));
      }
    }
    const run = await this.runner.run(flow, flow.start, sessionId, session, undefined, favorite);
    return this.apply(flow, sessionId, key, session, undefined, run);
  }

  /**
   * Whether an initiation comes for a SessionId it may not start again: another account's session
   * or cart is refused (ServiceAppWrongAccountError: 409), and a session with a cart (paid, or about
   * to be: the platform never starts one again) is answered as expired. Either would otherwise let
   * whoever knows the SessionId replace the cart before the paid order is fulfilled.
   */
  private async taken(sessionId: string, key: string, mobile: string): Promise<boolean> {
    const [entry, cart] = await Promise.all([
      this.store.get<unknown>(key),
      this.store.get<StoredCart | null>(cartKey(sessionId)),
    ]);
    const session = entry && readRecord(entry.value);
    if (session) this.assertOwn(sessionId, session);
    if (!cart?.value) return false;
    if (accountOf(cart.value) !== this.account)
      throw new ServiceAppWrongAccountError('session', sessionId, this.account, accountOf(cart.value));
    this.logger.warn(
      `Initiation of session ${sessionId} by ${maskMsisdn(mobile)} refused: the session already has a cart (a SessionId used again?); answered "${this.options.messages.sessionExpired}"`,
    );
    return true;
  }

  private async respond(request: ServiceFlowRequest, key: string): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const entry = await this.store.get<unknown>(key);
    const session = entry && readRecord(entry.value);
    if (session) this.assertOwn(request.SessionId, session);
    const flow = session && this.registry.get(session.flow);
    if (!session || !flow) {
      if (entry && !session) {
        // Written by another version of this module, or damaged: it cannot be continued.
        await this.forget(key);
        this.logger.debug(`Session ${sessionId} could not be read from the store; answered as expired`);
      } else {
        this.logger.debug(`Response for unknown or expired session ${sessionId}`);
      }
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    const version = entry.version;
    if (session.timedOut) {
      // The platform gave up on this session: nothing more runs in it.
      await this.forget(key);
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    const raw = request.Message.trim();
    const screen = session.screen;

    if (this.isBack(raw, screen, session.ussd)) return this.back(flow, sessionId, key, session, version);
    if (screen.step === RESUME_STEP) return this.answerResume(flow, sessionId, key, session, version, raw);

    let chosen: SelectOption | undefined;
    if (session.ussd && screen.kind === 'select') {
      const page = this.pageMove(screen, session.page ?? 0, raw);
      if (page !== undefined) {
        // Another page of the same menu: same step, same data, nothing answered.
        const moved = record(session, screen, session.history, session.data, session.selections, page);
        return this.save(sessionId, key, moved, version, () =>
          this.prompt(moved, sessionId, screen, undefined, page),
        );
      }
      // The number shown beside an option (what the phone showed wins over an option's Value).
      chosen = this.ussd.chosen(screen, raw);
      // A navigation key not offered on this page is never an option's Value: the phone showed
      // no option beside it (options are numbered around the keys). Asked again.
      if (!chosen && this.ussd.isNavigationKey(raw))
        return this.prompt(session, sessionId, screen, this.options.messages.select, session.page);
    }
    const check: ReturnType<typeof checkAnswer> = chosen
      ? { ok: true, value: chosen.Value, option: chosen }
      : checkAnswer(screen, raw, this.options.messages, this.options.defaultCountryCode);
    if (!check.ok) return this.prompt(session, sessionId, screen, check.reason, session.page);

    const next = screen.next;
    if (next === undefined || !stepOf(flow, next)) {
      // Checked when the prompt was answered; only a flow changed by a deploy mid-session lands here.
      this.logger.error(
        `Flow ${flow.name}: the prompt of step "${screen.step}" leads to no step ("${next}")`,
      );
      await this.forget(key);
      return releaseResponse(sessionId, this.options.messages.error);
    }
    const answered: Answered = { value: check.value, raw, field: screen.field, option: check.option };
    const run = await this.runner.run(flow, next, sessionId, session, answered);
    return this.apply(flow, sessionId, key, session, version, run);
  }

  private async release(request: ServiceFlowRequest, key: string): Promise<ServiceFlowResponse> {
    // Read first: another account's session is neither kept for resume nor forgotten.
    const entry = await this.store.get<unknown>(key);
    const session = entry ? readRecord(entry.value) : undefined;
    if (session) this.assertOwn(request.SessionId, session);
    await this.keepForResume(request.SessionId, key, session);
    await this.forget(key);
    this.logger.debug(`Session ${request.SessionId} released by the platform (${request.Type})`);
    return releaseResponse(request.SessionId, this.options.messages.released);
  }

  /**
   * `timeout`: the platform gave up waiting and ignores the answer. The session is marked timed
   * out (a late answer for it is told it expired); no step runs. A resumable flow's state is kept.
   */
  private async timeout(request: ServiceFlowRequest, key: string): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const entry = await this.store.get<unknown>(key);
    const session = entry && readRecord(entry.value);
    if (session) this.assertOwn(sessionId, session);
    if (entry && session && !session.timedOut) {
      await this.keepForResume(sessionId, key, session);
      // Compare-and-set: an answer that won the race keeps its state (and is then refused).
      await this.store.compareAndSet(key, entry.version, { ...session, timedOut: true }, this.sessionWrite);
      this.pending.settled(sessionId);
    }
    this.logger.debug(`Session ${sessionId} timed out on the platform`);
    // Answered as a release always was (the platform ignores it).
    return releaseResponse(sessionId, this.options.messages.timedOut);
  }

  /** A session of another account than this engine's is refused (ServiceAppWrongAccountError). */
  private assertOwn(sessionId: string, session: SessionRecord): void {
    if (session.account !== this.named)
      throw new ServiceAppWrongAccountError('session', sessionId, this.account, accountOf(session));
  }

  /** `query`: the @OnServiceQuery() handler's answer; without one, a polite `Release`. */
  private async query(request: ServiceFlowRequest): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const emitter = this.pipeline?.emitter;
    if (!emitter || !emitter.hasListeners(ServiceAppEvents.Query)) {
      this.logger.debug(`Query of session ${sessionId}: no @OnServiceQuery() handler`);
      return releaseResponse(sessionId, this.options.messages.queryUnavailable, null, 'Release');
    }
    const channel = detectChannel(request.Platform, request.Operator, this.options.ussd);
    const event = new ServiceQueryEvent({
      sessionId,
      serviceCode: request.ServiceCode,
      mobile: request.Mobile,
      operator: request.Operator,
      channel,
      message: request.Message,
      clientState: request.ClientState ?? '',
      account: this.account,
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.options.stepBudgetMs);
    });
    let answer: ServiceQueryAnswer | undefined;
    try {
      const handled = emitter.emitAsync(ServiceAppEvents.Query, event) as Promise<unknown[]>;
      handled.catch(() => undefined);
      const results = await Promise.race([handled, late]);
      if (results === 'late') {
        this.logger.warn(
          `Query of session ${sessionId}: the @OnServiceQuery() handler took longer than ${this.options.stepBudgetMs} ms; answered "try again"`,
        );
        return releaseResponse(sessionId, this.options.messages.busy, null, 'Release');
      }
      answer = results.find((result) => result !== undefined) as ServiceQueryAnswer | undefined;
    } catch (error) {
      this.logger.error(`Query of session ${sessionId} failed: ${describe(error)}`);
      return releaseResponse(sessionId, this.options.messages.error, null, 'Release');
    } finally {
      clearTimeout(timer);
    }
    const reply = queryResponse(sessionId, answer);
    if (!reply) {
      this.logger.error(
        `Query of session ${sessionId}: the @OnServiceQuery() handler returned neither a string nor { message }`,
      );
      return releaseResponse(sessionId, this.options.messages.error, null, 'Release');
    }
    if (channel === 'ussd') {
      const shown = this.ussd.text(reply.Message);
      if (shown.cut) this.warnCut('(query)', '@OnServiceQuery');
      reply.Message = shown.text;
    }
    return reply;
  }

  /** A request Type this module does not know: a polite end, as the platform's SDK answers it. */
  private unsupported(request: ServiceFlowRequest): ServiceFlowResponse {
    this.logger.warn(
      `Service-flow request of session ${request.SessionId} has Type ${JSON.stringify(request.Type)}, which this module does not handle; answered "${this.options.messages.unsupported}"`,
    );
    return releaseResponse(request.SessionId, this.options.messages.unsupported, null, 'Release');
  }

  private isBack(raw: string, screen: StoredScreen, ussd: true | undefined): boolean {
    if (!this.options.backInputs.includes(raw)) return false;
    // An option whose Value is the back input wins: the user chose it. Not on USSD, where the user
    // types the numbers shown, which skip the back inputs: there it always means back.
    if (!ussd && screen.kind === 'select' && screen.options) {
      for (const option of screen.options) if (option.Value === raw) return false;
    }
    return true;
  }

  private async back(
    flow: ServiceFlowDefinition,
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number,
  ): Promise<ServiceFlowResponse> {
    const history = session.history;
    if (!history || history.length === 0)
      return this.prompt(session, sessionId, session.screen, undefined, session.page);
    const previous = history[history.length - 1]!;
    // The answer to the prompt shown again is asked anew.
    const updated = record(
      session,
      previous,
      history.length > 1 ? history.slice(0, -1) : undefined,
      without(session.data, previous.field),
      selectionsWithout(session.selections, previous.field),
    );
    return this.save(sessionId, key, updated, version, () => this.prompt(updated, sessionId, previous), flow);
  }

  /**
   * The page a navigation entry leads to, or undefined when `raw` is not one shown on this page
   * ("more" while pages are left, "back" after the first).
   */
  private pageMove(screen: StoredScreen, page: number, raw: string): number | undefined {
    const { moreKey, backKey } = this.options.ussd;
    if (raw !== moreKey && raw !== backKey) return undefined;
    const pages = this.ussd.menu(screen).pages.length;
    const current = Math.min(page, pages - 1);
    if (raw === moreKey) return current + 1 < pages ? current + 1 : undefined;
    return current > 0 ? current - 1 : undefined;
  }

  /** A prompt as the session's channel shows it: as today on app channels, menu lines in `Message` on USSD. */
  private prompt(
    session: SessionRecord,
    sessionId: string,
    screen: StoredScreen,
    prefix?: string,
    page = 0,
  ): ServiceFlowResponse {
    if (!session.ussd) return promptResponse(sessionId, screen, prefix);
    const shown =
      screen.kind === 'select'
        ? this.ussd.page(screen, page, prefix)
        : this.ussd.text(prefix ? `${prefix}\n${screen.message}` : screen.message);
    if (shown.cut) this.warnCut(session.flow, screen.step);
    return promptResponse(sessionId, screen, prefix, shown.text);
  }

  /** A cart or end message on USSD, cut to the screen. */
  private shownText(session: SessionRecord, step: string, message: string): string {
    if (!session.ussd) return message;
    const shown = this.ussd.text(message);
    if (shown.cut) this.warnCut(session.flow, step);
    return shown.text;
  }

  /** One warning line per flow and step whose text had to be cut (not one per session). */
  private warnCut(flow: string, step: string): void {
    const id = `${flow}\u0000${step}`;
    if (this.cutWarned.has(id)) return;
    if (this.cutWarned.size < CUT_WARNINGS_LIMIT) this.cutWarned.add(id);
    const { screenSize, unicodeScreenSize } = this.options.ussd;
    this.logger.warn(
      `Flow ${flow}, step "${step}": a text longer than one USSD screen (${screenSize} characters, ${unicodeScreenSize} with a character outside GSM-7) was cut at a word boundary with "..."; shorten it`,
    );
  }

  /* --- Resumable sessions --------------------------------------------------------------------- */

  /** The resume question of a flow: a select of yes / no (shared by its sessions). */
  private resumeScreen(flow: ServiceFlowDefinition): StoredScreen {
    let screen = this.resumeScreens.get(flow.name);
    if (!screen) {
      const { messages } = this.options;
      const message = flow.resume?.message ?? messages.resume;
      const options = [
        Object.freeze({ Display: messages.resumeYes, Value: 'yes', Amount: 0 }),
        Object.freeze({ Display: messages.resumeNo, Value: 'no', Amount: 0 }),
      ];
      screen = Object.freeze({
        step: RESUME_STEP,
        kind: 'select',
        message,
        label: message,
        fieldType: 'text',
        field: RESUME_STEP,
        next: undefined,
        options: Object.freeze(options),
        validation: undefined,
      }) as StoredScreen;
      this.resumeScreens.set(flow.name, screen);
    }
    return screen;
  }

  /**
   * The unfinished session to offer at this start, if any: one of this flow, for this Mobile and
   * ServiceCode, within the window, at a step the flow still has, and not finished (a cart of it
   * means it was carted: never offered, even if its record was not deleted). Taken from the store
   * (deleted at the version read): of two starts at once, on any replicas, one only gets it.
   */
  private async resumeOffer(
    flow: ServiceFlowDefinition,
    session: SessionRecord,
    sessionId: string,
  ): Promise<ResumeRecord | undefined> {
    const key = resumeKey(session.serviceCode, session.mobile, session.account);
    const entry = await this.store.get<unknown>(key);
    const left = entry && readResume(entry.value);
    if (!left) return undefined;
    if (
      left.flow !== flow.name ||
      left.sessionId === sessionId ||
      Date.now() - left.at > flow.resume!.withinMs ||
      !stepOf(flow, left.screen.step) ||
      (await this.store.get(cartKey(left.sessionId)))
    ) {
      return undefined;
    }
    return (await deleteIfVersion(this.store, key, entry.version)) ? left : undefined;
  }

  /** The answer to the resume question: the old state under the new SessionId, or a fresh start. */
  private async answerResume(
    flow: ServiceFlowDefinition,
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number,
    raw: string,
  ): Promise<ServiceFlowResponse> {
    const screen = session.screen;
    let option = session.ussd ? this.ussd.chosen(screen, raw) : undefined;
    if (!option) {
      const check = checkAnswer(screen, raw, this.options.messages, this.options.defaultCountryCode);
      if (!check.ok) return this.prompt(session, sessionId, screen, check.reason);
      option = check.option;
    }
    // Offered once (taken at the offer): whatever the answer, the old session's record is used up.
    const left = session.resume;
    if (option?.Value === 'yes' && left) {
      const restored = record(session, left.screen, left.history, left.data, left.selections);
      if (this.logger.isLevelEnabled('debug'))
        this.logger.debug(
          `Session ${sessionId} continues session ${left.sessionId} at step "${left.screen.step}"`,
        );
      return this.save(
        sessionId,
        key,
        restored,
        version,
        () => this.prompt(restored, sessionId, left.screen),
        flow,
      );
    }
    const fresh = record(session, screen, undefined, {}, undefined);
    const run = await this.runner.run(flow, flow.start, sessionId, fresh, undefined);
    return this.apply(flow, sessionId, key, fresh, version, run, true);
  }

  /**
   * At `release` or `timeout`: a resumable flow's session that had an answer leaves its state for
   * the next dial, the window starting now.
   */
  private async keepForResume(sessionId: string, key: string, known?: SessionRecord): Promise<void> {
    if (!this.resumeGuarded) return;
    let session = known;
    if (!session) {
      if (!this.anyResumable()) return;
      const entry = await this.store.get<unknown>(key);
      session = entry ? readRecord(entry.value) : undefined;
    }
    if (!session) return;
    const flow = this.registry.get(session.flow);
    if (session.screen.step === RESUME_STEP) {
      // Gone before answering the question: the session it offered is left for the next dial again.
      if (flow?.resume && session.resume)
        await this.store.set(
          resumeKey(session.serviceCode, session.mobile, session.account),
          session.resume,
          {
            ttlMs: flow.resume.withinMs,
          },
        );
      return;
    }
    if (Object.keys(session.data).length === 0) return;
    if (flow?.resume) await this.writeResume(flow, sessionId, session);
  }

  /** Whether any flow is resumable (known once the flows are loaded): else a release reads nothing. */
  private anyResumable(): boolean {
    this.resumableFlows ??= this.registry.list().some((flow) => flow.resume !== undefined);
    return this.resumableFlows;
  }

  private async writeResume(
    flow: ServiceFlowDefinition,
    sessionId: string,
    session: SessionRecord,
  ): Promise<void> {
    if (!this.resumeGuarded) return;
    await this.store.set(
      resumeKey(session.serviceCode, session.mobile, session.account),
      resumeRecord(sessionId, session, Date.now()),
      {
        ttlMs: flow.resume!.withinMs,
      },
    );
  }

  /** A finished session (carted or ended) is never offered: its record goes. */
  private async dropResume(flow: ServiceFlowDefinition, session: SessionRecord): Promise<void> {
    if (flow.resume) await this.store.delete(resumeKey(session.serviceCode, session.mobile, session.account));
  }

  /** Turns a step's reply into the response, updating the session (and the cart) in the store. */
  private async apply(
    flow: ServiceFlowDefinition,
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number | undefined,
    run: StepRun,
    /** A fresh start over a session on screen (the resume question answered "no"): no earlier prompt. */
    fresh = false,
  ): Promise<ServiceFlowResponse> {
    const current = version === undefined || fresh ? undefined : session.screen;

    if (run.kind === 'busy') {
      // Same prompt again, unchanged session: the user retries the same entry.
      return current
        ? this.prompt(session, sessionId, current, this.options.messages.busy, session.page)
        : releaseResponse(sessionId, this.options.messages.busy);
    }
    if (run.kind === 'error') return this.fail(flow, sessionId, key, run.step, run.error);

    const { reply, step, data, selections } = run;

    try {
      switch (reply.kind) {
        case 'reject':
          if (!current)
            throw new Error(
              `Step "${step}" rejected, but there is no earlier prompt to ask again (it is the start step)`,
            );
          return this.prompt(
            session,
            sessionId,
            current,
            typeof reply.reason === 'string' && reply.reason ? reply.reason : this.options.messages.pattern,
            session.page,
          );

        case 'input':
        case 'select': {
          const next = this.nextStep(flow, step, reply.prompt.next);
          const screen = this.screens.screen(flow, step, reply, next);
          const history =
            current && this.keepHistory ? withLast(session.history, current, HISTORY_LIMIT) : undefined;
          const updated = record(session, screen, history, data, selections);
          return await this.save(
            sessionId,
            key,
            updated,
            version,
            () => this.prompt(updated, sessionId, screen),
            flow,
          );
        }

        case 'cart': {
          const item = checkCartItem(step, reply.cart?.message, reply.cart?.item);
          // A session's goods go out once whatever its carts: the fulfillment's delivery claim
          // (fulfillment.delivery.ts) keeps that, not the cart.
          const cartKeyName = cartKey(sessionId);
          const cart: StoredCart = {
            sessionId,
            flow: flow.name,
            serviceCode: session.serviceCode,
            mobile: session.mobile,
            item,
            data,
            createdAt: new Date().toISOString(),
          };
          if (session.operator !== undefined) cart.operator = session.operator;
          if (session.account !== undefined) cart.account = session.account;
          const written = await this.store.setIfAbsent(cartKeyName, cart, { ttlMs: this.options.cartTtlMs });
          await this.forget(key);
          await this.dropResume(flow, session);
          if (!written && !(await this.sameCart(cartKeyName, cart))) {
            // The SessionId was started again while its cart stood: the cart it has is the one paid for.
            this.logger.warn(
              `Session ${sessionId} already has a cart; another one (for ${maskMsisdn(session.mobile)}) was not written`,
            );
            return releaseResponse(sessionId, this.options.messages.sessionExpired);
          }
          if (this.logger.isLevelEnabled('debug')) {
            this.logger.debug(
              `Session ${sessionId} added "${item.ItemName}" x${item.Qty} at ${item.Price} to the cart`,
            );
          }
          const label = reply.cart.label ?? reply.cart.message;
          // On USSD the session ends here and payment follows outside it (the platform's SDK).
          if (session.ussd)
            return cartResponse(
              sessionId,
              this.shownText(session, step, reply.cart.message),
              label,
              item,
              'Release',
            );
          return cartResponse(sessionId, reply.cart.message, label, item);
        }

        case 'end': {
          if (typeof reply.message !== 'string')
            throw new HubtelValidationError(`Step "${step}" answered ctx.end() without a message string`);
          await this.forget(key);
          await this.dropResume(flow, session);
          return releaseResponse(
            sessionId,
            this.shownText(session, step, reply.message),
            reply.label ?? reply.message,
          );
        }
      }
    } catch (error) {
      return this.fail(flow, sessionId, key, step, error);
    }
    return this.fail(flow, sessionId, key, step, new Error(`Step "${step}" answered an unknown reply kind`));
  }

  /** Whether the cart stored under `key` is `cart` again (a repeated answer), not another one. */
  private async sameCart(key: string, cart: StoredCart): Promise<boolean> {
    const kept = (await this.store.get<StoredCart | null>(key))?.value;
    return (
      !!kept &&
      kept.mobile === cart.mobile &&
      accountOf(kept) === accountOf(cart) &&
      JSON.stringify(kept.item) === JSON.stringify(cart.item)
    );
  }

  /** The step a prompt leads to: its `next`, else the step declared after it. */
  private nextStep(flow: ServiceFlowDefinition, step: string, next: string | undefined): string {
    if (next !== undefined) {
      if (!stepOf(flow, next))
        throw new HubtelValidationError(
          `Step "${step}" of flow ${flow.name}: next step "${next}" does not exist`,
        );
      return next;
    }
    const steps = flow.steps;
    let index = 0;
    while (index < steps.length && steps[index]!.name !== step) index++;
    const following = steps[index + 1];
    if (!following) {
      throw new HubtelValidationError(
        `Step "${step}" of flow ${flow.name} asks for input but no step follows it: give the prompt a \`next\`, or end with ctx.addToCart() / ctx.end()`,
      );
    }
    return following.name;
  }

  /**
   * Writes the session (compare-and-set against the version read), then builds the answer. When
   * another call for the same session won the race, its prompt is answered instead.
   */
  private async save(
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number | undefined,
    answer: () => ServiceFlowResponse,
    /** A resumable flow: an answered state is also kept for the next dial. */
    flow?: ServiceFlowDefinition,
  ): Promise<ServiceFlowResponse> {
    if (version === undefined) {
      // A new initiation starts over, even if the SessionId was seen before; it lives
      // `sessionStartTtlMs` until its first answer, and counts against `maxPendingSessions`.
      const written = await this.store.set(key, session, this.startWrite);
      const evicted = this.pending.started(sessionId, written.version);
      if (evicted) await this.evict(evicted);
      return answer();
    }
    const written = await this.store.compareAndSet(key, version, session, this.sessionWrite);
    if (written) {
      this.pending.settled(sessionId);
      if (flow?.resume) await this.writeResume(flow, sessionId, session);
      return answer();
    }
    const entry = await this.store.get<unknown>(key);
    const winner = entry && readRecord(entry.value);
    this.logger.warn(`Concurrent answers for session ${sessionId}; the first one was kept`);
    return winner
      ? this.prompt(winner, sessionId, winner.screen, undefined, winner.page)
      : releaseResponse(sessionId, this.options.messages.sessionExpired);
  }

  private async fail(
    flow: ServiceFlowDefinition,
    sessionId: string,
    key: string,
    step: string,
    error: unknown,
  ): Promise<ServiceFlowResponse> {
    this.logger.error(
      `Step "${step}" of flow ${flow.name} failed (session ${sessionId}): ${describe(error)}`,
    );
    await this.forget(key);
    return releaseResponse(sessionId, this.options.messages.error);
  }

  private async forget(key: string): Promise<void> {
    await this.store.delete(key);
    this.pending.settled(key.slice(SERVICE_APP_KEYS.session.length));
  }

  /**
   * `maxPendingSessions` starts are waiting for their first answer: the oldest one gives way. Its
   * record is deleted only at the version it was started with, so a session that has since been
   * answered (on another instance sharing the store) is left alone. A failed delete only leaves
   * the record to its `sessionStartTtlMs`.
   */
  private async evict(evicted: EvictedStart): Promise<void> {
    const now = Date.now();
    if (now - this.capWarnedAt >= 60_000) {
      this.capWarnedAt = now;
      this.logger.warn(
        `${this.options.maxPendingSessions} sessions are waiting for their first answer (serviceApp.maxPendingSessions); the oldest unanswered starts are forgotten to make room for new ones (a flood of made-up session starts?)`,
      );
    }
    try {
      await deleteIfVersion(this.store, sessionKey(evicted.sessionId), evicted.version);
    } catch (error) {
      this.logger.debug(
        `Could not forget the unanswered start of session ${evicted.sessionId}: ${describe(error)}`,
      );
    }
  }

  /** The flow's own copy of a routed ServiceCode (one string for all its sessions), else a shared one. */
  private serviceCodeOf(flow: ServiceFlowDefinition, code: string): string {
    for (const routed of flow.serviceCodes) if (routed === code) return routed;
    return this.shared(code);
  }

  /** One string for all the sessions that carry the same value (see SharedStrings). */
  private shared(value: string): string {
    return this.sharedStrings.get(value);
  }
}
