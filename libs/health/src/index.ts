/* nestjs-hubtel/health: @nestjs/terminus health checks (needs the optional peer `@nestjs/terminus`). */
export {
  HubtelHealthIndicator,
  type HubtelHealthModuleForRootOptions,
  type HubtelHealthModuleAsyncOptions,
  type HubtelHealthModuleOptions,
} from './health.indicator.js';
export { HubtelHealthModule } from './health.module.js';
