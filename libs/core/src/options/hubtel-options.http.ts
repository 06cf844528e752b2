import type {
  HubtelCredentials,
  HubtelRetryOptions,
  ResolvedHubtelHttpOptions,
} from './hubtel-options.types.js';

/** The checked options `httpParts` groups: the key pair and HubtelHttpOptionsDto's fields. */
export const HTTP_GROUPED = ['clientId', 'clientSecret', 'timeoutMs', 'retry', 'defaultCountryCode'] as const;

/** A module's key pair and transport settings, as its resolved options carry them. */
export interface HubtelHttpParts {
  credentials: HubtelCredentials;
  http: ResolvedHubtelHttpOptions;
}

/** `HTTP_GROUPED` of checked options (defaults filled in, the retry's bounds checked), grouped. */
export function httpParts(
  checked: HubtelCredentials & { timeoutMs?: number; retry?: object; defaultCountryCode?: string },
): HubtelHttpParts {
  const { clientId, clientSecret, timeoutMs, defaultCountryCode } = checked;
  const retry = checked.retry as HubtelRetryOptions;
  return {
    credentials: { clientId, clientSecret },
    http: { timeoutMs: timeoutMs!, retry, defaultCountryCode: defaultCountryCode! },
  };
}
