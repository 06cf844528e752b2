import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import { HubtelError, HubtelStoreUnavailableError } from '../errors/hubtel.errors.js';
import { HandlerRegistry } from '../events/handler-registry.js';
import { HubtelLogger } from '../logging/hubtel-logger.js';
import { describeError, maskPhoneNumbers } from '../logging/redact.js';
import { sleep } from '../retry/backoff.js';
import type { StoreEntry } from '../store/hubtel-store.interface.js';
import {
  DEFAULT_JOB_RECORD_TTL_MS,
  jobKeyPrefix,
  listDeadLetters,
  requeueDeadLetter,
  type DeadLetter,
} from './inbound-dead-letters.js';
import { HandlerDispatch, ListenerFailure, NO_HANDLERS, type DispatchProgress } from './inbound-dispatch.js';
import {
  JobDeferral,
  JobRefusedError,
  type InboundPipelineOptions,
  type JobDefinition,
  type JobRecord,
  type JobRefusal,
  type SubmitResult,
} from './inbound-job.types.js';
import { DEFAULT_SHUTDOWN_GRACE_MS, HubtelShuttingDownError, reportShutdown } from './inbound-shutdown.js';
import { InProcessJobRunner, type JobRunner, type JobRunOutcome } from './job-runner.js';
import { JobSettlement, SETTLED, type FollowUp } from './inbound-settlement.js';
import { isSettled, nextRecord, request, writeOutcome, type OutcomeWriter } from './inbound-outcome.js';

export * from './inbound-job.types.js';

// The one inbound road: record (set-if-absent), ask the runner for a run, then acknowledge: a crash
// after the 2xx loses nothing; a duplicate runs nothing. Who keeps each guarantee: docs/architecture.md.

/** A wake mark lives until the run it is for ends (a handler's time), then expires if unread. */
const WAKE_MARK_TTL_MS = 3600_000;

