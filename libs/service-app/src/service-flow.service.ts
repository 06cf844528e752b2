import { Inject, Injectable, Optional } from '@nestjs/common';
import { deleteIfVersion } from '#internal';
import {
  HUBTEL_TELEMETRY,
  HubtelStoreUnavailableError,
  HubtelValidationError,
  MemoryStore,
  maskMsisdn,
  type HubtelStore,
  type HubtelTelemetry,
  type StoreWriteOptions,
} from 'nestjs-hubtel';
import {
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_KEYS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_STORE,
} from './service-app.constants.js';
import { parseRequest, validateServiceFlowRequest } from './service-app.dto.js';
import { ServiceAppLogger } from './service-app.logger.js';
import type { ResolvedServiceAppOptions } from './service-app.options.js';
import type { ServiceFlowRequest, ServiceFlowResponse } from './service-app.types.js';
import { checkAnswer } from './service-flow.answers.js';
import { PendingStarts, type EvictedStart } from './service-flow.pending.js';
import { ServiceFlowRegistry } from './service-flow.registry.js';
import {
  ScreenCache,
  cartResponse,
  checkCartItem,
  promptResponse,
  releaseResponse,
} from './service-flow.responses.js';
import { FlowStepRunner, describe, stepOf, type Answered, type StepRun } from './service-flow.runner.js';
import {
  SharedStrings,
  cartKey,
  readRecord,
  record,
  selectionsWithout,
  sessionKey,
  storedSession,
  withLast,
  without,
  type SessionRecord,
} from './service-flow.session.js';
import { timedStep } from './service-flow.telemetry.js';
import type { ServiceFlowDefinition, StoredCart, StoredScreen, StoredSession } from './service-flow.types.js';

/** Most prompts kept for "back" (older ones are dropped; a session is short anyway). */
const HISTORY_LIMIT = 32;

/**
 * Serves the service interaction endpoint: one call = one answer of the user, one response.
 *
 * - `initiation` starts the flow routed by ServiceCode (or the default flow) at its start step.
 * - `Response` checks the entry against the prompt it answers (re-asking with an explanation when
 *   it does not pass), handles "back", then runs the prompt's `next` step.
 * - `release` (and `timeout`) forget the session.
 *
 * Sessions live in the store under their SessionId with a sliding TTL, written with
 * compare-and-set so two concurrent calls for one session cannot both advance it. Steps run under
 * the step budget: past it the user gets "please try again" on the same prompt and the late
 * answer is dropped. Nothing here answers a 500: an unexpected failure ends the session politely,
 * and a stored session this version cannot read is treated as expired.
 */
@Injectable()
export class ServiceFlowService {
  private readonly logger = new ServiceAppLogger();
  private readonly screens = new ScreenCache();
  private readonly sessionWrite: StoreWriteOptions;
  /** A start is written with the shorter `sessionStartTtlMs`; its first answer re-writes it with `sessionTtlMs`. */
  private readonly startWrite: StoreWriteOptions;
  private readonly pending: PendingStarts;
  /** When the cap of pending starts was last reported (said at most once a minute). */
  private capWarnedAt = -Infinity;
  private readonly keepHistory: boolean;
  private readonly sharedStrings = new SharedStrings();
  private readonly runner: FlowStepRunner;
  /** False for a MemoryStore (it answers at once): no time-out guard is armed per request then. */
  private readonly storeMayStall: boolean;

  constructor(
    private readonly registry: ServiceFlowRegistry,
    @Inject(SERVICE_APP_STORE) private readonly store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
  ) {
    this.sessionWrite = Object.freeze({ ttlMs: options.sessionTtlMs });
    this.startWrite = Object.freeze({ ttlMs: options.sessionStartTtlMs });
    this.pending = new PendingStarts(options.maxPendingSessions, options.sessionStartTtlMs);
    // Without "back" no earlier prompt is ever shown again: none is kept.
    this.keepHistory = options.backInputs.length > 0;
    this.storeMayStall = !(store instanceof MemoryStore);
    this.runner = new FlowStepRunner(options, this.logger);
  }

