import type { HubtelRetryOptionsDto } from './hubtel-options.dto.js';

/** One API credential pair, sent as HTTP Basic auth. */
export interface HubtelCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * The platform's outbound APIs, each with its own base address: SMS uses the account's SMS key pair,
 * checkout and the status check share another, the fulfillment callback receiver documents none.
 */
export type HubtelApi = 'sms' | 'checkout' | 'status' | 'fulfillment';

/** A module's `retry` after validation, every default filled in (see HubtelRetryOptionsDto). */
export type HubtelRetryOptions = Required<HubtelRetryOptionsDto>;