export class InboundPipeline implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly definitions = new Map<string, JobDefinition<any>>();
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly prefix: string;
  readonly runner: JobRunner;
  private readonly dispatcher: HandlerDispatch;
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private closing = false;
  private readonly stopping = new AbortController();
  private readonly alerts = new Set<Promise<unknown>>();
  private readonly writer: OutcomeWriter;
  private readonly settlement: JobSettlement;

  constructor(private readonly options: InboundPipelineOptions) {
    this.logger = options.logger ?? new HubtelLogger(`Hubtel:${options.name}`);
    this.now = options.now ?? Date.now;
    this.prefix = jobKeyPrefix(options.name);
    this.writer = {
      store: options.store,
      writeOptions: { ttlMs: options.recordTtlMs ?? DEFAULT_JOB_RECORD_TTL_MS },
      logger: this.logger,
      stopping: this.stopping.signal,
    };
    const handlers =
      options.handlers ?? new HandlerRegistry({ emitter: options.emitter, logger: this.logger });
    this.dispatcher = new HandlerDispatch(options.name, handlers, options.telemetry, this.logger);
    this.runner = options.runner ?? new InProcessJobRunner();
    this.settlement = new JobSettlement({
      options,
      writer: this.writer,
      logger: this.logger,
      now: this.now,
      runner: this.runner,
      record: (type, key, payload, followUps) => this.submit(type, key, payload, followUps),
      alert: (event, payload) => this.alert(event, payload),
      execute: this.execute,
    });
    if (this.runner.local) void this.runner.start(options.name, this.execute);
  }

  /** Declares a job type. Call before submitting jobs of it (typically in a provider factory). */
  define<P>(type: string, definition: JobDefinition<P> = {}): this {
    // A store key is `<prefix><type>:<key>`: the type is read back up to its first `:`.
    if (type.includes(':'))
      throw new HubtelError('HUBTEL_CONFIG_INVALID', `Job type "${type}" must not contain ":"`);
    this.definitions.set(type, definition);
    return this;
  }

  /**
   * Records the job and, when new, asks for its run: acknowledge the sender only after this resolves.
   * With `followUps` (a settling run's), a new job is recorded and added there, not queued.
   */
  async submit<P>(type: string, key: string, payload: P, followUps?: FollowUp[]): Promise<SubmitResult<P>> {
    const definition = this.definition(type);
    const at = this.now();
    const record: JobRecord<P> = {
      type,
      key,
      payload,
      status: 'pending',
      attempts: 0,
      doneHandlers: NO_HANDLERS,
      receivedAt: at,
      updatedAt: at,
    };
    const storeKey = this.prefix + `${type}:${key}`;
    if (await this.options.store.setIfAbsent(storeKey, record, this.writer.writeOptions)) {
      const written = { value: record, version: 1 };
      if (followUps) followUps.push({ storeKey, type, entry: written });
      else await this.runner.enqueue(this.options.name, { storeKey, type, run: 1, written });
      return { duplicate: false, record };
    }
    const job = await this.sentAgain<P>(storeKey);
    if (!job || isSettled(job)) return { duplicate: true, record: job ?? record };
    if (!definition.wakeOnDuplicate) return { duplicate: true, record: job };
    // The mark first, then the wake: a run deferring meanwhile reads the mark after it waits.
    await this.options.store.set(this.wakeKey(storeKey), { payload }, { ttlMs: WAKE_MARK_TTL_MS });
    await this.runner.wake(this.options.name, request(storeKey, job));
    return { duplicate: true, record: job, woken: true };
  }

  /** Starts the run of a job deferred in `job` (its record, as read) now: its wait is over early. */
  async wake(job: JobRecord): Promise<void> {
    if (job.deferred && !isSettled(job))
      await this.runner.wake(this.options.name, request(this.prefix + `${job.type}:${job.key}`, job));
  }

  /** What `submit` does for a duplicate, without the wake (undefined when unknown). */
  async resend<P>(type: string, key: string): Promise<JobRecord<P> | undefined> {
    this.definition(type);
    return this.sentAgain<P>(this.prefix + `${type}:${key}`);
  }

  /** A duplicate's record; a pending one's run is asked again (the sender's retry may be the last ask). */
  private async sentAgain<P>(storeKey: string): Promise<JobRecord<P> | undefined> {
    const job = (await this.options.store.get<JobRecord<P>>(storeKey))?.value;
    if (job && !isSettled(job) && !job.deferred)
      await this.runner.enqueue(this.options.name, request(storeKey, job));
    return job;
  }

  get emitter(): EventEmitter2 {
    return this.options.emitter;
  }

  /**
   * Emits an event, not a recorded job (forged requests must not fill the store); a throwing listener
   * is logged. Resolves (never rejects) once its listeners are done: await it, or drainAlerts().
   */
  alert(event: string, payload: object): Promise<unknown> {
    // In a promise: a listener that throws at once makes emitAsync throw, not reject.
    const emitting = new Promise((resolve) => resolve(this.options.emitter.emitAsync(event, payload))).catch(
      (error: unknown) => this.logger.error(`A ${event} listener failed: ${describeError(error)}`),
    );
    this.alerts.add(emitting);
    void emitting.finally(() => this.alerts.delete(emitting));
    return emitting;
  }

  /** Resolves when the alerts emitted so far have been handled. */
  async drainAlerts(): Promise<void> {
    while (this.alerts.size > 0) await Promise.allSettled([...this.alerts]);
  }

  /** The stored record of a job, if it is still kept. */
  async get<P>(type: string, key: string): Promise<JobRecord<P> | undefined> {
    return (await this.options.store.get<JobRecord<P>>(`${this.prefix}${type}:${key}`))?.value;
  }

  /** Resolves when nothing of this pipeline runs or waits here (tests, shutdown). */
  async drain(): Promise<void> {
    for (;;) {
      await this.runner.drain?.(this.options.name);
      if (this.active === 0) return;
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.runner.local) return;
    // Listeners are attached by @nestjs/event-emitter in its own bootstrap hook: wait for it.
    const ready = this.options.whenReady?.() ?? Promise.resolve();
    void ready
      .then(() =>
        this.stopping.signal.aborted ? undefined : this.runner.start(this.options.name, this.execute),
      )
      .catch((error: unknown) =>
        this.logger.error(`Starting the job runner failed: ${describeError(error)}`),
      );
  }

  /** The first shutdown hook: from now on, new inbound work is answered 503. */
  onModuleDestroy(): void {
    this.closing = true;
  }

  /** Throws HubtelShuttingDownError (503 with Retry-After) once the app shuts down. */
  assertAcceptingInbound(what: string): void {
    if (this.closing) throw new HubtelShuttingDownError(what);
  }

  /** The jobs of this pipeline that gave up, oldest first. */
  listDeadLetters(): Promise<DeadLetter[]> {
    return listDeadLetters(this.options.store, this.options.name);
  }

  /** Runs a dead letter again unless its gate would leave it dead (JobRefusedError); resolves once queued. */
  async replayDeadLetter(id: string): Promise<void> {
    const dead = (await this.options.store.get<JobRecord>(`${this.prefix}${id}`))?.value;
    const gate = dead?.status === 'dead' ? this.definitions.get(dead.type)?.gate : undefined;
    const refusal = gate && (await gate(dead!.payload, dead!));
    if (refusal?.outcome === 'dead') throw new JobRefusedError(dead!.type, dead!.key, refusal);
    const replayed = await requeueDeadLetter(this.options.store, this.options.name, id, {
      ttlMs: this.writer.writeOptions.ttlMs,
      runner: this.runner,
      now: this.now,
    });
    this.logger.log(`Replaying dead-lettered job ${replayed.type} ${maskPhoneNumbers(replayed.key)}`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.stopping.abort();
    const grace = this.options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    // The runner's jobs still running past the grace are the runner's to hand to another instance.
    const stopped = this.runner.stop(this.options.name).catch((error: unknown) => {
      this.logger.error(`Stopping the job runner failed: ${describeError(error)}`);
    });
    await Promise.race([stopped.then(() => this.drain()), sleep(grace)]);
    await reportShutdown(this.logger, this.options.name, this.options.store, this.prefix, grace, this.active);
  }

  private definition(type: string): JobDefinition<any> {
    const found = this.definitions.get(type);
    if (found) return found;
    throw new HubtelError('HUBTEL_CONFIG_INVALID', `Unknown job type "${type}" (${this.options.name})`);
  }

  /** The runner's callback: every road to the handlers comes through here, past the job's gate. */
  private readonly execute = async (
    storeKey: string,
    giveUp?: string,
    written?: StoreEntry<JobRecord>,
  ): Promise<JobRunOutcome> => {
    this.active++;
    try {
      const read = this.gateRead(storeKey, written?.value);
      const entry = written ?? (await this.options.store.get<JobRecord>(storeKey));
      if (!entry) return SETTLED;
      if (isSettled(entry.value)) {
        // Run again after it settled (its process died then): its follow-ups may be unqueued.
        for (const key of entry.value.then ?? []) await this.sentAgain(key);
        return SETTLED;
      }
      const definition = this.definitions.get(entry.value.type);
      // Recorded by a deploy with another job list: left for an instance that knows it.
      if (!definition)
        return { kind: 'retry', delayMs: 30_000, error: `unknown job type ${entry.value.type}` };
      if (giveUp !== undefined)
        return await this.settlement.fail(storeKey, entry, definition, entry.value, giveUp, Infinity);
      return await this.run(storeKey, entry, definition, read);
    } catch (error) {
      this.logger.error(`Job ${storeKey} stopped: ${describeError(error)}; trying again`);
      throw error;
    } finally {
      if (--this.active === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  };

  /** The job's `gateRead`, started before the record is read (one round trip). */
  private gateRead(storeKey: string, written?: JobRecord): Promise<unknown> | undefined {
    const typeAndKey = storeKey.slice(this.prefix.length);
    const at = typeAndKey.indexOf(':');
    const definition = at > 0 ? this.definitions.get(typeAndKey.slice(0, at)) : undefined;
    const read = definition?.gateRead?.(typeAndKey.slice(at + 1), written);
    read?.catch(() => undefined); // awaited by the gate; unread when the record is settled
    return read;
  }

  private async run(
    storeKey: string,
    entry: StoreEntry<JobRecord>,
    definition: JobDefinition<any>,
    read?: Promise<unknown>,
  ): Promise<JobRunOutcome> {
    let job = entry.value;
    // Its outcome was decided before (gate and handlers behind it): only what follows it is left.
    if (job.settling === 'done')
      return this.settlement.complete(storeKey, entry, definition, job, job.attempts);
    if (job.settling === 'dead')
      return this.settlement.fail(storeKey, entry, definition, job, job.lastError ?? 'gave up', Infinity);
    let woken = false;
    if (definition.wakeOnDuplicate) {
      const mark = await this.takeWake(storeKey);
      if (mark !== undefined) [job, woken] = [{ ...job, payload: mark }, true];
    }
    const attempt = job.attempts + 1;
    let progress: DispatchProgress = { doneHandlers: job.doneHandlers, results: job.results };
    let refusal: JobRefusal | undefined;
    let deferral: void | JobDeferral = undefined;
    let failure: { error: unknown } | undefined;
    try {
      refusal = await definition.gate?.(job.payload, job, read);
      if (!refusal && definition.run) {
        deferral = await definition.run(job.payload, {
          attempt,
          record: job,
          woken,
          defer: (until, state) => new JobDeferral(until, state),
          takeWake: () => this.takeWake(storeKey),
        });
      } else if (!refusal) {
        const events = definition.events?.(job.payload) ?? [job.type];
        progress = await this.dispatcher.dispatch(job, definition, events, async (saved) => {
          // Best effort: a lost race only leaves the outcome write to record it.
          entry =
            (await this.options.store
              .compareAndSet(storeKey, entry.version, { ...entry.value, ...saved }, this.writer.writeOptions)
              .catch(() => undefined)) ?? entry;
        });
      }
    } catch (caught) {
      // The store away is no failure of the job: not an attempt, but the runner's retry.
      if (caught instanceof HubtelStoreUnavailableError) throw caught;
      if (caught instanceof ListenerFailure) progress = caught.progress;
      failure = { error: caught instanceof ListenerFailure ? caught.cause : caught };
    }
    job = { ...job, ...progress };
    if (failure) return this.settlement.fail(storeKey, entry, definition, job, failure.error, attempt);
    if (refusal) {
      const lastError = refusal.outcome === 'dead' ? refusal.reason : job.lastError;
      const settled = nextRecord(this.now(), job, refusal.outcome, job.attempts, lastError);
      if (!(await writeOutcome(this.writer, storeKey, entry, settled, definition))) return SETTLED;
      this.logger.warn(
        `Job ${job.type} ${maskPhoneNumbers(job.key)} not run: ${maskPhoneNumbers(refusal.reason)} (${refusal.outcome})`,
      );
      const refused = new JobRefusedError(job.type, job.key, refusal);
      await this.settlement.settled(definition, settled, refusal.outcome, refused);
      return SETTLED;
    }
    if (deferral instanceof JobDeferral) {
      const next = nextRecord(this.now(), job, 'pending', job.attempts, job.lastError);
      next.deferred = true;
      if (deferral.state !== undefined) next.state = deferral.state;
      if (!(await writeOutcome(this.writer, storeKey, entry, next, definition))) return SETTLED;
      const markKey = this.wakeKey(storeKey);
      return {
        kind: 'defer',
        until: deferral.until,
        woken: async () => (await this.options.store.get(markKey)) !== undefined,
      };
    }
    return this.settlement.complete(storeKey, entry, definition, job, attempt);
  }

  private async takeWake(storeKey: string): Promise<any> {
    const key = this.wakeKey(storeKey);
    const mark = await this.options.store.get<{ payload: unknown }>(key);
    if (!mark) return undefined;
    await this.options.store.delete(key);
    return mark.value.payload;
  }

  private wakeKey(storeKey: string): string {
    return `hubtel:${this.options.name}:wake:${storeKey}`;
  }
}
