import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { kindOf } from '../validation/validation.ajv.js';

// Option checks used by every module's provider factory, so that a bad option stops the app at
// bootstrap with a HubtelConfigError naming it (`sms.clientSecret`), rather than failing on the
// first request in production. Messages never echo a value that could be a secret.

/** The options object itself must be a plain object. */
export function assertOptionsObject(value: unknown, name: string): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new HubtelConfigError(name, `must be an object, got ${kindOf(value)}`);
}

/**
 * An absolute http(s) URL, without trailing slashes so paths can be appended. One carrying
 * user:password is refused: credentials belong in the credential options, kept out of logs.
 */
export function resolveUrl(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new HubtelConfigError(name, `must be an absolute http(s) URL, got ${kindOf(value)}`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new HubtelConfigError(name, 'must be an absolute http(s) URL (it does not parse)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HubtelConfigError(name, `must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password)
    throw new HubtelConfigError(name, 'must not carry credentials; use the clientId/clientSecret options');
  if (url.search || url.hash) throw new HubtelConfigError(name, 'must not carry a query string or fragment');
  return url.toString().replace(/\/+$/, '');
}
