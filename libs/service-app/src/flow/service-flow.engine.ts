/** The step engine of one account: starts sessions, checks answers, runs steps, writes the session. */
import { describeError } from '#internal';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  HubtelValidationError,
  maskMsisdn,
  type HubtelStore,
  type HubtelLogger,
} from 'nestjs-hubtel';
import { accountOf } from '../service-app.constants.js';
import { ServiceAppWrongAccountError } from '../service-app.errors.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { ServiceFlowRequestDto } from '../service-app.dto.js';
import type { SelectOption, ServiceFlowResponse } from '../service-app.types.js';
import { detectChannel } from '../service-app.ussd.js';
import type { FavoriteStart, ServiceFlowDefinition } from '../service-flow.context.js';
import type { StoredScreen } from '../service-flow.types.js';
import { checkAnswer } from './service-flow.answers.js';
import type { ServiceFlowRegistry } from './service-flow.registry.js';
import { releaseResponse } from './service-flow.responses.js';
import { FlowResume, RESUME_STEP } from './service-flow.resume.js';
import { FlowStepRunner, stepOf, type Answered, type StepRun } from './service-flow.runner.js';
import { ScreenCache } from './service-flow.screens.js';
import {
  SharedStrings,
  record,
  selectionsWithout,
  without,
  type SessionRecord,
} from './service-flow.session.js';
import { FlowSessionStore } from './service-flow.store.js';
import { UssdScreens } from './service-flow.ussd.js';

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

  readonly ussd: UssdScreens;
  readonly resume: FlowResume;
  readonly sessions: FlowSessionStore;

  constructor(
    private readonly registry: ServiceFlowRegistry,
    store: HubtelStore,
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: HubtelLogger,
    guarded: boolean,
  ) {
    this.runner = new FlowStepRunner(options, logger);
    this.keepHistory = options.backInputs.length > 0;
    this.ussd = new UssdScreens(options.ussd, options.backInputs, logger);
    this.resume = new FlowResume(store, registry, logger, guarded);
    this.sessions = new FlowSessionStore(store, options, logger, this.ussd);
  }

  get account(): string {
    return this.named ?? HUBTEL_DEFAULT_ACCOUNT;
  }

  /** `initiation` (and `favorite`, with what it carried): the routed flow from its start step. */
  async initiate(
    request: ServiceFlowRequestDto,
    key: string,
    favorite?: FavoriteStart,
  ): Promise<ServiceFlowResponse> {
    const { SessionId: sessionId, ServiceCode: code, Operator: operator } = request;
    const { messages } = this.options;
    const flow = this.registry.route(code);
    if (!flow) {
      this.logger.warn(
        `No flow serves ServiceCode "${code}" (session ${sessionId}); answered "${messages.unavailable}"`,
      );
      return releaseResponse(sessionId, messages.unavailable);
    }
    if (await this.taken(sessionId, key, request.Mobile))
      return releaseResponse(sessionId, messages.sessionExpired);
    if (this.logger.isLevelEnabled('debug'))
      this.logger.debug(
        `Session ${sessionId} started by ${maskMsisdn(request.Mobile)} on ${code} → flow ${flow.name}`,
      );
    const start = {
      flow: flow.name,
      // The flow's own copy of a routed code, else a shared one: one string for all its sessions.
      serviceCode: flow.serviceCodes.find((c) => c === code) ?? this.sharedStrings.get(code),
      mobile: request.Mobile,
      operator: operator === undefined ? undefined : this.sharedStrings.get(operator),
      startedAt: Date.now(),
      ussd: detectChannel(request.Platform, operator, this.options.ussd) === 'ussd' || undefined,
      account: this.named,
    } as const;
    const t: Turn = { flow, sessionId, key, version: undefined };
    if (flow.resume && this.resume.guarded && !favorite) {
      const offer = await this.resume.offer(flow, start, sessionId);
      if (offer) {
        const { resume, resumeYes, resumeNo } = messages;
        const prompt = {
          message: flow.resume.message ?? resume,
          options: [
            { Display: resumeYes, Value: 'yes' },
            { Display: resumeNo, Value: 'no' },
          ],
        };
        const screen = this.screens.screen(flow, RESUME_STEP, { kind: 'select', prompt }, undefined);
        return this.show(t, { ...record(start, screen, undefined, {}, undefined), resume: offer });
      }
    }
    const session = record(start, undefined as unknown as StoredScreen, undefined, {}, undefined);
    const run = await this.runner.run(flow, flow.start, sessionId, session, undefined, favorite);
    return this.apply(t, session, run);
  }

  /** Another account's SessionId (409), or one with a cart: else anyone could replace a paid cart. */
  private async taken(sessionId: string, key: string, mobile: string): Promise<boolean> {
    const [entry, cart] = await Promise.all([this.sessions.read(key), this.sessions.cart(sessionId)]);
    if (entry?.session) this.assertOwn(sessionId, entry.session);
    if (!cart) return false;
    this.assertOwn(sessionId, cart);
    this.logger.warn(
      `Initiation of session ${sessionId} by ${maskMsisdn(mobile)} refused: the session already has a cart (a SessionId used again?); answered "${this.options.messages.sessionExpired}"`,
    );
    return true;
  }

  /** `Response`: the entry checked against the prompt it answers, then the prompt's `next` step run. */
  async respond(request: ServiceFlowRequestDto, key: string): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const { messages } = this.options;
    const entry = await this.sessions.read(key);
    const session = entry?.session;
    if (session) this.assertOwn(sessionId, session);
    const flow = session && this.registry.get(session.flow);
    // Unreadable (another version's, or damaged) or timed out (the platform gave up): forgotten.
    if (entry && (!session || session.timedOut)) await this.sessions.forget(key);
    if (!entry || !session || !flow || session.timedOut) {
      this.logger.debug(`Response for unknown, unreadable or expired session ${sessionId}`);
      return releaseResponse(sessionId, messages.sessionExpired);
    }
    const t: Turn = { flow, sessionId, key, version: entry.version };
    const raw = request.Message.trim();
    const screen = session.screen;

    if (this.ussd.isBack(raw, screen, session.ussd)) return this.back(t, session);

    let chosen: SelectOption | undefined;
    if (session.ussd && screen.kind === 'select') {
      const page = this.ussd.pageMove(screen, session.page ?? 0, raw);
      if (page !== undefined) {
        const moved = record(session, screen, session.history, session.data, session.selections, page);
        return this.sessions.save(sessionId, key, moved, t.version, () => this.ussd.prompt(moved, sessionId));
      }
      // The number shown beside an option (what the phone showed wins over an option's Value).
      chosen = this.ussd.chosen(screen, raw);
      // A navigation key not offered on this page is never an option's Value: asked again.
      if (!chosen && this.ussd.isNavigationKey(raw))
        return this.ussd.prompt(session, sessionId, messages.select);
    }
    const check: ReturnType<typeof checkAnswer> = chosen
      ? { ok: true, value: chosen.Value, option: chosen }
      : checkAnswer(screen, raw, messages, this.options.defaultCountryCode);
    if (!check.ok) return this.ussd.prompt(session, sessionId, check.reason);
    if (screen.step === RESUME_STEP) return this.answerResume(t, session, check.value === 'yes');

    const next = screen.next;
    // Checked when the prompt was answered; only a flow changed by a deploy mid-session fails here.
    if (next === undefined || !stepOf(flow, next))
      return this.fail(t, screen.step, new Error(`the prompt leads to no step ("${next}")`));
    const answered: Answered = { value: check.value, raw, field: screen.field, option: check.option };
    return this.apply(t, session, await this.runner.run(flow, next, sessionId, session, answered));
  }

  /** A session (or cart) of another account than this engine's is refused (ServiceAppWrongAccountError). */
  assertOwn(sessionId: string, session: { account?: string | undefined }): void {
    if (session.account !== this.named)
      throw new ServiceAppWrongAccountError('session', sessionId, this.account, accountOf(session));
  }

  /** Shows the `updated` session's screen once it is written (a resumable flow keeps it too). */
  private show(t: Turn, updated: SessionRecord): Promise<ServiceFlowResponse> {
    return this.sessions.save(
      t.sessionId,
      t.key,
      updated,
      t.version,
      () => this.ussd.prompt(updated, t.sessionId),
      () => this.resume.write(t.flow, t.sessionId, updated),
    );
  }

  private async back(t: Turn, session: SessionRecord): Promise<ServiceFlowResponse> {
    const history = session.history;
    const previous = history?.[history.length - 1];
    if (!previous) return this.ussd.prompt(session, t.sessionId);
    // The answer to the prompt shown again is asked anew.
    const updated = record(
      session,
      previous,
      history!.length > 1 ? history!.slice(0, -1) : undefined,
      without(session.data, previous.field),
      selectionsWithout(session.selections, previous.field),
    );
    return this.show(t, updated);
  }

  /** The answer to the resume question: the old state under the new SessionId, or a fresh start. */
  private async answerResume(t: Turn, session: SessionRecord, yes: boolean): Promise<ServiceFlowResponse> {
    // Offered once (taken at the offer): whatever the answer, the old session's record is used up.
    const left = session.resume;
    if (yes && left) {
      if (this.logger.isLevelEnabled('debug'))
        this.logger.debug(
          `Session ${t.sessionId} continues session ${left.sessionId} at step "${left.screen.step}"`,
        );
      const restored = record(session, left.screen, left.history, left.data, left.selections);
      return this.show(t, restored);
    }
    const fresh = record(session, session.screen, undefined, {}, undefined);
    const run = await this.runner.run(t.flow, t.flow.start, t.sessionId, fresh, undefined);
    return this.apply(t, fresh, run, true);
  }

  /** A step's reply, written and answered; `fresh`: "no" to resume (no earlier prompt to ask again). */
  private async apply(
    t: Turn,
    session: SessionRecord,
    run: StepRun,
    fresh = false,
  ): Promise<ServiceFlowResponse> {
    const { messages } = this.options;
    const current = t.version === undefined || fresh ? undefined : session.screen;
    if (run.kind === 'busy')
      return current
        ? this.ussd.prompt(session, t.sessionId, messages.busy)
        : releaseResponse(t.sessionId, messages.busy);
    if (run.kind === 'error') return this.fail(t, run.step, run.error);

    const { reply, step, data, selections } = run;
    try {
      switch (reply.kind) {
        case 'reject': {
          if (!current)
            throw new Error(
              'it rejected, but there is no earlier prompt to ask again (it is the start step)',
            );
          const reason = typeof reply.reason === 'string' && reply.reason ? reply.reason : messages.pattern;
          return this.ussd.prompt(session, t.sessionId, reason);
        }
        case 'input':
        case 'select': {
          const next = this.nextStep(t.flow, step, reply.prompt.next);
          const screen = this.screens.screen(t.flow, step, reply, next);
          const history =
            current && this.keepHistory
              ? [...(session.history ?? []).slice(1 - HISTORY_LIMIT), current]
              : undefined;
          return await this.show(t, record(session, screen, history, data, selections));
        }
        case 'cart':
          return await this.sessions.addToCart(t.sessionId, session, step, reply.cart, data, () =>
            this.finish(t, session),
          );
        case 'end': {
          if (typeof reply.message !== 'string')
            throw new HubtelValidationError(`Step "${step}" answered ctx.end() without a message string`);
          await this.finish(t, session);
          const shown = this.ussd.shownText(!!session.ussd, session.flow, step, reply.message);
          return releaseResponse(t.sessionId, shown, reply.label ?? reply.message);
        }
      }
    } catch (error) {
      return this.fail(t, step, error);
    }
    return this.fail(t, step, new Error('it answered an unknown reply kind'));
  }

  /** A finished session (carted or ended): forgotten, and never offered for resume. */
  private async finish(t: Turn, session: SessionRecord): Promise<void> {
    await this.sessions.forget(t.key);
    await this.resume.drop(t.flow, session);
  }

  /** The step a prompt leads to: its `next`, else the step declared after it. */
  private nextStep(flow: ServiceFlowDefinition, step: string, next: string | undefined): string {
    if (next !== undefined && !stepOf(flow, next))
      throw new HubtelValidationError(
        `Step "${step}" of flow ${flow.name}: next step "${next}" does not exist`,
      );
    const index = flow.steps.findIndex((candidate) => candidate.name === step);
    const name = next ?? (index < 0 ? undefined : flow.steps[index + 1]?.name);
    if (name === undefined)
      throw new HubtelValidationError(
        `Step "${step}" of flow ${flow.name} asks for input but no step follows it: give the prompt a \`next\`, or end with ctx.addToCart() / ctx.end()`,
      );
    return name;
  }

  private async fail(t: Turn, step: string, error: unknown): Promise<ServiceFlowResponse> {
    this.logger.error(
      `Step "${step}" of flow ${t.flow.name} failed (session ${t.sessionId}): ${describeError(error)}`,
    );
    await this.sessions.forget(t.key);
    return releaseResponse(t.sessionId, this.options.messages.error);
  }
}

/** One request's place: its flow, SessionId, store key and the version read (undefined: a start). */
interface Turn {
  flow: ServiceFlowDefinition;
  sessionId: string;
  key: string;
  version: number | undefined;
}
