/* nestjs-hubtel/health: @nestjs/terminus health checks (needs the optional peer `@nestjs/terminus`). */
export { HubtelHealthIndicator } from './health.indicator.js';
export { HubtelHealthModule } from './health.module.js';
export type {
  HubtelHealthModuleForRootOptions,
  HubtelHealthModuleAsyncOptions,
  HubtelHealthModuleOptions,
} from './health.options.js';
