/** The service flow's one face: nothing outside this folder imports its other files. */
export { ServiceFlowService } from './service-flow.service.js';
export { ServiceFlowRegistry } from './service-flow.registry.js';
export {
  ServiceFlowBuilder,
  ServiceFlow,
  FlowStep,
  type ServiceFlowOptions,
  type FlowStepOptions,
} from './service-flow.builder.js';
