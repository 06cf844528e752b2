/*
 * nestjs-hubtel/health — @nestjs/terminus health checks of the suite's dependencies (needs the
 * optional peer dependency `@nestjs/terminus`).
 */
export { HubtelHealthIndicator } from './health.indicator.js';
export { HubtelHealthModule } from './health.module.js';
export type {
  HubtelHealthModuleForRootOptions,
  HubtelHealthModuleAsyncOptions,
  HubtelHealthModuleOptions,
} from './health.options.js';
