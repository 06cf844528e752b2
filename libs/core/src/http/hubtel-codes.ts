import { maskPhoneNumbers } from '../logging/redact.js';
import type { HubtelApi } from '../options/hubtel-options.types.js';
import { fieldOf } from './answer-fields.js';

/** Documented outcome codes of checkout, the status check and programmable services, for messages. */
const HUBTEL_RESPONSE_CODES: Readonly<Record<string, string>> = Object.freeze({
  '0000': 'success',
  '0001': 'request accepted; the final status follows by callback',
  '0005': 'HTTP failure at the payment partner; the state is unknown, check the transaction status',
  '2001':
    'payment processor failure (wrong PIN, USSD time-out, or special characters such as & * ! % @ in the description)',
  '4000': 'validation error',
  '4070': 'fees not set, or amount below the minimum',
  '4101': 'wrong API keys, missing API scope, or wrong POS Sales ID',
  '4103': 'payment channel not permitted for this account',
  '4105': 'these API keys do not own the POS Sales ID',
});

/** Sub-codes of an SMS API HTTP 400 answer. */
const HUBTEL_SMS_ERROR_CODES: Readonly<Record<string, string>> = Object.freeze({
  '1': 'invalid destination number',
  '2': 'invalid sender id',
  '3': 'message content too long',
  '4': 'destination not routable',
  '5': 'invalid send time',
  '6': 'message content rejected',
  '7': 'invalid request parameters',
  '8': 'invalid request parameters',
  '12': 'payment required (no SMS credit)',
});

/** A refusal message's tail, ` (code 4101: its meaning) — the platform's words`, masked; parts if found. */
export function refusalDetail(api: HubtelApi, code: string | undefined, body: unknown): string {
  const meaning =
    code === undefined ? undefined : (api === 'sms' ? HUBTEL_SMS_ERROR_CODES : HUBTEL_RESPONSE_CODES)[code];
  const text = platformMessage(body);
  return (
    (code === undefined ? '' : ` (code ${code}${meaning ? `: ${meaning}` : ''})`) +
    (text ? ` — ${maskPhoneNumbers(text)}` : '')
  );
}

/** The platform's own words in an answer (its `message`, `statusDescription`, `error`...), cut to 300. */
function platformMessage(body: unknown): string | undefined {
  const data = fieldOf(body, 'data');
  for (const value of [
    ...['message', 'statusDescription', 'error', 'status'].map((name) => fieldOf(body, name)),
    fieldOf(data, 'message'),
  ]) {
    if (typeof value === 'string' && value.trim() !== '')
      return value.length > 300 ? `${value.slice(0, 300)}…` : value;
  }
  return undefined;
}
