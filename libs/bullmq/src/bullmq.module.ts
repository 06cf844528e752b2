import { HUBTEL_JOB_RUNNER } from 'nestjs-hubtel';
import { hubtelConnectionModule } from '#internal';
import { BullmqJobRunner, type BullmqJobRunnerOptions } from './bullmq.job-runner.js';

/** `HubtelBullmqModule.forRoot(...)` options: where Redis is, the key prefix, the concurrency. */
export type HubtelBullmqModuleOptions = Omit<BullmqJobRunnerOptions, 'logger'>;

const BULLMQ_MODULE = hubtelConnectionModule({
  moduleName: 'HubtelBullmq',
  factoryMethod: 'createHubtelBullmqOptions',
  type: BullmqJobRunner,
  token: HUBTEL_JOB_RUNNER,
  create: (options: HubtelBullmqModuleOptions) => new BullmqJobRunner(options),
});

/** `HubtelBullmqModule.forRoot(...)` argument; `isGlobal` (default true) provides HUBTEL_JOB_RUNNER app-wide. */
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