  /**
   * Answers one service-flow request (the body as received). Throws HubtelValidationError (with
   * `issues`) when the body is not a valid service-flow request; never throws otherwise.
   */
  async handle(body: unknown): Promise<ServiceFlowResponse> {
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
        default:
          return await this.release(request, key);
      }
    } catch (error) {
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
    if (!record) return undefined;
    return storedSession(sessionId, record);
  }

  private async initiate(request: ServiceFlowRequest, key: string): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const flow = this.registry.route(request.ServiceCode);
    if (!flow) {
      this.logger.warn(
        `No flow serves ServiceCode "${request.ServiceCode}" (session ${sessionId}); answered "${this.options.messages.unavailable}"`,
      );
      return releaseResponse(sessionId, this.options.messages.unavailable);
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
    };
    const run = await this.runner.run(flow, flow.start, sessionId, session, undefined);
    return this.apply(flow, sessionId, key, session, undefined, run);
  }

  private async respond(request: ServiceFlowRequest, key: string): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const entry = await this.store.get<unknown>(key);
    const session = entry && readRecord(entry.value);
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
    const raw = request.Message.trim();
    const screen = session.screen;

    if (this.isBack(raw, screen)) return this.back(sessionId, key, session, version);

    const check = checkAnswer(screen, raw, this.options.messages, this.options.defaultCountryCode);
    if (!check.ok) return promptResponse(sessionId, screen, check.reason);

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
    await this.forget(key);
    this.logger.debug(`Session ${request.SessionId} released by the platform (${request.Type})`);
    return releaseResponse(request.SessionId, this.options.messages.released);
  }

  private isBack(raw: string, screen: StoredScreen): boolean {
    if (!this.options.backInputs.includes(raw)) return false;
    // An option whose Value is the back input wins: the user chose it.
    if (screen.kind === 'select' && screen.options) {
      for (const option of screen.options) if (option.Value === raw) return false;
    }
    return true;
  }

  private async back(
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number,
  ): Promise<ServiceFlowResponse> {
    const history = session.history;
    if (!history || history.length === 0) return promptResponse(sessionId, session.screen);
    const previous = history[history.length - 1]!;
    // The answer to the prompt shown again is asked anew.
    const updated = record(
      session,
      previous,
      history.length > 1 ? history.slice(0, -1) : undefined,
      without(session.data, previous.field),
      selectionsWithout(session.selections, previous.field),
    );
    return this.save(sessionId, key, updated, version, () => promptResponse(sessionId, previous));
  }

  /** Turns a step's reply into the response, updating the session (and the cart) in the store. */
  private async apply(
    flow: ServiceFlowDefinition,
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number | undefined,
    run: StepRun,
  ): Promise<ServiceFlowResponse> {
    const current = version === undefined ? undefined : session.screen;

    if (run.kind === 'busy') {
      // Same prompt again, unchanged session: the user retries the same entry.
      return current
        ? promptResponse(sessionId, current, this.options.messages.busy)
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
          return promptResponse(
            sessionId,
            current,
            typeof reply.reason === 'string' && reply.reason ? reply.reason : this.options.messages.pattern,
          );

        case 'input':
        case 'select': {
          const next = this.nextStep(flow, step, reply.prompt.next);
          const screen = this.screens.screen(flow, step, reply, next);
          const history =
            current && this.keepHistory ? withLast(session.history, current, HISTORY_LIMIT) : undefined;
          const updated = record(session, screen, history, data, selections);
          return await this.save(sessionId, key, updated, version, () => promptResponse(sessionId, screen));
        }

        case 'cart': {
          const item = checkCartItem(step, reply.cart?.message, reply.cart?.item);
          const cartKeyName = cartKey(sessionId);
          const existing = await this.store.get<StoredCart>(cartKeyName);
          if (existing?.value.orderId) {
            // This session's cart was already paid for: a second cart must not be fulfilled twice.
            this.logger.warn(
              `Session ${sessionId} already has a paid cart (order ${existing.value.orderId}); a new cart was refused`,
            );
            await this.forget(key);
            return releaseResponse(sessionId, this.options.messages.error);
          }
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
          await this.store.set(cartKeyName, cart, { ttlMs: this.options.cartTtlMs });
          await this.forget(key);
          if (this.logger.isLevelEnabled('debug')) {
            this.logger.debug(
              `Session ${sessionId} added "${item.ItemName}" x${item.Qty} at ${item.Price} to the cart`,
            );
          }
          const label = reply.cart.label ?? reply.cart.message;
          return cartResponse(sessionId, reply.cart.message, label, item);
        }

        case 'end': {
          if (typeof reply.message !== 'string')
            throw new HubtelValidationError(`Step "${step}" answered ctx.end() without a message string`);
          await this.forget(key);
          return releaseResponse(sessionId, reply.message, reply.label ?? reply.message);
        }
      }
    } catch (error) {
      return this.fail(flow, sessionId, key, step, error);
    }
    return this.fail(flow, sessionId, key, step, new Error(`Step "${step}" answered an unknown reply kind`));
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
      return answer();
    }
    const entry = await this.store.get<unknown>(key);
    const winner = entry && readRecord(entry.value);
    this.logger.warn(`Concurrent answers for session ${sessionId}; the first one was kept`);
    return winner
      ? promptResponse(sessionId, winner.screen)
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
