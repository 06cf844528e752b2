import { HubtelLogger } from 'nestjs-hubtel';

/** The suite's HubtelLogger for `HubtelServiceApp`: every line escaped, masked and capped. */
export class ServiceAppLogger extends HubtelLogger {
  constructor() {
    super('HubtelServiceApp');
  }
}
