/** Defaults of the testing kit and the developer tools, in one place. */
export const TESTING_DEFAULTS = Object.freeze({
  /** The payer / USSD user when a test names none (an MTN Ghana number). */
  phone: '233241234567',
  /** `Operator` of service-flow requests. */
  operator: 'mtn',
  /** `ServiceCode` of service-flow requests. */
  serviceCode: 'sandbox-service',
  /** Time-out of one HTTP call of the send helpers and the trigger command. */
  requestTimeoutMs: 10_000,
});

/** Relays to the attached app: a callback URL the sandbox can reach before the app's port is known. */
export const TEST_SANDBOX_TUNNEL_PATH = '/_tunnel';

/** Default route of the CheckoutModule's web callback, and of the service app's two endpoints (the contract's). */
// Written out: the bins' --help shows them without loading those modules (testing.constants.spec.ts compares).
export const TESTING_PATHS = Object.freeze({
  checkoutCallback: '/hubtel/checkout/callback',
  serviceFlow: '/api/service-flow',
  fulfillment: '/api/fulfillment',
  fulfillmentCallback: '/callback',
});
