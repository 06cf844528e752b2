// Which channel a programmable-services request comes from, by the rule of Hubtel's own SDK: USSD
// when `Platform` is `USSD` or `Operator` is a telco (any case); else an app channel. One rule for
// the library (how it answers) and the tools (how they play the phone).

/** The telco operators the platform's SDK knows; each may carry a country suffix (`mtn-gh`). */
const USSD_OPERATORS = new Set(['mtn', 'vodafone', 'tigo', 'airtel', 'airteltigo', 'glo', 'safaricom']);

/** `ussd`: the phone shows `Message` only; `app`: the Hubtel app renders `Data` as a list. */
export type ServiceAppChannel = 'ussd' | 'app';

/** The request fields the channel depends on. */
export interface ServiceAppChannelFields {
  Platform?: unknown;
  Operator?: unknown;
}

/** True when `operator` is a telco (`mtn`, `MTN-GH`, `safaricom-ke`, ...). */
export function isTelcoOperator(operator: unknown): boolean {
  if (typeof operator !== 'string') return false;
  // A country suffix is letters after one dash: `mtn-gh`; `mtn-android` is not a telco.
  const match = /^([a-z]+)(?:-[a-z]{2,3})?$/.exec(operator.trim().toLowerCase());
  return match !== null && USSD_OPERATORS.has(match[1]!);
}

/** True when the request comes from the USSD channel (`Platform: USSD`, or a telco `Operator`). */
export function isUssdRequest(request: ServiceAppChannelFields): boolean {
  const platform = request.Platform;
  if (typeof platform === 'string' && platform.trim().toLowerCase() === 'ussd') return true;
  return isTelcoOperator(request.Operator);
}

export function serviceAppChannel(request: ServiceAppChannelFields): ServiceAppChannel {
  return isUssdRequest(request) ? 'ussd' : 'app';
}
