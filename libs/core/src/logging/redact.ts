// Masking for anything that may reach a log line: phone numbers are personal data, credentials are
// never written. Digits that are no phone number (ids, timestamps, amounts) stay searchable.
import { isWrittenPhoneNumber } from '../phone/msisdn.js';

const MASK = '*';
export const REDACTED = '[REDACTED]';

/** Key names whose values are never logged (matched case-insensitively, anywhere in the name). */
const SECRET_KEY =
  /secret|passw(or)?d|pwd|token|authori[sz]ation|api[-_]?key|credential|cookie|client[-_]?id|private[-_]?key|signature/i;

/**
 * Digits of any script with at most three separators between two, after an optional "+" or "(";
 * invisible characters (\p{Cf}) count as none, since a reader sees the digits side by side.
 */
const WRITTEN_NUMBER =
  /(?:[+\uff0b(\uff08]\p{Cf}*)?\p{Nd}(?:\p{Cf}*(?:[\s.\-\u2010-\u2013\uff0d\uff0e()\uff08\uff09/\uff0f_\uff3f]\p{Cf}*){0,3}\p{Nd})*/gu;
/** WRITTEN_NUMBER for ASCII-only text (most log lines), about twice as fast. */
const WRITTEN_NUMBER_ASCII = /[+(]?\d(?:[\s.\-()/_]{0,3}\d)*/g;
const MIN_PHONE_DIGITS = 8;
const MAX_PHONE_DIGITS = 17; // "00" + 15
/** UUIDs (order ids, session ids) are left alone: their digit runs are not phone numbers. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const LETTER = /\p{L}/u;
const DECIMAL_DIGIT = /\p{Nd}/u;

/** Masks a phone number but its first and last three digits (`233******567`); under 7 digits, all. */
export function maskMsisdn(value: string): string {
  const digits = value.replace(/\D/g, '').length;
  if (digits === 0) return value;
  const keep = digits >= 7 ? 3 : 0;
  let seen = 0;
  return value.replace(/\d/g, (d) => {
    const index = seen++;
    return index < keep || index >= digits - keep ? d : MASK;
  });
}

/** Masks every phone number inside free text, in the forms people write them. */
export function maskPhoneNumbers(text: string): string {
  // Most log lines hold no long digit run: one scan answers them.
  const kind = scan(text);
  if (kind === NO_NUMBER) return text;
  const written = kind === ASCII ? WRITTEN_NUMBER_ASCII : WRITTEN_NUMBER;
  let out = '';
  let last = 0;
  for (const match of text.matchAll(UUID)) {
    out += maskOutsideIds(text.slice(last, match.index), written) + match[0];
    last = match.index + match[0].length;
  }
  return out + maskOutsideIds(text.slice(last), written);
}

const NO_NUMBER = 0;
const ASCII = 1;
const OTHER = 2;

/** NO_NUMBER below 8 digits of any script, else whether the text is ASCII only. */
function scan(text: string): typeof NO_NUMBER | typeof ASCII | typeof OTHER {
  let digits = 0;
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
    else if (c > 127) {
      ascii = false;
      if (digitValue(text.codePointAt(i)!) >= 0) digits++;
    }
  }
  return digits < MIN_PHONE_DIGITS ? NO_NUMBER : ascii ? ASCII : OTHER;
}

interface DigitGroup {
  start: number;
  end: number;
  /** Index of each digit in the text (an astral digit takes two code units). */
  at: number[];
  digits: string;
  /** Touches a letter ("ord0241234567"): a bare international run there is an id's digits. */
  glued?: boolean;
}

function maskOutsideIds(part: string, written: RegExp): string {
  let out = '';
  let last = 0;
  for (const match of part.matchAll(written)) {
    // Too short to hold 8 digits: most matches (amounts, counts, dates' parts) end here.
    if (match[0].length < MIN_PHONE_DIGITS) continue;
    const groups = digitGroups(part, match.index, match[0]);
    if (groups.length === 0) continue;
    const plus = match[0][0] === '+' || match[0][0] === '\uff0b';
    const masked = phoneDigitsToMask(groups, plus);
    if (masked.length === 0) continue;
    for (const at of masked) {
      out += part.slice(last, at) + MASK;
      // An astral digit (two code units) is one masked character.
      last = at + (part.charCodeAt(at) >= 0xd800 && part.charCodeAt(at) <= 0xdbff ? 2 : 1);
    }
  }
  return last === 0 ? part : out + part.slice(last);
}

/**
 * The digit groups of one written number, less an edge group glued into a hex id (the platform's
 * dashless SessionIds: masking part of one made it unsearchable). `ord0241234567` is still masked.
 */
function digitGroups(text: string, index: number, written: string): DigitGroup[] {
  const groups: DigitGroup[] = [];
  let total = 0;
  let current: DigitGroup | undefined;
  for (let i = index; i < index + written.length;) {
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const value = digitValue(cp);
    if (value >= 0) {
      if (!current) groups.push((current = { start: i, end: i, at: [], digits: '' }));
      current.at.push(i);
      current.digits += String.fromCharCode(48 + value);
      current.end = i + width;
      total++;
    } else current = undefined;
    i += width;
  }
  if (total < MIN_PHONE_DIGITS) return [];
  const first = groups[0]!;
  if (first.start === index && isLetterBefore(text, index)) first.glued = true;
  const lastGroup = groups.at(-1)!;
  if (lastGroup.end === index + written.length && isLetterAt(text, lastGroup.end)) lastGroup.glued = true;
  return groups.filter((group) => !group.glued || !inHexId(text, group));
}

/** Digits to mask: the longest run of groups from each that is a written phone number, less 3 + 3 digits. */
function phoneDigitsToMask(groups: DigitGroup[], plus: boolean): number[] {
  const masked: number[] = [];
  for (let i = 0; i < groups.length;) {
    let digits = '';
    let best = -1;
    for (let j = i; j < groups.length; j++) {
      digits += groups[j]!.digits;
      if (digits.length > MAX_PHONE_DIGITS) break;
      const grouped = j > i || groups[i]!.glued === true || groups[j]!.glued === true;
      if (isWrittenPhoneNumber(digits, { plus: plus && i === 0, grouped })) best = j;
    }
    if (best < 0) {
      i++;
      continue;
    }
    let count = 0;
    for (let j = i; j <= best; j++) count += groups[j]!.at.length;
    let seen = 0;
    for (let j = i; j <= best; j++)
      for (const at of groups[j]!.at) {
        if (seen >= 3 && seen < count - 3) masked.push(at);
        seen++;
      }
    i = best + 1;
  }
  return masked;
}

function digitValue(cp: number): number {
  if (cp >= 48 && cp <= 57) return cp - 48;
  if (cp < 128) return -1;
  let value = DIGIT_VALUES.get(cp);
  if (value === undefined) {
    // Unicode keeps every script's digits in runs of ten, zero to nine (some runs adjoin: the
    // mathematical digits), so a digit's value is its distance from the run's start, modulo ten.
    if (!DECIMAL_DIGIT.test(String.fromCodePoint(cp))) value = -1;
    else {
      let start = cp;
      while (DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
      value = (cp - start) % 10;
    }
    if (DIGIT_VALUES.size < 4_096) DIGIT_VALUES.set(cp, value);
  }
  return value;
}
const DIGIT_VALUES = new Map<number, number>();

function isLetterAt(text: string, index: number): boolean {
  if (index >= text.length) return false;
  const c = text.charCodeAt(index);
  if (c < 128) return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  return LETTER.test(String.fromCodePoint(text.codePointAt(index)!));
}

function isLetterBefore(text: string, index: number): boolean {
  if (index === 0) return false;
  const c = text.charCodeAt(index - 1);
  // The low half of a pair: look at the whole character.
  return isLetterAt(text, c >= 0xdc00 && c <= 0xdfff && index >= 2 ? index - 2 : index - 1);
}

/** True when `group` lies in a word of lowercase hex only (a dashless id). */
function inHexId(text: string, group: DigitGroup): boolean {
  // Fullwidth or Arabic-Indic digits are in no hex id.
  if (group.at.length !== group.end - group.start || !isWordChar(text.charCodeAt(group.start))) return false;
  for (const at of group.at) if (!isHex(text.charCodeAt(at))) return false;
  let start = group.start;
  while (start > 0 && isWordChar(text.charCodeAt(start - 1)))
    if (!isHex(text.charCodeAt(--start))) return false;
  let end = group.end;
  while (isWordChar(text.charCodeAt(end))) if (!isHex(text.charCodeAt(end++))) return false;
  // A letter of another script continues the word: no hex id then.
  if (text.charCodeAt(start - 1) >= 128 && isLetterBefore(text, start)) return false;
  return !(text.charCodeAt(end) >= 128 && isLetterAt(text, end));
}

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 102);
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/** A copy of `value` safe to log: secret-named keys `[REDACTED]`, phone numbers masked, cycles cut. */
export function redact(value: unknown, maxDepth = 8): unknown {
  return walk(value, maxDepth, new WeakSet(), Infinity);
}

/** `redactToString` cuts its line anyway: masking a whole 10,000-recipient body cost more than sending it. */
const LOG_MAX_ITEMS = 25;

function walk(value: unknown, depth: number, seen: WeakSet<object>, maxItems: number): unknown {
  if (typeof value === 'string') return maskPhoneNumbers(value);
  if (typeof value === 'number') {
    // A phone number held as a number (233241234567); other integers (ids, amounts) stay.
    return Number.isSafeInteger(value) && value > 0 && isWrittenPhoneNumber(String(value))
      ? maskMsisdn(String(value))
      : value;
  }
  if (typeof value === 'bigint') return maskPhoneNumbers(value.toString());
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array || value instanceof ArrayBuffer)
    return `[binary ${value.byteLength} bytes]`;
  if (seen.has(value)) return '[Circular]';
  if (depth <= 0) return Array.isArray(value) ? '[Array]' : '[Object]';
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      const items = value.slice(0, maxItems).map((item) => walk(item, depth - 1, seen, maxItems));
      if (value.length > maxItems) items.push(`…(${value.length - maxItems} more items)`);
      return items;
    }
    if (value instanceof Map) return walk(Object.fromEntries(value), depth, seen, maxItems);
    if (value instanceof Error) {
      const { name, message, code } = value as Error & { code?: unknown };
      return { name, message: maskPhoneNumbers(message), code };
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = isSecretKey(key) ? REDACTED : walk(item, depth - 1, seen, maxItems);
    return out;
  } finally {
    seen.delete(value);
  }
}

/** An error's message (or the value as text), phone numbers masked, for a log line. */
export function describeError(error: unknown): string {
  return maskPhoneNumbers(error instanceof Error ? error.message : String(error));
}

/** `redact` then JSON, for one-line messages: arrays cut at 25 items, the text at `maxLength`; never throws. */
export function redactToString(value: unknown, maxLength = 2_048): string {
  let text: string;
  try {
    text =
      typeof value === 'string'
        ? maskPhoneNumbers(value)
        : (JSON.stringify(walk(value, 8, new WeakSet(), LOG_MAX_ITEMS)) ?? String(value));
  } catch {
    text = '[unserialisable]';
  }
  return text.length > maxLength
    ? `${text.slice(0, maxLength)}…(${text.length - maxLength} more chars)`
    : text;
}
