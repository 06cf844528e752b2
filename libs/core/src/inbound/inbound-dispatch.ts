import type { HandlerRegistry, PipelineHandler } from '../events/handler-registry.js';
import { maskPhoneNumbers } from '../logging/redact.js';
import { NO_HANDLERS, type JobsContext } from './inbound-job.records.js';
import type { JobDefinition, JobRecord } from './inbound-job.types.js';
import type { HeldLease, JobLeases } from './inbound-lease.js';
import { handlerSignal } from './inbound-telemetry.js';

/**
 * A dispatching job's attempt: its handlers (see HandlerRegistry) are called one by one, and each
 * one that succeeded is remembered by its stable identity (`Class.method@event`), so a retry
 * re-runs only the handlers that failed, even on an instance running a newer deploy with handlers
 * added, removed or reordered: one failing handler never makes another run twice.
 */

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

export class HandlerDispatch {
  /** Identities of a handler list, shared by every record whose handlers all succeeded. */
  private readonly allDone = new WeakMap<readonly PipelineHandler[], string[]>();
  private readonly migrated = new Set<string>();

  constructor(
    private readonly ctx: JobsContext,
    private readonly handlers: HandlerRegistry,
    /** Default event list per job type (the type itself), so dispatching allocates none. */
    private readonly typeEvents: ReadonlyMap<string, readonly string[]>,
    private readonly leases: JobLeases,
  ) {}

  /** Calls each handler of the job's event(s) that has not succeeded yet, in order. */
  async dispatch(
    job: JobRecord,
    definition: JobDefinition<any>,
    lease: HeldLease,
  ): Promise<DispatchProgress> {
    const events = definition.events?.(job.payload) ?? this.typeEvents.get(job.type) ?? [job.type];
    const handlers = this.handlers.handlersOf(events);
    const legacy = job.doneHandlers === undefined ? this.fromIndexes(job, handlers) : undefined;
    const before = legacy ? legacy.before : job.doneHandlers;
    const previous = legacy ? legacy.previous : job.results;
    if (handlers.length === 0) {
      const names = events.map((event) => `"${event}"`).join(', ');
      if (definition.requireListener) throw new Error(`No handler is listening to ${names}`);
      this.ctx.logger.warn(
        `No handler is listening to ${names}; the event for ${maskPhoneNumbers(job.key)} was not handled by the app`,
      );
      return { doneHandlers: before, results: previous };
    }
    // Built in dispatch order, so readers see answers in handler order (keys are not numbers).
    const results: Record<string, unknown> | undefined = definition.keepResults ? {} : undefined;
    const done: string[] = [];
    let failure: unknown;
    for (const handler of handlers) {
      const id = handler.id;
      if (before.length > 0 && before.includes(id)) {
        done.push(id);
        if (results && previous?.[id] !== undefined) results[id] = previous[id];
        continue;
      }
      try {
        const value = await handler.call(job.payload);
        this.ctx.telemetry?.record(handlerSignal(this.ctx.name, job.type, id, true));
        done.push(id);
        if (results && value !== undefined) results[id] = value;
        // More handlers to call: record this one's success now, so a crash in a later one (this
        // process killed mid-handler) never has it run again where the job is taken over.
        if (handler !== handlers[handlers.length - 1]) await this.leases.saveProgress(lease, done, results);
      } catch (error) {
        this.ctx.telemetry?.record(handlerSignal(this.ctx.name, job.type, id, false));
        failure ??= error;
      }
    }
    // Handlers that succeeded and are gone today (a deploy removed them) stay remembered, with
    // their answers: should they come back, they have run already.
    for (const id of before) if (!done.includes(id)) done.push(id);
    if (results && previous) for (const id in previous) if (!(id in results)) results[id] = previous[id];
    const progress: DispatchProgress = { doneHandlers: this.kept(done, handlers), results };
    if (failure !== undefined) throw new ListenerFailure(failure, progress);
    return progress;
  }

  /**
   * What already succeeded, by identity. A record of the version before identities holds listener
   * indexes: they are read as today's handlers at those positions (see JobRecord.doneListeners).
   */
  private fromIndexes(
    job: JobRecord,
    handlers: readonly PipelineHandler[],
  ): { before: string[]; previous: Record<string, unknown> | undefined } {
    const indexes = job.doneListeners ?? [];
    const before = indexes.filter((index) => index < handlers.length).map((index) => handlers[index]!.id);
    let previous: Record<string, unknown> | undefined;
    if (job.results) {
      previous = {};
      for (const [index, value] of Object.entries(job.results)) {
        const handler = handlers[Number(index)];
        if (handler) previous[handler.id] = value;
      }
    }
    if (indexes.length > 0 && !this.migrated.has(job.key)) {
      this.migrated.add(job.key);
      this.ctx.logger.warn(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} was recorded before handler identities: its succeeded handlers ${JSON.stringify(indexes)} are taken as today's at those positions (${before.join(', ') || 'none'})`,
      );
    }
    return { before, previous };
  }

  /**
   * The list as it will be kept in the store: a shared one when every handler is done (the usual
   * outcome), otherwise a copy of exactly its length (an array grown by push keeps spare capacity,
   * for as long as the record is kept).
   */
  private kept(done: string[], handlers: readonly PipelineHandler[]): string[] {
    if (done.length === 0) return NO_HANDLERS;
    if (done.length === handlers.length && done.every((id, index) => id === handlers[index]!.id)) {
      let shared = this.allDone.get(handlers);
      if (!shared) {
        shared = Object.freeze(done.slice()) as unknown as string[];
        this.allDone.set(handlers, shared);
      }
      return shared;
    }
    return done.slice();
  }
}
