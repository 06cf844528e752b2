/*
 * Masking for anything that may reach a log line. Phone numbers are personal data and the
 * platform's credentials must never be written anywhere, so every module logs through these.
 * The rules over-mask on purpose (a 12-digit id may be masked too): a log that hides a little
 * too much is cheaper than one that leaks a customer's number.
 */

const MASK = '*';
export const REDACTED = '[REDACTED]';

/** Key names whose values are never logged (matched case-insensitively, anywhere in the name). */
const SECRET_KEY =
  /secret|passw(or)?d|pwd|token|authori[sz]ation|api[-_]?key|credential|cookie|client[-_]?id|private[-_]?key|signature/i;

/** Contiguous runs of 9 to 15 digits, optionally after "+": the shape of an MSISDN. */
const DIGIT_RUN = /(?<![\dA-Za-z])(\+?)(\d{9,15})(?![\dA-Za-z])/g;
/** UUIDs (order ids, session ids) are left alone: their digit runs are not phone numbers. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/**
 * Written forms with separators: "+233 24 123 4567", "(024) 123-4567", "024 123 4567". Bounded by
 * non-alphanumerics like DIGIT_RUN: inside a hex id ("…ab0241234567cd…", the platform's dashless
 * SessionIds and checkout ids) a "0" and eight digits are part of the id, and masking them made
 * the id unsearchable in the logs.
 */
const FORMATTED = /(?<![\dA-Za-z])(?:\+|\(|0)[\d()][\d ()-]{6,}\d(?![\dA-Za-z])/g;

/**
 * Masks a phone number, keeping the first three and last three digits:
 * `maskMsisdn('233241234567') === '233******567'`. Separators are kept, so a formatted number
 * stays readable (`+233 ** *** *567`). Strings with fewer than 7 digits are masked whole.
 */
export function maskMsisdn(value: string): string {
  const digits = value.replace(/\D/g, '').length;
  if (digits === 0) return value;
  const keepHead = digits >= 7 ? 3 : 0;
  const keepTail = digits >= 7 ? 3 : 0;
  let seen = 0;
  return value.replace(/\d/g, (d) => {
    const index = seen++;
    return index < keepHead || index >= digits - keepTail ? d : MASK;
  });
}

/** Masks every phone-number-looking run of digits inside free text. */
export function maskPhoneNumbers(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(UUID)) {
    out += maskOutsideIds(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  return out + maskOutsideIds(text.slice(last));
}

function maskOutsideIds(text: string): string {
  return text
    .replace(FORMATTED, (match) => {
      const digits = match.replace(/\D/g, '').length;
      return digits >= 9 && digits <= 15 ? maskMsisdn(match) : match;
    })
    .replace(DIGIT_RUN, (_m, plus: string, digits: string) => plus + maskMsisdn(digits));
}

/** True when a key's value must never be logged. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * A copy of `value` that is safe to log: secret-named keys replaced by `[REDACTED]`, phone
 * numbers masked in every string (and in 9-15 digit integers), cycles and depth cut, binary
 * data summarised.
 */
export function redact(value: unknown, maxDepth = 8): unknown {
  return walk(value, maxDepth, new WeakSet(), Infinity);
}

/**
 * Items of an array kept by `redactToString`. Its output is one cut log line anyway, and masking
 * a 10,000-recipient body only to drop most of it cost more than sending it.
 */
const LOG_MAX_ITEMS = 25;

function walk(value: unknown, depth: number, seen: WeakSet<object>, maxItems: number): unknown {
  if (typeof value === 'string') return maskPhoneNumbers(value);
  if (typeof value === 'number') {
    return Number.isInteger(value) && Math.abs(value) >= 1e8 && Math.abs(value) < 1e15
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
    if (value instanceof Map) {
      return walk(Object.fromEntries(value), depth, seen, maxItems);
    }
    if (value instanceof Error) {
      return {
        name: value.name,
        message: maskPhoneNumbers(value.message),
        code: (value as { code?: unknown }).code,
      };
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = isSecretKey(key) ? REDACTED : walk(item, depth - 1, seen, maxItems);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/**
 * `redact` then JSON, for one-line log messages: arrays keep their first 25 items (and say how
 * many more there were), the text is cut at `maxLength`. Never throws.
 */
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
