import { HubtelConfigError } from 'nestjs-hubtel';
import { checkOptions, sanitizingLogger } from '#internal';
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
import { SandboxOptionsDto } from './sandbox.options.dto.js';
import type { HubtelSandboxOptions, SandboxCredentialPair, SandboxLogger } from './sandbox.types.js';

/*
 * The sandbox's options, checked once at construction (a bad one is a HubtelConfigError naming
 * it), with the defaults filled in. The plain data is SandboxOptionsDto's; publicUrl (URL parsing),
 * allowedHosts (host names) and the logger (an object with methods) are checked here.
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

export function resolveSandboxOptions(options: HubtelSandboxOptions = {}): ResolvedSandboxOptions {
  const o = checkOptions(
    SandboxOptionsDto,
    {
      port: options.port,
      posSalesId: options.posSalesId,
      dashboard: options.dashboard,
      recordLimit: options.recordLimit,
      maxBodyBytes: options.maxBodyBytes,
      outboundTimeoutMs: options.outboundTimeoutMs,
      credentials: options.credentials,
      sms: options.sms,
      checkout: options.checkout,
    },
    '',
  );
  const port = o.port ?? 0;
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
  const posSalesId = o.posSalesId ?? SANDBOX_DEFAULT_POS_SALES_ID;
  const sms = o.sms ?? {};
  const checkout = { ...options.checkout, ...o.checkout };
  return {
    port,
    host: options.host ?? SANDBOX_DEFAULT_HOST,
    publicUrl,
    credentials: {
      sms: { ...(o.credentials?.sms ?? SANDBOX_DEFAULT_CREDENTIALS.sms) },
      api: { ...(o.credentials?.api ?? SANDBOX_DEFAULT_CREDENTIALS.api) },
    },
    posSalesId,
    recordLimit: o.recordLimit ?? SANDBOX_DEFAULT_RECORD_LIMIT,
    maxBodyBytes: o.maxBodyBytes ?? SANDBOX_DEFAULT_MAX_BODY_BYTES,
    outboundTimeoutMs: o.outboundTimeoutMs ?? SANDBOX_DEFAULT_OUTBOUND_TIMEOUT_MS,
    sms: {
      maxRecipients: sms.maxRecipients ?? SANDBOX_SMS_DEFAULTS.maxRecipients,
      maxContentLength: sms.maxContentLength ?? SANDBOX_SMS_DEFAULTS.maxContentLength,
      maxSenderLength: sms.maxSenderLength ?? SANDBOX_SMS_DEFAULTS.maxSenderLength,
      rate: sms.rate ?? SANDBOX_SMS_DEFAULTS.rate,
      deliveryDelayMs: sms.deliveryDelayMs ?? SANDBOX_SMS_DEFAULTS.deliveryDelayMs,
    },
    checkout: {
      merchantName: checkout.merchantName ?? SANDBOX_CHECKOUT_DEFAULTS.merchantName,
      chargeRate: checkout.chargeRate ?? SANDBOX_CHECKOUT_DEFAULTS.chargeRate,
      minAmount: checkout.minAmount,
      rejectSpecialCharacters:
        checkout.rejectSpecialCharacters ?? SANDBOX_CHECKOUT_DEFAULTS.rejectSpecialCharacters,
      defaultPhone: checkout.defaultPhone ?? SANDBOX_CHECKOUT_DEFAULTS.defaultPhone,
    },
    dashboard: o.dashboard ?? true,
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
