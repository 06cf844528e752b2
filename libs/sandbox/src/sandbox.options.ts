import { HUBTEL_DEFAULT_ACCOUNT, HubtelConfigError } from 'nestjs-hubtel';
import { accountEnvVariable, checkOptions, sanitizingLogger, withOptionDefaults } from '#internal';
import {
  SANDBOX_DEFAULT_CREDENTIALS,
  SANDBOX_DEFAULT_HOST,
  SANDBOX_DEFAULT_POS_SALES_ID,
} from './sandbox.constants.js';
import { hostNameOf, isHttpUrl } from './sandbox.http.js';
import { SandboxAccountDto, SandboxOptionsDto } from './sandbox.options.dto.js';
import type { HubtelSandboxOptions, SandboxAccount } from './sandbox.option-types.js';

// Checked once at construction (HubtelConfigError naming the option), defaults filled in: the
// plain data by SandboxOptionsDto, publicUrl, allowedHosts, accounts and the logger here.
export type ResolvedSandboxOptions = ReturnType<typeof resolveSandboxOptions>;

export function resolveSandboxOptions(options: HubtelSandboxOptions = {}) {
  const o = withOptionDefaults(SandboxOptionsDto, checkOptions(SandboxOptionsDto, options, ''));
  if (options.publicUrl !== undefined && !isHttpUrl(options.publicUrl))
    throw new HubtelConfigError('publicUrl', 'must be an absolute http(s) URL');
  const publicUrl = options.publicUrl?.replace(/\/+$/, '');
  const { sms, api, callback } = o.credentials ?? {};
  const defaultAccount: SandboxAccount = {
    name: HUBTEL_DEFAULT_ACCOUNT,
    credentials: {
      sms: { ...(sms ?? SANDBOX_DEFAULT_CREDENTIALS.sms) },
      api: { ...(api ?? SANDBOX_DEFAULT_CREDENTIALS.api) },
      callback: callback && { ...callback },
    },
    posSalesId: o.posSalesId,
    senderIds: senderIdList(options.sms?.senderIds, 'sms.senderIds', o.sms.maxSenderLength),
    merchantName: o.checkout.merchantName,
    chargeBearer: o.checkout.chargeBearer,
  };
  return {
    ...o,
    host: options.host ?? SANDBOX_DEFAULT_HOST,
    publicUrl,
    /** Every account served, the default one (the top-level options') first. */
    accounts: resolveAccounts(options.accounts, defaultAccount, o.sms.maxSenderLength),
    /** Host names the admin API and dashboard answer besides loopback ones (see `allowedHosts`). */
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

/** A `senderIds` list: strings, not blank, each a sender the SMS API would accept. */
function senderIdList(value: unknown, option: string, maxLength: number): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 100)
    throw new HubtelConfigError(option, 'must be an array of at most 100 sender ids');
  value.forEach((id, i) => {
    if (typeof id !== 'string' || id.trim() === '' || id.length > maxLength)
      throw new HubtelConfigError(`${option}[${i}]`, `must be a sender id of 1 to ${maxLength} characters`);
  });
  return [...new Set(value as string[])];
}

/** The default account, then each of `accounts` with its defaults; what two would share is refused. */
function resolveAccounts(
  value: unknown,
  defaultAccount: SandboxAccount,
  maxSenderLength: number,
): SandboxAccount[] {
  if (value === undefined) return [defaultAccount];
  if (!Array.isArray(value) || value.length > 100)
    throw new HubtelConfigError('accounts', 'must be an array of at most 100 accounts');
  const owners = new Map<string, SandboxAccount>();
  const claim = (account: SandboxAccount, prefix: string) => {
    const env = accountEnvVariable(account.name, 'HUBTEL_');
    const claims: [key: string, option: string, what: string][] = [
      [`name:${env}`, 'name', `"${account.name}" (${env}*)`],
      [`pos:${account.posSalesId}`, 'posSalesId', `POS Sales ID "${account.posSalesId}"`],
      [`api:${account.credentials.api.clientId}`, 'credentials.api.clientId', 'this API key'],
      [`sms:${account.credentials.sms.clientId}`, 'credentials.sms.clientId', 'this SMS key'],
      ...account.senderIds.map((id, j): [string, string, string] => [
        `sender:${id.toLowerCase()}`,
        `senderIds[${j}]`,
        `sender id "${id}"`,
      ]),
    ];
    for (const [key, option, what] of claims) {
      const other = owners.get(key);
      if (other !== undefined && other !== account) {
        const whose = other === defaultAccount ? 'the default account' : `account "${other.name}"`;
        throw new HubtelConfigError(`${prefix}${option}`, `${what} is already ${whose}'s`);
      }
      owners.set(key, account);
    }
  };
  claim(defaultAccount, '');
  const named = (value as unknown[]).map((entry, i) => {
    const prefix = `accounts[${i}]`;
    const a = checkOptions(SandboxAccountDto, entry, prefix);
    if (a.name === HUBTEL_DEFAULT_ACCOUNT)
      throw new HubtelConfigError(
        `${prefix}.name`,
        `"${a.name}" is reserved for the top-level options' account`,
      );
    const keys = (kind: 'api' | 'sms', id = `sandbox-${a.name}-${kind}`) => ({
      ...(a.credentials?.[kind] ?? { clientId: id, clientSecret: `${id}-secret` }),
    });
    const callback = a.credentials?.callback;
    const account: SandboxAccount = {
      name: a.name,
      credentials: { api: keys('api'), sms: keys('sms'), callback: callback && { ...callback } },
      posSalesId: a.posSalesId ?? String(Number(SANDBOX_DEFAULT_POS_SALES_ID) + i + 1),
      senderIds: senderIdList(a.senderIds, `${prefix}.senderIds`, maxSenderLength),
      merchantName: a.merchantName ?? defaultAccount.merchantName,
      chargeBearer: a.chargeBearer ?? defaultAccount.chargeBearer,
    };
    claim(account, `${prefix}.`);
    return account;
  });
  return [defaultAccount, ...named];
}
