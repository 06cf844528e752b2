import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { HUBTEL_JOB_RUNNER } from 'nestjs-hubtel';
import {
  HUBTEL_BULLMQ_MODULE_OPTIONS,
  HubtelBullmqConfigurableModule,
  type HubtelBullmqModuleOptions,
} from './bullmq.module-definition.js';
import { BullmqJobRunner } from './bullmq.job-runner.js';

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
 * Use it with a shared store (HubtelRedisModule): a module on a MemoryStore beside it stops the
 * app at start-up (another instance could not read the record of a job it takes). Startup waits for Redis. Workers stop with the pipelines
 * (they drain first); connections close in the last shutdown phase.
 */
@Module({
  providers: [
    {
      provide: BullmqJobRunner,
      useFactory: async (options: HubtelBullmqModuleOptions) => {
        const runner = new BullmqJobRunner(options);
        await runner.connect();
        return runner;
      },
      inject: [HUBTEL_BULLMQ_MODULE_OPTIONS],
    },
    { provide: HUBTEL_JOB_RUNNER, useExisting: BullmqJobRunner },
  ],
  exports: [HUBTEL_JOB_RUNNER, BullmqJobRunner],
})
export class HubtelBullmqModule extends HubtelBullmqConfigurableModule implements OnApplicationShutdown {
  constructor(@Inject(BullmqJobRunner) private readonly runner: BullmqJobRunner) {
    super();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runner.close();
  }
}
