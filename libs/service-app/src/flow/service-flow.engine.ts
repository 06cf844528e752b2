/** The step engine of one account: starts sessions, checks answers, runs steps, writes the session. */
import { HUBTEL_DEFAULT_ACCOUNT, HubtelValidationError, maskMsisdn } from 'nestjs-hubtel';
import { accountOf, cartKey } from '../service-app.constants.js';
import { ServiceAppWrongAccountError } from '../service-app.errors.js';
import { describe, type ServiceAppLogger } from '../service-app.logger.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { SelectOption, ServiceFlowRequest, ServiceFlowResponse } from '../service-app.types.js';
import { detectChannel } from '../service-app.ussd.js';
import type { FavoriteStart, ServiceFlowDefinition } from '../service-flow.context.js';
import type { StoredCart, StoredScreen } from '../service-flow.types.js';
import { checkAnswer } from './service-flow.answers.js';
import type { FlowCart } from './service-flow.cart.js';
import type { FlowPaging } from './service-flow.paging.js';
import type { ServiceFlowRegistry } from './service-flow.registry.js';
import { releaseResponse } from './service-flow.responses.js';
import { RESUME_STEP, type FlowResume } from './service-flow.resume.js';
import { FlowStepRunner, stepOf, type Answered, type StepRun } from './service-flow.runner.js';
import { ScreenCache } from './service-flow.screens.js';
import {
  SharedStrings,
  record,
  selectionsWithout,
  withLast,
  without,
  type SessionRecord,
} from './service-flow.session.js';
import type { FlowSessionStore } from './service-flow.store.js';

/** Most prompts kept for "back" (older ones are dropped; a session is short anyway). */
const HISTORY_LIMIT = 32;

export class FlowEngine {
  /** The named account this engine serves; undefined: the default account. */
  named: string | undefined;
  private readonly screens = new ScreenCache();
  private readonly sharedStrings = new SharedStrings();
  private readonly runner: FlowStepRunner;
  /** Without "back" no earlier prompt is ever shown again: none is kept. */
  private readonly keepHistory: boolean;

  constructor(
    private readonly registry: ServiceFlowRegistry,
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: ServiceAppLogger,
    private readonly sessions: FlowSessionStore,
    private readonly resume: FlowResume,
    private readonly paging: FlowPaging,
    private readonly cart: FlowCart,
  ) {
    this.runner = new FlowStepRunner(options, logger);
    this.keepHistory = options.backInputs.length > 0;
  }

  get account(): string {
    return this.named ?? HUBTEL_DEFAULT_ACCOUNT;
  }

  /** `initiation` (and `favorite`, with what it carried): the routed flow from its start step. */
  async initiate(
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
      // The flow's own copy of a routed code, else a shared one: one string for all its sessions.
      serviceCode:
        flow.serviceCodes.find((code) => code === request.ServiceCode) ??
        this.sharedStrings.get(request.ServiceCode),
      mobile: request.Mobile,
      operator: request.Operator === undefined ? undefined : this.sharedStrings.get(request.Operator),
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
    if (flow.resume && this.resume.guarded && !favorite) {
      const offer = await this.resume.offer(flow, session, sessionId);
      if (offer) {
        const screen = this.resume.screen(flow);
        session.screen = screen;
        session.resume = offer;
        return this.sessions.save(sessionId, key, session, undefined, () =>
          this.paging.prompt(session, sessionId, screen),
        );
      }
    }
    const run = await this.runner.run(flow, flow.start, sessionId, session, undefined, favorite);
    return this.apply(flow, sessionId, key, session, undefined, run);
  }

  /** Another account's SessionId (409), or one with a cart: else anyone could replace a paid cart. */
  private async taken(sessionId: string, key: string, mobile: string): Promise<boolean> {
    const [entry, cart] = await Promise.all([
      this.sessions.read(key),
      this.sessions.store.get<StoredCart | null>(cartKey(sessionId)),
    ]);
    if (entry?.session) this.assertOwn(sessionId, entry.session);
    if (!cart?.value) return false;
    if (accountOf(cart.value) !== this.account)
      throw new ServiceAppWrongAccountError('session', sessionId, this.account, accountOf(cart.value));
    this.logger.warn(
      `Initiation of session ${sessionId} by ${maskMsisdn(mobile)} refused: the session already has a cart (a SessionId used again?); answered "${this.options.messages.sessionExpired}"`,
    );
    return true;
  }

