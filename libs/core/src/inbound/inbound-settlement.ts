import type { Logger } from '@nestjs/common';
import { describeError, maskPhoneNumbers } from '../logging/redact.js';
import { backoffDelay } from '../retry/backoff.js';
import type { StoreEntry } from '../store/hubtel-store.interface.js';
import {
  DEFAULT_JOB_RETRY,
  DeadLetterEvent,
  type InboundPipelineOptions,
  type JobDefinition,
  type JobOutcome,
  type JobRecord,
  type SubmitResult,
} from './inbound-job.types.js';
import { nextRecord, writeOutcome, type OutcomeWriter } from './inbound-outcome.js';
import type { JobRunner, JobRunOutcome } from './job-runner.js';
import type { HubtelJobSignal } from '../telemetry/hubtel-telemetry.js';

export const SETTLED: JobRunOutcome = { kind: 'settled' };

/** A job a settling run submitted (`beforeSettled`): run here once that one is settled. */
export interface FollowUp {
  storeKey: string;
  type: string;
  entry: StoreEntry<JobRecord>; // as its submit wrote it
}

export interface SettlementContext {
  options: InboundPipelineOptions;
  writer: OutcomeWriter;
  logger: Logger;
  now: () => number;
  runner: JobRunner;
  record<P>(type: string, key: string, payload: P, followUps: FollowUp[]): Promise<SubmitResult<P>>;
  alert(event: string, payload: object): Promise<unknown>;
  execute(storeKey: string, giveUp?: string, written?: StoreEntry<JobRecord>): Promise<JobRunOutcome>;
}

/** How a run ends: done or dead (after `beforeSettled`), or a retry; written over the entry it read. */
export class JobSettlement {
  constructor(private readonly ctx: SettlementContext) {}

  /** Done, or dead with `failure`: `beforeSettled`, the outcome written, then hooks and follow-ups. */
  async complete(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    definition: JobDefinition<any>,
    job: JobRecord,
    attempts: number,
    failure?: { error: unknown; message: string },
  ): Promise<JobRunOutcome> {
    const outcome = failure ? 'dead' : 'done';
    const lastError = failure?.message;
    const followUps: FollowUp[] = [];
    const seen = failure ? { ...job, attempts, lastError } : job;
    const held = await this.beforeSettled(storeKey, entry, definition, seen, outcome, attempts, followUps);
    if (held) return held;
    const next = nextRecord(this.ctx.now(), job, outcome, attempts, lastError, followUps);
    if (!(await writeOutcome(this.ctx.writer, storeKey, entry, next, definition)))
      return this.queue(followUps);
    if (failure) {
      this.ctx.logger.error(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} gave up after ${attempts} attempt(s): ${failure.message} (dead-lettered)`,
      );
      this.signal(job.type, 'dead', attempts);
      const { type, key, payload, receivedAt } = job;
      const event = new DeadLetterEvent(type, key, payload, attempts, failure.message, new Date(receivedAt));
      await this.ctx.alert(this.ctx.options.deadLetterEvent, event);
    } else this.signal(job.type, 'done', attempts);
    await this.settled(definition, next, outcome, failure?.error);
    await this.follow(followUps);
    return failure ? { kind: 'settled', dead: failure.message } : SETTLED;
  }

  /** Runs each follow-up here now; queues what is left (throws if it cannot: `then` asks again). */
  private async follow(followUps: FollowUp[]): Promise<void> {
    for (const { storeKey, type, entry } of followUps) {
      const outcome = await this.ctx.execute(storeKey, undefined, entry);
      if (outcome.kind === 'settled') continue;
      const delayMs =
        outcome.kind === 'retry' ? outcome.delayMs : Math.max(0, outcome.until - this.ctx.now());
      const request = { storeKey, type, run: 1, ...(delayMs > 0 ? { delayMs } : {}) };
      await this.ctx.runner.enqueue(this.ctx.options.name, request);
    }
  }

  /** Follow-ups of a run that lost its outcome write to another run: queued, not run here. */
  private async queue(followUps: FollowUp[]): Promise<JobRunOutcome> {
    for (const { storeKey, type } of followUps)
      await this.ctx.runner.enqueue(this.ctx.options.name, { storeKey, type, run: 1 });
    return SETTLED;
  }

  /** Runs `beforeSettled`; failing, the job stays pending, its outcome decided (never dead for it). */
  private async beforeSettled(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    definition: JobDefinition<any>,
    job: JobRecord,
    outcome: JobOutcome,
    attempts: number,
    followUps: FollowUp[],
  ): Promise<JobRunOutcome | undefined> {
    try {
      await definition.beforeSettled?.(job, outcome, {
        submit: (type, key, payload) => this.ctx.record(type, key, payload, followUps),
      });
      return undefined;
    } catch (error) {
      const message = describeError(error);
      const lastError = outcome === 'dead' ? job.lastError : message;
      const pending = nextRecord(this.ctx.now(), job, 'pending', attempts, lastError);
      pending.settling = outcome;
      if (!(await writeOutcome(this.ctx.writer, storeKey, entry, pending, definition))) return SETTLED;
      const policy = { ...DEFAULT_JOB_RETRY, ...this.ctx.options.retry, ...definition.retry };
      const delayMs = backoffDelay(attempts, policy, this.ctx.options.random);
      this.ctx.logger.warn(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} is ${outcome}, but what follows failed: ${message}; trying again in ${delayMs} ms`,
      );
      return { kind: 'retry', delayMs, error: message };
    }
  }

  /** A failed run: retried after the policy's backoff, or dead-lettered once it has none left. */
  async fail(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    definition: JobDefinition<any>,
    job: JobRecord,
    error: unknown,
    attempt: number,
  ): Promise<JobRunOutcome> {
    const policy = { ...DEFAULT_JOB_RETRY, ...this.ctx.options.retry, ...definition.retry };
    const message = describeError(error);
    const runs = Number.isFinite(attempt) ? attempt : job.attempts;
    const delayMs = backoffDelay(runs, policy, this.ctx.options.random);
    const outOfTime =
      policy.deadlineMs !== undefined && this.ctx.now() - job.receivedAt + delayMs >= policy.deadlineMs;
    if (runs < policy.maxAttempts && !outOfTime && Number.isFinite(attempt)) {
      const pending = nextRecord(this.ctx.now(), job, 'pending', runs, message);
      if (!(await writeOutcome(this.ctx.writer, storeKey, entry, pending, definition))) return SETTLED;
      this.ctx.logger.warn(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} failed (attempt ${runs}/${policy.maxAttempts}): ${message}; retrying in ${delayMs} ms`,
      );
      this.signal(job.type, 'retry', runs);
      return { kind: 'retry', delayMs, error: message };
    }
    return this.complete(storeKey, entry, definition, job, runs, { error, message });
  }

  private signal(type: string, outcome: HubtelJobSignal['outcome'], attempt: number): void {
    const { telemetry, name: pipeline } = this.ctx.options;
    telemetry?.record({ kind: 'job', pipeline, job: type, outcome, attempt });
  }

  async settled(
    definition: JobDefinition<any>,
    job: JobRecord,
    outcome: JobOutcome,
    error?: unknown,
  ): Promise<void> {
    try {
      await definition.onSettled?.(job, outcome, error);
    } catch (hookError) {
      this.ctx.logger.error(
        `After-job hook of ${job.type} ${maskPhoneNumbers(job.key)} failed: ${describeError(hookError)}`,
      );
    }
  }
}
