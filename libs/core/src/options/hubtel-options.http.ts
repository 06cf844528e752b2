import { HUBTEL_DEFAULT_RETRY } from '../hubtel.constants.js';
import type {
  HubtelCredentials,
  HubtelRetryOptions,
  ResolvedHubtelHttpOptions,
} from './hubtel-options.types.js';
import { backoffDelays } from './hubtel-options.validation.js';

/** The checked options `httpParts` groups: the key pair and HubtelHttpOptionsDto's fields. */
export const HTTP_GROUPED = ['clientId', 'clientSecret', 'timeoutMs', 'retry', 'defaultCountryCode'] as const;

/** A module's key pair and transport settings, as its resolved options carry them. */
export interface HubtelHttpParts {
  credentials: HubtelCredentials;
  http: ResolvedHubtelHttpOptions;
}

/** `HTTP_GROUPED` of checked options (defaults filled in), grouped; the retry's bounds checked. */
export function httpParts(
  checked: HubtelCredentials & { timeoutMs?: number; retry?: object; defaultCountryCode?: string },
  scope: string,
): HubtelHttpParts {
  const { clientId, clientSecret, timeoutMs, defaultCountryCode } = checked;
  const retry = checked.retry as HubtelRetryOptions;
  backoffDelays(retry, HUBTEL_DEFAULT_RETRY, `${scope}.retry`);
  return {
    credentials: { clientId, clientSecret },
    http: { timeoutMs: timeoutMs!, retry, defaultCountryCode: defaultCountryCode! },
  };
}
