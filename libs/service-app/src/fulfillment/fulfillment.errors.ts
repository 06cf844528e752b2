import { HubtelError } from 'nestjs-hubtel';
import type { FulfillmentRejection } from '../service-app.events.js';

/** A fulfillment request refused at once by the module; `httpStatus` is what the endpoint answers. */
export class FulfillmentRejectedError extends HubtelError {
  constructor(
    readonly reason: FulfillmentRejection,
    message: string,
    httpStatus: number,
  ) {
    super(reason === 'UNKNOWN_SESSION' ? 'HUBTEL_NOT_FOUND' : 'HUBTEL_STORE_CONFLICT', message, {
      httpStatus,
    });
  }
}

/** Thrown by a status check that found no payment yet: the pipeline checks again after a delay. */
export class PaymentPendingError extends HubtelError {
  constructor(message: string) {
    super('HUBTEL_NOT_FOUND', message);
  }
}

/** The session's delivery record kept changing under a claim: the job is retried, nothing delivered. */
export class DeliveryContendedError extends HubtelError {
  constructor(sessionId: string) {
    super(
      'HUBTEL_STORE_CONFLICT',
      `The delivery record of session ${sessionId} is being changed concurrently; trying again`,
    );
  }
}
