import type { HubtelHttpOptions } from './hubtel-options.dto.js';
import type { HubtelCredentials, HubtelRetryOptions } from './hubtel-options.types.js';

/** The checked options `httpParts` groups: the key pair and HubtelHttpOptions's fields. */
export const HTTP_GROUPED = ['clientId', 'clientSecret', 'timeoutMs', 'retry', 'defaultCountryCode'] as const;

/** A module's key pair and transport settings (defaults filled in), as its resolved options hold them. */
export interface HubtelHttpParts {
  credentials: HubtelCredentials;
  http: Required<Omit<HubtelHttpOptions, 'retry'>> & { retry: HubtelRetryOptions };
}

/** `HTTP_GROUPED` of checked options (defaults filled in, the retry's bounds checked), grouped. */
export function httpParts(checked: HubtelCredentials & HubtelHttpOptions): HubtelHttpParts {
  const { clientId, clientSecret, timeoutMs, defaultCountryCode } = checked;
  const retry = checked.retry as HubtelRetryOptions;
  return {
    credentials: { clientId, clientSecret },
    http: { timeoutMs: timeoutMs!, retry, defaultCountryCode: defaultCountryCode! },
  };
}
