import { HubtelConfigError } from 'nestjs-hubtel';
import { sanitizingLogger } from 'nestjs-hubtel/internal';
import {
  SANDBOX_CHECKOUT_DEFAULTS,
  SANDBOX_DEFAULT_CREDENTIALS,
  SANDBOX_DEFAULT_HOST,
  SANDBOX_DEFAULT_MAX_BODY_BYTES,
  SANDBOX_DEFAULT_OUTBOUND_TIMEOUT_MS,
  SANDBOX_DEFAULT_POS_SALES_ID,
  SANDBOX_DEFAULT_RECORD_LIMIT,
  SANDBOX_SMS_DEFAULTS,
} from './sandbox.constants.js';
import { hostNameOf } from './sandbox-http.js';
import type { HubtelSandboxOptions, SandboxCredentialPair, SandboxLogger } from './sandbox.types.js';

/*
 * The sandbox's options, checked once at construction (a bad one is a HubtelConfigError naming
 * it), with the defaults filled in.
 */
export interface ResolvedSandboxOptions {
  port: number;
  host: string;
  publicUrl: string | undefined;
  credentials: { sms: SandboxCredentialPair; api: SandboxCredentialPair };
  posSalesId: string;
  recordLimit: number;
  maxBodyBytes: number;
  outboundTimeoutMs: number;
  sms: {
    maxRecipients: number;
    maxContentLength: number;
    maxSenderLength: number;
    rate: number;
    deliveryDelayMs: number;
  };
  checkout: {
    merchantName: string;
    chargeRate: number;
    minAmount: number | undefined;
    rejectSpecialCharacters: boolean;
    defaultPhone: string;
  };
  dashboard: boolean;
  /** Host names the admin API and dashboard answer besides loopback ones (see `allowedHosts`). */
  allowedHosts: ReadonlySet<string>;
  logger: SandboxLogger | undefined;
}

function positiveInt(name: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min)
    throw new HubtelConfigError(name, `must be an integer >= ${min}, got ${String(value)}`);
  return value;
}

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0)
    throw new HubtelConfigError(name, `must be a number >= 0, got ${String(value)}`);
  return value;
}

function credentialPair(
  name: string,
  value: SandboxCredentialPair | undefined,
  fallback: SandboxCredentialPair,
): SandboxCredentialPair {
  if (value === undefined) return { ...fallback };
  if (
    !value ||
    typeof value.clientId !== 'string' ||
    typeof value.clientSecret !== 'string' ||
    !value.clientId ||
    !value.clientSecret
  ) {
    // Never echo the values: they are credentials.
    throw new HubtelConfigError(name, 'must be { clientId, clientSecret } with two non-empty strings');
  }
  if (value.clientId.includes(':'))
    throw new HubtelConfigError(`${name}.clientId`, 'must not contain ":" (Basic auth separator)');
  return { clientId: value.clientId, clientSecret: value.clientSecret };
}

export function resolveSandboxOptions(options: HubtelSandboxOptions = {}): ResolvedSandboxOptions {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new HubtelConfigError('port', `must be an integer from 0 to 65535, got ${String(port)}`);
  let publicUrl: string | undefined;
  if (options.publicUrl !== undefined) {
    try {
      const u = new URL(options.publicUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
      publicUrl = options.publicUrl.replace(/\/+$/, '');
    } catch {
      throw new HubtelConfigError('publicUrl', 'must be an absolute http(s) URL');
    }
  }
  const posSalesId = options.posSalesId ?? SANDBOX_DEFAULT_POS_SALES_ID;
  if (typeof posSalesId !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(posSalesId)) {
    throw new HubtelConfigError('posSalesId', 'must be 1-64 letters, digits, "-" or "_"');
  }
  if (options.dashboard !== undefined && typeof options.dashboard !== 'boolean')
    throw new HubtelConfigError('dashboard', `must be true or false, got ${String(options.dashboard)}`);
  const sms = options.sms ?? {};
  const checkout = options.checkout ?? {};
  if (checkout.minAmount !== undefined) nonNegative('checkout.minAmount', checkout.minAmount, 0);
  return {
    port,
    host: options.host ?? SANDBOX_DEFAULT_HOST,
    publicUrl,
    credentials: {
      sms: credentialPair('credentials.sms', options.credentials?.sms, SANDBOX_DEFAULT_CREDENTIALS.sms),
      api: credentialPair('credentials.api', options.credentials?.api, SANDBOX_DEFAULT_CREDENTIALS.api),
    },
    posSalesId,
    recordLimit: positiveInt('recordLimit', options.recordLimit, SANDBOX_DEFAULT_RECORD_LIMIT),
    maxBodyBytes: positiveInt('maxBodyBytes', options.maxBodyBytes, SANDBOX_DEFAULT_MAX_BODY_BYTES),
    outboundTimeoutMs: positiveInt(
      'outboundTimeoutMs',
      options.outboundTimeoutMs,
      SANDBOX_DEFAULT_OUTBOUND_TIMEOUT_MS,
    ),
    sms: {
      maxRecipients: positiveInt('sms.maxRecipients', sms.maxRecipients, SANDBOX_SMS_DEFAULTS.maxRecipients),
      maxContentLength: positiveInt(
        'sms.maxContentLength',
        sms.maxContentLength,
        SANDBOX_SMS_DEFAULTS.maxContentLength,
      ),
      maxSenderLength: positiveInt(
        'sms.maxSenderLength',
        sms.maxSenderLength,
        SANDBOX_SMS_DEFAULTS.maxSenderLength,
      ),
      rate: nonNegative('sms.rate', sms.rate, SANDBOX_SMS_DEFAULTS.rate),
      deliveryDelayMs: nonNegative(
        'sms.deliveryDelayMs',
        sms.deliveryDelayMs,
        SANDBOX_SMS_DEFAULTS.deliveryDelayMs,
      ),
    },
    checkout: {
      merchantName: checkout.merchantName ?? SANDBOX_CHECKOUT_DEFAULTS.merchantName,
      chargeRate: nonNegative(
        'checkout.chargeRate',
        checkout.chargeRate,
        SANDBOX_CHECKOUT_DEFAULTS.chargeRate,
      ),
      minAmount: checkout.minAmount,
      rejectSpecialCharacters:
        checkout.rejectSpecialCharacters ?? SANDBOX_CHECKOUT_DEFAULTS.rejectSpecialCharacters,
      defaultPhone: checkout.defaultPhone ?? SANDBOX_CHECKOUT_DEFAULTS.defaultPhone,
    },
    dashboard: options.dashboard ?? true,
    allowedHosts: allowedHostNames(options, publicUrl),
    // Whatever logger is given, lines quoting a request's values are escaped and masked.
    logger: options.logger && sanitizingLogger(options.logger),
  };
}

/** The bound address (unless a wildcard), `publicUrl`'s host and the `allowedHosts` option. */
function allowedHostNames(options: HubtelSandboxOptions, publicUrl: string | undefined): ReadonlySet<string> {
  const names = new Set<string>();
  const extra = options.allowedHosts ?? [];
  if (!Array.isArray(extra) || extra.some((name) => typeof name !== 'string' || name.trim() === ''))
    throw new HubtelConfigError('allowedHosts', 'must be an array of host names (or "*")');
  for (const name of extra) names.add(hostNameOf(name) ?? name);
  const host = hostNameOf(options.host ?? SANDBOX_DEFAULT_HOST);
  if (host && host !== '0.0.0.0' && host !== '::') names.add(host);
  if (publicUrl) names.add(new URL(publicUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase());
  return names;
}
