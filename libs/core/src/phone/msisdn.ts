import { HubtelValidationError, type ValidationIssue } from '../errors/hubtel.errors.js';
import { HUBTEL_DEFAULT_COUNTRY_CODE } from '../hubtel.constants.js';

// Phone numbers in the contract's form, `233241234567`, from `+233 24 123 4567`, `00233…`,
// `0241234567` or `+233 (0)24…`. Ghana: 233 + 9 digits not starting with 0 (a typo is refused, not
// guessed); elsewhere 8 to 15 digits. Bare national digits are refused, not sent to the wrong country.
const MSISDN_MIN_DIGITS = 8;
const MSISDN_MAX_DIGITS = 15;

/** National number lengths of the countries we can check strictly. */
const NATIONAL_LENGTH: Readonly<Record<string, number>> = { '233': 9 };
const GHANA_MSISDN = /^233[1-9]\d{8}$/;

export type MsisdnResult = { ok: true; msisdn: string } | { ok: false; reason: string };

const refuse = (reason: string): MsisdnResult => ({ ok: false, reason });

/** Like `normalizeMsisdn` but never throws: an exception per bad entry of a large list costs more. */
export function tryNormalizeMsisdn(
  value: unknown,
  defaultCountryCode: string = HUBTEL_DEFAULT_COUNTRY_CODE,
): MsisdnResult {
  let text: string;
  if (typeof value === 'string') {
    // The form most lists already hold passes every rule below unchanged (bulk sends check millions).
    if (GHANA_MSISDN.test(value)) return { ok: true, msisdn: value };
    text = value;
  } else if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) text = String(value);
  else if (typeof value === 'bigint' && value > 0n) text = value.toString();
  else return refuse(`must be a string, got ${value === null ? 'null' : typeof value}`);

  if (text.trim() === '') return refuse('is empty');
  const s = text.replace(/\(0\)/g, '').replace(/[\s().\-\u00a0]/g, '');

  let digits: string;
  if (s.startsWith('+')) digits = s.slice(1);
  else if (s.startsWith('00')) digits = s.slice(2);
  else if (s.startsWith('0')) digits = defaultCountryCode + s.slice(1);
  else digits = s;

  if (!/^\d+$/.test(digits))
    return refuse('contains characters other than digits, spaces, dashes, parentheses and a leading "+"');
  if (digits.startsWith('0')) return refuse('has no country code');

  // Bare national digits without the trunk 0 ("241234567"): refuse rather than guess a country.
  const nationalLength = NATIONAL_LENGTH[defaultCountryCode];
  if (
    !/^[+0]/.test(s) &&
    nationalLength !== undefined &&
    digits.length === nationalLength &&
    !digits.startsWith(defaultCountryCode)
  )
    return refuse(`has no country code (write it as 0${digits} or +${defaultCountryCode}${digits})`);
  for (const [code, length] of Object.entries(NATIONAL_LENGTH))
    if (digits.startsWith(code)) {
      const national = digits.slice(code.length);
      if (national.length === length && !national.startsWith('0')) return { ok: true, msisdn: digits };
      return refuse(
        `is not a valid +${code} number (expected ${code} followed by ${length} digits, not starting with 0)`,
      );
    }
  if (digits.length < MSISDN_MIN_DIGITS || digits.length > MSISDN_MAX_DIGITS)
    return refuse(
      `must have ${MSISDN_MIN_DIGITS} to ${MSISDN_MAX_DIGITS} digits with the country code, got ${digits.length}`,
    );
  return { ok: true, msisdn: digits };
}

/** A rejected value in an error message: strings quoted and cut, numbers as they are, else its type. */
export function echoValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return value === null ? 'null' : typeof value;
}

/** Normalises one phone number to `233241234567` form, or throws a HubtelValidationError. */
export function normalizeMsisdn(
  value: unknown,
  defaultCountryCode: string = HUBTEL_DEFAULT_COUNTRY_CODE,
  field = 'msisdn',
): string {
  const result = tryNormalizeMsisdn(value, defaultCountryCode);
  if (result.ok) return result.msisdn;
  throw new HubtelValidationError(`Invalid phone number ${echoValue(value)}: ${result.reason}`, [
    { field, message: result.reason, value },
  ]);
}

/**
 * The error for a recipient list with bad numbers, else undefined: one issue per bad entry
 * (`recipients[index]`), the first few in its message. Keeps nothing else: a large list costs no copy.
 */
export function invalidMsisdnsError(
  values: Iterable<unknown>,
  defaultCountryCode: string = HUBTEL_DEFAULT_COUNTRY_CODE,
): HubtelValidationError | undefined {
  const invalid: ValidationIssue[] = [];
  let index = 0;
  for (const value of values) {
    const result = tryNormalizeMsisdn(value, defaultCountryCode);
    if (!result.ok) invalid.push({ field: `recipients[${index}]`, message: result.reason, value });
    index++;
  }
  if (invalid.length === 0) return undefined;
  const shown = invalid.slice(0, 10).map((i) => `${i.field} ${echoValue(i.value)} (${i.message})`);
  const more = invalid.length > shown.length ? `, and ${invalid.length - shown.length} more` : '';
  const noun = invalid.length === 1 ? 'recipient is' : 'recipients are';
  return new HubtelValidationError(
    `${invalid.length} ${noun} not a valid phone number: ${shown.join('; ')}${more}`,
    invalid,
  );
}

/**
 * Whether digits in free text are a phone number as people write them, for masking; stricter than
 * `tryNormalizeMsisdn` so ids stay readable: after "+" or "00" 8 to 15 digits; 233 + 9 (or 233 0 +
 * 9); 0 + 9, the second not 0; one run of 11 to 15 not starting with 0, exactly 11 for +1 and +7
 * (13-digit ms timestamps stay readable), and not `grouped` (in groups or glued to letters: dates).
 */
export function isWrittenPhoneNumber(
  digits: string,
  written: { plus?: boolean; grouped?: boolean } = {},
): boolean {
  const n = digits.length;
  let rest = digits;
  let international = written.plus === true;
  if (!international && digits.startsWith('00')) {
    rest = digits.slice(2);
    international = true;
  }
  if (rest.startsWith(HUBTEL_DEFAULT_COUNTRY_CODE)) {
    const national = rest.slice(HUBTEL_DEFAULT_COUNTRY_CODE.length);
    if (national.length === 9 && national[0] !== '0') return true;
    return national.length === 10 && national[0] === '0' && national[1] !== '0';
  }
  if (international)
    return rest.length >= MSISDN_MIN_DIGITS && rest.length <= MSISDN_MAX_DIGITS && rest[0] !== '0';
  if (digits[0] === '0') return n === 10 && digits[1] !== '0';
  if (written.grouped || n < 11 || n > MSISDN_MAX_DIGITS) return false;
  return digits[0] === '1' || digits[0] === '7' ? n === 11 : true;
}
