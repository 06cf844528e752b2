import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  HEALTH_MODULE,
  HubtelHealthIndicator,
  type HubtelHealthModuleForRootOptions,
} from './health.indicator.js';

/** Health checks for `@nestjs/terminus` (an optional peer): HubtelHealthIndicator, for your controller. */
@Module({
  imports: [TerminusModule, DiscoveryModule],
  providers: [HubtelHealthIndicator],
  exports: [HubtelHealthIndicator],
})
export class HubtelHealthModule extends HEALTH_MODULE.ConfigurableModuleClass {
  /** Options are all optional: `forRoot()` checks the store and the runner. */
  static override forRoot(options: HubtelHealthModuleForRootOptions = {}): DynamicModule {
    return super.forRoot(options);
  }
}
