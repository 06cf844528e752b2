import { Inject, Injectable } from '@nestjs/common';
import {
  HubtelValidationError,
  maskMsisdn,
  redactToString,
  type HubtelStore,
  type StoreEntry,
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
import type { SelectOption, ServiceFlowRequest, ServiceFlowResponse } from './service-app.types.js';
import { checkAnswer } from './service-flow.answers.js';
import { FlowContext, type FlowSessionInfo } from './service-flow.context.js';
import { ServiceFlowRegistry } from './service-flow.registry.js';
import {
  cartResponse,
  checkCartItem,
  inputScreen,
  promptResponse,
  releaseResponse,
  selectScreen,
} from './service-flow.responses.js';
import type {
  FlowReply,
  FlowValue,
  ServiceFlowDefinition,
  StoredCart,
  StoredScreen,
  StoredSession,
} from './service-flow.types.js';

/** Most prompts kept for "back" (older ones are dropped; a session is short anyway). */
const HISTORY_LIMIT = 32;

type StepRun =
  | {
      kind: 'reply';
      step: string;
      reply: Exclude<FlowReply, { kind: 'goto' }>;
      data: Record<string, unknown>;
      selections: Record<string, SelectOption>;
    }
  | { kind: 'busy' }
  | { kind: 'error'; step: string; error: unknown };

interface Answered {
  value: FlowValue;
  raw: string;
  field: string;
  option?: SelectOption;
}

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
 * answer is dropped. Nothing here answers a 500: an unexpected failure ends the session politely.
 */
@Injectable()
export class ServiceFlowService {
  private readonly logger = new ServiceAppLogger();

  constructor(
    private readonly registry: ServiceFlowRegistry,
    @Inject(SERVICE_APP_STORE) private readonly store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
  ) {}

  /**
   * Answers one service-flow request (the body as received). Throws HubtelValidationError (with
   * `issues`) when the body is not a valid service-flow request; never throws otherwise.
   */
  async handle(body: unknown): Promise<ServiceFlowResponse> {
    const request = parseRequest(validateServiceFlowRequest, body, 'service-flow request');
    try {
      switch (request.Type.toLowerCase()) {
        case 'initiation':
          return await this.initiate(request);
        case 'response':
          return await this.respond(request);
        default:
          return await this.release(request);
      }
    } catch (error) {
      // The store failed, or a bug: the platform still gets a well-formed answer.
      this.logger.error(`Service-flow request of session ${request.SessionId} failed: ${describe(error)}`);
      await this.forget(request.SessionId).catch(() => undefined);
      return releaseResponse(request.SessionId, this.options.messages.error);
    }
  }

  /** The stored session of a SessionId, if it is active (for diagnostics and tests). */
  async getSession(sessionId: string): Promise<StoredSession | undefined> {
    return (await this.store.get<StoredSession>(sessionKey(sessionId)))?.value;
  }

  private async initiate(request: ServiceFlowRequest): Promise<ServiceFlowResponse> {
    const flow = this.registry.route(request.ServiceCode);
    if (!flow) {
      this.logger.warn(
        `No flow serves ServiceCode "${request.ServiceCode}" (session ${request.SessionId}); answered "${this.options.messages.unavailable}"`,
      );
      return releaseResponse(request.SessionId, this.options.messages.unavailable);
    }
    this.logger.debug(
      `Session ${request.SessionId} started by ${maskMsisdn(request.Mobile)} on ${request.ServiceCode} → flow ${flow.name}`,
    );
    const session: StoredSession = {
      sessionId: request.SessionId,
      flow: flow.name,
      serviceCode: request.ServiceCode,
      mobile: request.Mobile,
      screen: undefined as unknown as StoredScreen,
      history: [],
      data: {},
      selections: {},
      startedAt: new Date().toISOString(),
    };
    if (request.Operator !== undefined) session.operator = request.Operator;
    const run = await this.run(flow, flow.start, session, undefined);
    return this.apply(flow, session, undefined, run);
  }

  private async respond(request: ServiceFlowRequest): Promise<ServiceFlowResponse> {
    const entry = await this.store.get<StoredSession>(sessionKey(request.SessionId));
    const flow = entry && this.registry.get(entry.value.flow);
    if (!entry || !flow) {
      this.logger.debug(`Response for unknown or expired session ${request.SessionId}`);
      return releaseResponse(request.SessionId, this.options.messages.sessionExpired);
    }
    const session = entry.value;
    const raw = request.Message.trim();
    const screen = session.screen;

    if (this.isBack(raw, screen)) return this.back(session, entry.version);

    const check = checkAnswer(screen, raw, this.options.messages, this.options.defaultCountryCode);
    if (!check.ok) return promptResponse(session.sessionId, screen, check.reason);

    const next = screen.next;
    if (next === undefined || !flow.steps.some((s) => s.name === next)) {
      // Checked when the prompt was answered; only a flow changed by a deploy mid-session lands here.
      this.logger.error(
        `Flow ${flow.name}: the prompt of step "${screen.step}" leads to no step ("${next}")`,
      );
      await this.forget(session.sessionId);
      return releaseResponse(session.sessionId, this.options.messages.error);
    }
    const answered: Answered = { value: check.value, raw, field: screen.field, option: check.option };
    const run = await this.run(flow, next, session, answered);
    return this.apply(flow, session, entry.version, run);
  }

  private async release(request: ServiceFlowRequest): Promise<ServiceFlowResponse> {
    await this.forget(request.SessionId);
    this.logger.debug(`Session ${request.SessionId} released by the platform (${request.Type})`);
    return releaseResponse(request.SessionId, this.options.messages.released);
  }

  private isBack(raw: string, screen: StoredScreen): boolean {
    if (!this.options.backInputs.includes(raw)) return false;
    // An option whose Value is the back input wins: the user chose it.
    return !(screen.kind === 'select' && (screen.options ?? []).some((o) => o.Value === raw));
  }

  private async back(session: StoredSession, version: number): Promise<ServiceFlowResponse> {
    if (session.history.length === 0) return promptResponse(session.sessionId, session.screen);
    const history = session.history.slice(0, -1);
    const previous = session.history[session.history.length - 1]!;
    const data = { ...session.data };
    const selections = { ...session.selections };
    // The answer to the prompt shown again is asked anew.
    delete data[previous.field];
    delete selections[previous.field];
    const updated: StoredSession = { ...session, screen: previous, history, data, selections };
    return this.save(updated, version, () => promptResponse(session.sessionId, previous));
  }

  /** Runs `step` (and the steps it `goTo`s) under the step budget. */
  private async run(
    flow: ServiceFlowDefinition,
    step: string,
    session: StoredSession,
    answered: Answered | undefined,
  ): Promise<StepRun> {
    const data = { ...session.data };
    const selections = { ...session.selections };
    if (answered) {
      data[answered.field] = answered.value;
      if (answered.option) selections[answered.field] = answered.option;
      else delete selections[answered.field];
    }
    const info: FlowSessionInfo = {
      sessionId: session.sessionId,
      mobile: session.mobile,
      serviceCode: session.serviceCode,
    };
    if (session.operator !== undefined) info.operator = session.operator;
    let current = step;

    const work = (async (): Promise<StepRun> => {
      for (let hops = 0; ; hops++) {
        const definition = flow.steps.find((s) => s.name === current);
        if (!definition)
          return {
            kind: 'error',
            step: current,
            error: new Error(`Flow ${flow.name} has no step "${current}"`),
          };
        const ctx = new FlowContext({
          step: current,
          session: info,
          data,
          selections,
          answer: answered?.value,
          rawAnswer: answered?.raw,
          field: answered?.field,
        });
        const reply = await definition.handler(ctx);
        if (!reply || typeof reply !== 'object' || typeof (reply as { kind?: unknown }).kind !== 'string') {
          return {
            kind: 'error',
            step: current,
            error: new Error(
              `Step "${current}" of flow ${flow.name} must return ctx.input(), ctx.select(), ctx.addToCart(), ctx.end(), ctx.goTo() or ctx.reject()`,
            ),
          };
        }
        if (reply.kind !== 'goto') return { kind: 'reply', step: current, reply, data, selections };
        if (hops >= SERVICE_APP_DEFAULTS.maxRedirects) {
          return {
            kind: 'error',
            step: current,
            error: new Error(
              `Flow ${flow.name}: more than ${SERVICE_APP_DEFAULTS.maxRedirects} goTo() in a row (a loop?)`,
            ),
          };
        }
        current = reply.step;
      }
    })().catch((error: unknown): StepRun => ({ kind: 'error', step: current, error }));

    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<StepRun>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'busy' }), this.options.stepBudgetMs);
    });
    try {
      const result = await Promise.race([work, budget]);
      if (result.kind === 'busy') {
        this.logger.warn(
          `Step "${current}" of flow ${flow.name} took longer than ${this.options.stepBudgetMs} ms (session ${session.sessionId}); answered "try again"`,
        );
        // The late answer is dropped; its errors are logged, never unhandled.
        void work.then((late) => {
          if (late.kind === 'error')
            this.logger.error(
              `Late step "${late.step}" of flow ${flow.name} failed: ${describe(late.error)}`,
            );
        });
      }
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Turns a step's reply into the response, updating the session (and the cart) in the store. */
  private async apply(
    flow: ServiceFlowDefinition,
    session: StoredSession,
    version: number | undefined,
    run: StepRun,
  ): Promise<ServiceFlowResponse> {
    const { sessionId } = session;
    const current = version === undefined ? undefined : session.screen;

    if (run.kind === 'busy') {
      // Same prompt again, unchanged session: the user retries the same entry.
      return current
        ? promptResponse(sessionId, current, this.options.messages.busy)
        : releaseResponse(sessionId, this.options.messages.busy);
    }
    if (run.kind === 'error') return this.fail(flow, session, run.step, run.error);

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
          const screen =
            reply.kind === 'input'
              ? inputScreen(step, reply.prompt, next)
              : selectScreen(step, reply.prompt, next);
          const history = current ? [...session.history, current].slice(-HISTORY_LIMIT) : [];
          const updated: StoredSession = { ...session, screen, history, data, selections };
          return await this.save(updated, version, () => promptResponse(sessionId, screen));
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
            await this.forget(sessionId);
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
          await this.forget(sessionId);
          this.logger.debug(
            `Session ${sessionId} added "${item.ItemName}" x${item.Qty} at ${item.Price} to the cart`,
          );
          const label = reply.cart.label ?? reply.cart.message;
          return cartResponse(sessionId, reply.cart.message, label, item);
        }

        case 'end': {
          if (typeof reply.message !== 'string')
            throw new HubtelValidationError(`Step "${step}" answered ctx.end() without a message string`);
          await this.forget(sessionId);
          return releaseResponse(sessionId, reply.message, reply.label ?? reply.message);
        }
      }
    } catch (error) {
      return this.fail(flow, session, step, error);
    }
    return this.fail(flow, session, step, new Error(`Step "${step}" answered an unknown reply kind`));
  }

  /** The step a prompt leads to: its `next`, else the step declared after it. */
  private nextStep(flow: ServiceFlowDefinition, step: string, next: string | undefined): string {
    if (next !== undefined) {
      if (!flow.steps.some((s) => s.name === next))
        throw new HubtelValidationError(
          `Step "${step}" of flow ${flow.name}: next step "${next}" does not exist`,
        );
      return next;
    }
    const index = flow.steps.findIndex((s) => s.name === step);
    const following = flow.steps[index + 1];
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
    session: StoredSession,
    version: number | undefined,
    answer: () => ServiceFlowResponse,
  ): Promise<ServiceFlowResponse> {
    const key = sessionKey(session.sessionId);
    const ttlMs = this.options.sessionTtlMs;
    if (version === undefined) {
      // A new initiation starts over, even if the SessionId was seen before.
      await this.store.set(key, session, { ttlMs });
      return answer();
    }
    const written = await this.store.compareAndSet(key, version, session, { ttlMs });
    if (written) return answer();
    const winner: StoreEntry<StoredSession> | undefined = await this.store.get<StoredSession>(key);
    this.logger.warn(`Concurrent answers for session ${session.sessionId}; the first one was kept`);
    return winner
      ? promptResponse(session.sessionId, winner.value.screen)
      : releaseResponse(session.sessionId, this.options.messages.sessionExpired);
  }

  private async fail(
    flow: ServiceFlowDefinition,
    session: StoredSession,
    step: string,
    error: unknown,
  ): Promise<ServiceFlowResponse> {
    this.logger.error(
      `Step "${step}" of flow ${flow.name} failed (session ${session.sessionId}): ${describe(error)}`,
    );
    await this.forget(session.sessionId);
    return releaseResponse(session.sessionId, this.options.messages.error);
  }

  private async forget(sessionId: string): Promise<void> {
    await this.store.delete(sessionKey(sessionId));
  }
}

export function sessionKey(sessionId: string): string {
  return `${SERVICE_APP_KEYS.session}${sessionId}`;
}

export function cartKey(sessionId: string): string {
  return `${SERVICE_APP_KEYS.cart}${sessionId}`;
}

function describe(error: unknown): string {
  if (error instanceof Error) return redactToString(error.message);
  return redactToString(String(error));
}