  /** `Response`: the entry checked against the prompt it answers, then the prompt's `next` step run. */
  async respond(request: ServiceFlowRequest, key: string): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const entry = await this.sessions.read(key);
    const session = entry?.session;
    if (session) this.assertOwn(sessionId, session);
    const flow = session && this.registry.get(session.flow);
    if (!entry || !session || !flow) {
      if (entry && !session) {
        // Written by another version of this module, or damaged: it cannot be continued.
        await this.sessions.forget(key);
        this.logger.debug(`Session ${sessionId} could not be read from the store; answered as expired`);
      } else {
        this.logger.debug(`Response for unknown or expired session ${sessionId}`);
      }
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    const version = entry.version;
    if (session.timedOut) {
      // The platform gave up on this session: nothing more runs in it.
      await this.sessions.forget(key);
      return releaseResponse(sessionId, this.options.messages.sessionExpired);
    }
    const raw = request.Message.trim();
    const screen = session.screen;

    if (this.paging.isBack(raw, screen, session.ussd))
      return this.back(flow, sessionId, key, session, version);
    if (screen.step === RESUME_STEP) return this.answerResume(flow, sessionId, key, session, version, raw);

    let chosen: SelectOption | undefined;
    if (session.ussd && screen.kind === 'select') {
      const page = this.paging.pageMove(screen, session.page ?? 0, raw);
      if (page !== undefined) {
        const moved = record(session, screen, session.history, session.data, session.selections, page);
        return this.sessions.save(sessionId, key, moved, version, () =>
          this.paging.prompt(moved, sessionId, screen, undefined, page),
        );
      }
      // The number shown beside an option (what the phone showed wins over an option's Value).
      chosen = this.paging.ussd.chosen(screen, raw);
      // A navigation key not offered on this page is never an option's Value: asked again.
      if (!chosen && this.paging.ussd.isNavigationKey(raw))
        return this.paging.prompt(session, sessionId, screen, this.options.messages.select, session.page);
    }
    const check: ReturnType<typeof checkAnswer> = chosen
      ? { ok: true, value: chosen.Value, option: chosen }
      : checkAnswer(screen, raw, this.options.messages, this.options.defaultCountryCode);
    if (!check.ok) return this.paging.prompt(session, sessionId, screen, check.reason, session.page);

    const next = screen.next;
    if (next === undefined || !stepOf(flow, next)) {
      // Checked when the prompt was answered; only a flow changed by a deploy mid-session lands here.
      this.logger.error(
        `Flow ${flow.name}: the prompt of step "${screen.step}" leads to no step ("${next}")`,
      );
      await this.sessions.forget(key);
      return releaseResponse(sessionId, this.options.messages.error);
    }
    const answered: Answered = { value: check.value, raw, field: screen.field, option: check.option };
    const run = await this.runner.run(flow, next, sessionId, session, answered);
    return this.apply(flow, sessionId, key, session, version, run);
  }

  /** A session of another account than this engine's is refused (ServiceAppWrongAccountError). */
  assertOwn(sessionId: string, session: SessionRecord): void {
    if (session.account !== this.named)
      throw new ServiceAppWrongAccountError('session', sessionId, this.account, accountOf(session));
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
      return this.paging.prompt(session, sessionId, session.screen, undefined, session.page);
    const previous = history[history.length - 1]!;
    // The answer to the prompt shown again is asked anew.
    const updated = record(
      session,
      previous,
      history.length > 1 ? history.slice(0, -1) : undefined,
      without(session.data, previous.field),
      selectionsWithout(session.selections, previous.field),
    );
    const answer = (): ServiceFlowResponse => this.paging.prompt(updated, sessionId, previous);
    return this.sessions.save(sessionId, key, updated, version, answer, () =>
      this.resume.write(flow, sessionId, updated),
    );
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
    let option = session.ussd ? this.paging.ussd.chosen(screen, raw) : undefined;
    if (!option) {
      const check = checkAnswer(screen, raw, this.options.messages, this.options.defaultCountryCode);
      if (!check.ok) return this.paging.prompt(session, sessionId, screen, check.reason);
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
      const answer = (): ServiceFlowResponse => this.paging.prompt(restored, sessionId, left.screen);
      return this.sessions.save(sessionId, key, restored, version, answer, () =>
        this.resume.write(flow, sessionId, restored),
      );
    }
    const fresh = record(session, screen, undefined, {}, undefined);
    const run = await this.runner.run(flow, flow.start, sessionId, fresh, undefined);
    return this.apply(flow, sessionId, key, fresh, version, run, true);
  }

