/** Runs a flow's step and the steps it `goTo`s, for one answer, under the step budget. */
import type { HubtelLogger } from 'nestjs-hubtel';
import { describeError, within } from '#internal';
import { SERVICE_APP_DEFAULTS, accountOf } from '../service-app.constants.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { SelectOption } from '../service-app.types.js';
import {
  FlowContext,
  type FavoriteStart,
  type FlowSessionInfo,
  type ServiceFlowDefinition,
} from '../service-flow.context.js';
import { selectionsWithout, type SessionRecord } from './service-flow.session.js';
import type { FlowReply, FlowValue } from '../service-flow.types.js';

/** Selections of a session that has none (never written: `run` copies before it writes). */
const NO_SELECTIONS: Record<string, SelectOption> = Object.freeze({}) as Record<string, SelectOption>;

export type StepRun =
  | {
      kind: 'reply';
      step: string;
      reply: Exclude<FlowReply, { kind: 'goto' }>;
      data: Record<string, unknown>;
      selections: Record<string, SelectOption> | undefined;
    }
  | { kind: 'busy' }
  | { kind: 'error'; step: string; error: unknown };
const BUSY: StepRun = Object.freeze({ kind: 'busy' });

export interface Answered {
  value: FlowValue;
  raw: string;
  field: string;
  option?: SelectOption;
}

export class FlowStepRunner {
  constructor(
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: HubtelLogger,
  ) {}

  /** Runs `step` and its `goTo`s: no timer until a step answers with a promise (budget from the start). */
  async run(
    flow: ServiceFlowDefinition,
    step: string,
    sessionId: string,
    session: SessionRecord,
    answered: Answered | undefined,
    favorite?: FavoriteStart,
  ): Promise<StepRun> {
    const started = performance.now();
    // Copies: stored objects are shared by the versions of a session.
    const data: Record<string, unknown> = { ...session.data };
    let selections = session.selections;
    if (answered) {
      data[answered.field] = answered.value;
      selections = answered.option
        ? { ...selections, [answered.field]: answered.option }
        : selectionsWithout(selections, answered.field);
    }
    const info: FlowSessionInfo = {
      sessionId,
      mobile: session.mobile,
      serviceCode: session.serviceCode,
      channel: session.ussd ? 'ussd' : 'app',
      account: accountOf(session),
    };
    if (session.operator !== undefined) info.operator = session.operator;
    if (favorite) info.favorite = favorite;
    const { value, raw, field } = answered ?? {};
    let current = step;
    for (let hops = 0; ; hops++) {
      let reply: unknown;
      try {
        const definition = stepOf(flow, current);
        if (!definition) throw new Error(`Flow ${flow.name} has no step "${current}"`);
        const ctx = new FlowContext(current, info, data, selections ?? NO_SELECTIONS, value, raw, field);
        reply = definition.handler(ctx);
        if (isThenable(reply)) reply = await this.underBudget(flow, current, sessionId, reply, started);
      } catch (error) {
        return { kind: 'error', step: current, error };
      }
      if (reply === BUSY) return BUSY;
      if (!reply || typeof reply !== 'object' || typeof (reply as { kind?: unknown }).kind !== 'string')
        return failed(
          current,
          `Step "${current}" of flow ${flow.name} must return ctx.input(), ctx.select(), ctx.addToCart(), ctx.end(), ctx.goTo() or ctx.reject()`,
        );
      const answer = reply as FlowReply;
      if (answer.kind !== 'goto') return { kind: 'reply', step: current, reply: answer, data, selections };
      const max = SERVICE_APP_DEFAULTS.maxRedirects;
      if (hops >= max)
        return failed(current, `Flow ${flow.name}: more than ${max} goTo() in a row (a loop?)`);
      current = answer.step;
    }
  }

  /** An asynchronous step's reply within what is left of the step budget (BUSY past it). */
  private async underBudget(
    flow: ServiceFlowDefinition,
    step: string,
    sessionId: string,
    pending: PromiseLike<unknown>,
    started: number,
  ): Promise<unknown> {
    const work = Promise.resolve(pending);
    const budgetMs = this.options.stepBudgetMs;
    const result = await within(work, Math.max(0, budgetMs - (performance.now() - started)), BUSY);
    if (result === BUSY) {
      this.logger.warn(
        `Step "${step}" of flow ${flow.name} took longer than ${budgetMs} ms (session ${sessionId}); answered "try again"`,
      );
      // The late answer is dropped; its errors are logged, never unhandled.
      work.catch((error: unknown) =>
        this.logger.error(`Late step "${step}" of flow ${flow.name} failed: ${describeError(error)}`),
      );
    }
    return result;
  }
}

function failed(step: string, message: string): StepRun {
  return { kind: 'error', step, error: new Error(message) };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

export function stepOf(flow: ServiceFlowDefinition, name: string) {
  return flow.steps.find((step) => step.name === name);
}
