/*
 * Which channel a programmable-services request comes from, by the rule of Hubtel's own SDK: USSD
 * when `Platform` is `USSD` (any case) or `Operator` is a telco (with or without its country
 * suffix, any case); every other request comes from an app channel (Hubtel-Android, web, ...).
 * One rule for the library (how it answers) and the tools (how they play the phone).
 */

/** The telco operators the platform's SDK knows; each may carry a country suffix (`mtn-gh`). */
export const USSD_OPERATORS: readonly string[] = Object.freeze([
  'mtn',
  'vodafone',
  'tigo',
  'airtel',
  'airteltigo',
  'glo',
  'safaricom',
]);

/** `ussd`: the phone shows `Message` only; `app`: the Hubtel app renders `Data` as a list. */
export type ServiceAppChannel = 'ussd' | 'app';

/** The request fields the channel depends on (any other fields are ignored). */
export interface ServiceAppChannelFields {
  Platform?: unknown;
  Operator?: unknown;
}

/** True when `operator` is a telco (`mtn`, `MTN-GH`, `safaricom-ke`, ...). */
export function isTelcoOperator(operator: unknown): boolean {
  if (typeof operator !== 'string') return false;
  const name = operator.trim().toLowerCase();
  // A country suffix is letters after one dash: `mtn-gh`; `mtn-android` is not a telco.
  const match = /^([a-z]+)(?:-[a-z]{2,3})?$/.exec(name);
  return match !== null && USSD_OPERATORS.includes(match[1]!);
}

/** True when the request comes from the USSD channel (`Platform: USSD`, or a telco `Operator`). */
export function isUssdRequest(request: ServiceAppChannelFields): boolean {
  const platform = request.Platform;
  if (typeof platform === 'string' && platform.trim().toLowerCase() === 'ussd') return true;
  return isTelcoOperator(request.Operator);
}

/** The channel of a request: `ussd` or `app`. */
export function serviceAppChannel(request: ServiceAppChannelFields): ServiceAppChannel {
  return isUssdRequest(request) ? 'ussd' : 'app';
}
