import { HUBTEL_JOB_RUNNER } from 'nestjs-hubtel';
import { hubtelConnectionModule, type HubtelConnectionExtras } from '#internal';
import { BullmqJobRunner, type BullmqJobRunnerOptions } from './bullmq.job-runner.js';

/** `HubtelBullmqModule.forRoot(...)` options: where Redis is, the key prefix, the concurrency. */
export type HubtelBullmqModuleOptions = Omit<BullmqJobRunnerOptions, 'logger'>;

/** Extras of `forRoot`/`forRootAsync`. */
export interface HubtelBullmqModuleExtras extends HubtelConnectionExtras {
  /** Provide HUBTEL_JOB_RUNNER to every module of the app. Default true (that is the point). */
  isGlobal?: boolean;
}

const BULLMQ_MODULE = hubtelConnectionModule({
  moduleName: 'HubtelBullmq',
  factoryMethod: 'createHubtelBullmqOptions',
  type: BullmqJobRunner,
  token: HUBTEL_JOB_RUNNER,
  create: (options: HubtelBullmqModuleOptions) => new BullmqJobRunner(options),
});

/** `HubtelBullmqModule.forRoot(...)` argument. */
export type HubtelBullmqModuleForRootOptions = typeof BULLMQ_MODULE.OPTIONS_TYPE;
/** `HubtelBullmqModule.forRootAsync(...)` argument. */
export type HubtelBullmqModuleAsyncOptions = typeof BULLMQ_MODULE.ASYNC_OPTIONS_TYPE;

/**
 * BullMQ runs the recorded jobs of the whole app: provides `HUBTEL_JOB_RUNNER` (global by
 * default), which CheckoutModule and ServiceAppModule use when something provides it.
 *
 * ```ts
 * @Module({ imports: [
 *   EventEmitterModule.forRoot(),
 *   HubtelRedisModule.forRoot({ url: process.env.REDIS_URL }),   // the records (exactly-once)
 *   HubtelBullmqModule.forRoot({ url: process.env.REDIS_URL }),  // where and when they run
 *   CheckoutModule.forRoot({ ... }),
 * ] })
 * ```
 * Use it with a shared store (HubtelRedisModule): a MemoryStore beside it stops the app at start-up.
 * Startup waits for Redis; connections close in the last shutdown phase.
 */
export class HubtelBullmqModule extends BULLMQ_MODULE.ConfigurableModuleClass {}
