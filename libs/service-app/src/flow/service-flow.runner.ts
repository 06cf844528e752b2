/** Runs a flow's step and the steps it `goTo`s, for one answer, under the step budget. */
import { SERVICE_APP_DEFAULTS, accountOf } from '../service-app.constants.js';
import { describe, type ServiceAppLogger } from '../service-app.logger.js';
import { within } from '../service-app.time.js';
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

/** One run of a step and the steps it `goTo`s. */
interface Walk {
  flow: ServiceFlowDefinition;
  info: FlowSessionInfo;
  data: Record<string, unknown>;
  selections: Record<string, SelectOption> | undefined;
  answered: Answered | undefined;
  current: string;
  hops: number;
}

/** Runs steps under the step budget; one per account's engine. */
export class FlowStepRunner {
  constructor(
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: ServiceAppLogger,
  ) {}

  /** Runs `step` and its `goTo`s: no timer until a step answers with a promise (budget from the start). */
  run(
    flow: ServiceFlowDefinition,
    step: string,
    sessionId: string,
    session: SessionRecord,
    answered: Answered | undefined,
    favorite?: FavoriteStart,
  ): StepRun | Promise<StepRun> {
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
    const walk: Walk = { flow, info, data, selections, answered, current: step, hops: 0 };
    const result = this.walk(walk);
    return result instanceof Promise ? this.underBudget(walk, sessionId, result, started) : result;
  }

  /** Runs the walk's current step and the ones it `goTo`s; a promise once a step answers with one. */
  private walk(w: Walk): StepRun | Promise<StepRun> {
    for (;;) {
      const definition = stepOf(w.flow, w.current);
      let reply: unknown;
      try {
        if (!definition) throw new Error(`Flow ${w.flow.name} has no step "${w.current}"`);
        reply = definition.handler(
          new FlowContext(
            w.current,
            w.info,
            w.data,
            w.selections ?? NO_SELECTIONS,
            w.answered?.value,
            w.answered?.raw,
            w.answered?.field,
          ),
        );
      } catch (error) {
        return { kind: 'error', step: w.current, error };
      }
      if (isThenable(reply)) {
        return Promise.resolve(reply).then(
          (answer): StepRun | Promise<StepRun> => this.settle(w, answer) ?? this.walk(w),
          (error: unknown): StepRun => ({ kind: 'error', step: w.current, error }),
        );
      }
      const done = this.settle(w, reply);
      if (done) return done;
    }
  }

  /** The run's result for a step's reply, or undefined after a `goTo` (the walk goes on). */
  private settle(w: Walk, reply: unknown): StepRun | undefined {
    const { flow, current } = w;
    const failed = (message: string): StepRun => ({
      kind: 'error',
      step: current,
      error: new Error(message),
    });
    if (!reply || typeof reply !== 'object' || typeof (reply as { kind?: unknown }).kind !== 'string')
      return failed(
        `Step "${current}" of flow ${flow.name} must return ctx.input(), ctx.select(), ctx.addToCart(), ctx.end(), ctx.goTo() or ctx.reject()`,
      );
    const answer = reply as FlowReply;
    if (answer.kind !== 'goto')
      return { kind: 'reply', step: current, reply: answer, data: w.data, selections: w.selections };
    const max = SERVICE_APP_DEFAULTS.maxRedirects;
    if (w.hops++ >= max) return failed(`Flow ${flow.name}: more than ${max} goTo() in a row (a loop?)`);
    w.current = answer.step;
    return undefined;
  }

  /** Waits for an asynchronous step within what is left of the step budget. */
  private async underBudget(
    w: Walk,
    sessionId: string,
    pending: Promise<StepRun>,
    started: number,
  ): Promise<StepRun> {
    const work = pending.catch((error: unknown): StepRun => ({ kind: 'error', step: w.current, error }));
    const budgetMs = this.options.stepBudgetMs;
    const result = await within(work, Math.max(0, budgetMs - (performance.now() - started)), BUSY);
    if (result.kind === 'busy') {
      this.logger.warn(
        `Step "${w.current}" of flow ${w.flow.name} took longer than ${budgetMs} ms (session ${sessionId}); answered "try again"`,
      );
      // The late answer is dropped; its errors are logged, never unhandled.
      void work.then((late) => {
        if (late.kind === 'error')
          this.logger.error(
            `Late step "${late.step}" of flow ${w.flow.name} failed: ${describe(late.error)}`,
          );
      });
    }
    return result;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

export function stepOf(
  flow: ServiceFlowDefinition,
  name: string,
): ServiceFlowDefinition['steps'][number] | undefined {
  for (const step of flow.steps) if (step.name === name) return step;
  return undefined;
}
