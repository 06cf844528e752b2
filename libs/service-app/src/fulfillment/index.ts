/** Fulfillment's one face to the rest of the library: nothing outside this folder imports its other files. */
export { FulfillmentService, FulfillmentAccount } from './fulfillment.service.js';
export { FulfillmentRejectedError } from './fulfillment.errors.js';
export type { FulfillmentOrderStatus, FulfillmentReceipt } from './fulfillment.records.js';
export type { FulfillmentAccountView } from './fulfillment.types.js';
