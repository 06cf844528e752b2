import type { Logger } from '@nestjs/common';
import type { HandlerRegistry, PipelineHandler } from '../events/handler-registry.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import type { HubtelTelemetry } from '../telemetry/hubtel-telemetry.js';
import type { JobDefinition, JobRecord } from './inbound-job.types.js';

// Each handler that succeeded is remembered by its stable identity (`Class.method@event`): a retry
// re-runs only those that failed, even after a deploy reordered them.

export interface DispatchProgress {
  doneHandlers: string[];
  results: Record<string, unknown> | undefined;
}

/** A handler failed: what succeeded before and after it rides along, to be recorded. */
export class ListenerFailure extends Error {
  constructor(
    override readonly cause: unknown,
    readonly progress: DispatchProgress,
  ) {
    super('listener failed');
  }
}

/** Shared by every new record: values are immutable (see HubtelStore), so one empty list serves all. */
export const NO_HANDLERS: string[] = Object.freeze([]) as unknown as string[];

export class HandlerDispatch {
  /** Identities of a handler list, shared by every record whose handlers all succeeded. */
  private readonly allDone = new WeakMap<readonly PipelineHandler[], string[]>();

  constructor(
    private readonly pipeline: string,
    private readonly handlers: HandlerRegistry,
    private readonly telemetry: HubtelTelemetry | undefined,
    private readonly logger: Logger,
  ) {}

  /** Calls each handler not yet succeeded, in order; `save` records each success before the next runs. */
  async dispatch(
    job: JobRecord,
    definition: JobDefinition<any>,
    events: readonly string[],
    save: (progress: DispatchProgress) => Promise<void>,
  ): Promise<DispatchProgress> {
    const handlers = this.handlers.handlersOf(events);
    const before = job.doneHandlers;
    const previous = job.results;
    if (handlers.length === 0) {
      const names = events.map((event) => `"${event}"`).join(', ');
      if (definition.requireListener) throw new Error(`No handler is listening to ${names}`);
      this.logger.warn(
        `No handler is listening to ${names}; ${maskPhoneNumbers(job.key)} was not handled by the app`,
      );
      this.handlers.notify(events, job.payload);
      return { doneHandlers: before, results: previous };
    }
    // Built in dispatch order, so readers see answers in handler order (keys are not numbers).
    const results: Record<string, unknown> | undefined = definition.keepResults ? {} : undefined;
    const done: string[] = [];
    let failure: unknown;
    for (const handler of handlers) {
      const id = handler.id;
      if (before.includes(id)) {
        done.push(id);
        if (results && previous?.[id] !== undefined) results[id] = previous[id];
        continue;
      }
      let ok = true;
      try {
        const value = await handler.call(job.payload);
        done.push(id);
        if (results && value !== undefined) results[id] = value;
      } catch (error) {
        ok = false;
        failure ??= error;
      }
      this.telemetry?.record({ kind: 'handler', pipeline: this.pipeline, job: job.type, handler: id, ok });
      if (ok && handler !== handlers[handlers.length - 1])
        await save(withEarlier(done, before, results, previous));
    }
    const merged = withEarlier(done, before, results, previous);
    const progress: DispatchProgress = {
      doneHandlers: this.kept(merged.doneHandlers, handlers),
      results: merged.results,
    };
    if (failure !== undefined) throw new ListenerFailure(failure, progress);
    this.handlers.notify(events, job.payload);
    return progress;
  }

  /** A shared list when every handler is done (the usual outcome), else an exact-length copy. */
  private kept(done: string[], handlers: readonly PipelineHandler[]): string[] {
    if (done.length === 0) return NO_HANDLERS;
    if (done.length === handlers.length && done.every((id, index) => id === handlers[index]!.id)) {
      let shared = this.allDone.get(handlers);
      if (!shared) this.allDone.set(handlers, (shared = Object.freeze(done.slice()) as unknown as string[]));
      return shared;
    }
    return done.slice();
  }
}

/**
 * This run's successes, then the earlier ones it has not reached yet or no longer has (a deploy
 * removed them: should they come back, they ran), with their answers: every write keeps them all,
 * so a run that dies between two writes runs none of them again.
 */
function withEarlier(
  done: readonly string[],
  before: readonly string[],
  results: Record<string, unknown> | undefined,
  previous: Record<string, unknown> | undefined,
): DispatchProgress {
  const doneHandlers = [...done, ...before.filter((id) => !done.includes(id))];
  if (!results) return { doneHandlers, results };
  const answers = { ...results };
  if (previous) for (const id in previous) if (!(id in answers)) answers[id] = previous[id];
  return { doneHandlers, results: answers };
}