  /** Turns a step's reply into the response, updating the session (and the cart) in the store. */
  private async apply(
    flow: ServiceFlowDefinition,
    sessionId: string,
    key: string,
    session: SessionRecord,
    version: number | undefined,
    run: StepRun,
    /** The resume question answered "no": no earlier prompt. */
    fresh = false,
  ): Promise<ServiceFlowResponse> {
    const current = version === undefined || fresh ? undefined : session.screen;
    if (run.kind === 'busy') {
      return current
        ? this.paging.prompt(session, sessionId, current, this.options.messages.busy, session.page)
        : releaseResponse(sessionId, this.options.messages.busy);
    }
    if (run.kind === 'error') return this.fail(flow, sessionId, key, run.step, run.error);

    const { reply, step, data, selections } = run;
    try {
      switch (reply.kind) {
        case 'reject': {
          if (!current)
            throw new Error(
              `Step "${step}" rejected, but there is no earlier prompt to ask again (it is the start step)`,
            );
          const reason = typeof reply.reason === 'string' && reply.reason ? reply.reason : undefined;
          const prefix = reason ?? this.options.messages.pattern;
          return this.paging.prompt(session, sessionId, current, prefix, session.page);
        }
        case 'input':
        case 'select': {
          const next = this.nextStep(flow, step, reply.prompt.next);
          const screen = this.screens.screen(flow, step, reply, next);
          const history =
            current && this.keepHistory ? withLast(session.history, current, HISTORY_LIMIT) : undefined;
          const updated = record(session, screen, history, data, selections);
          const answer = (): ServiceFlowResponse => this.paging.prompt(updated, sessionId, screen);
          return await this.sessions.save(sessionId, key, updated, version, answer, () =>
            this.resume.write(flow, sessionId, updated),
          );
        }
        case 'cart':
          return await this.cart.add(flow, sessionId, session, step, reply.cart, data, () =>
            this.finish(flow, key, session),
          );
        case 'end': {
          if (typeof reply.message !== 'string')
            throw new HubtelValidationError(`Step "${step}" answered ctx.end() without a message string`);
          await this.finish(flow, key, session);
          const shown = this.paging.shownText(!!session.ussd, session.flow, step, reply.message);
          return releaseResponse(sessionId, shown, reply.label ?? reply.message);
        }
      }
    } catch (error) {
      return this.fail(flow, sessionId, key, step, error);
    }
    return this.fail(flow, sessionId, key, step, new Error(`Step "${step}" answered an unknown reply kind`));
  }

  /** A finished session (carted or ended): forgotten, and never offered for resume. */
  private async finish(flow: ServiceFlowDefinition, key: string, session: SessionRecord): Promise<void> {
    await this.sessions.forget(key);
    await this.resume.drop(flow, session);
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
    const index = flow.steps.findIndex((candidate) => candidate.name === step);
    const following = flow.steps[index + 1];
    if (index < 0 || !following) {
      throw new HubtelValidationError(
        `Step "${step}" of flow ${flow.name} asks for input but no step follows it: give the prompt a \`next\`, or end with ctx.addToCart() / ctx.end()`,
      );
    }
    return following.name;
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
    await this.sessions.forget(key);
    return releaseResponse(sessionId, this.options.messages.error);
  }
}
