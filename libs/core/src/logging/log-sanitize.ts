/*
 * Escaping for text that reaches a log line. A value from a request (a ClientReference, a JSON
 * key, a SessionId, an error message quoting one) could otherwise carry a newline and write a
 * line of its own ("[Shop] Order … paid"), an ANSI sequence that recolours or erases the
 * terminal, or bidi overrides that reorder what a person reads. Every such character is written
 * as a visible escape instead, the text is masked (phone numbers) and cut to a bounded length.
 * Masking comes first: it reads the text as written (a tab or a zero-width space between a
 * number's digits is a separator there, where its escape `\t`, `\ufeff` would split the number).
 */
import { maskPhoneNumbers } from './redact.js';

/**
 * What is escaped: C0 controls (newline, CR, tab, ESC, NUL…), DEL and C1 controls, the Unicode
 * line/paragraph separators, and the invisible direction marks and overrides (bidi "Trojan
 * source" characters), plus the BOM.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');
/** As UNSAFE, newline excepted: for stack traces, which are multi-line by design. */
const UNSAFE_BUT_NEWLINE =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Longest log line written by the suite's loggers (a line built from request values included). */
export const LOG_LINE_MAX_LENGTH = 4_096;
/** Longest single value `sanitizeLogValue` keeps. */
export const LOG_VALUE_MAX_LENGTH = 256;

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control, line-separator and bidi character written as a visible escape
 * (`\n`, `\r`, `\x1b`, `\x00`, `\u2028`, `\u202e`), so it stays on one line and shows what it
 * holds. Text without such characters is returned as is (one regex test).
 */
export function escapeLogText(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeChar) : text;
}

/** `text` cut to `maxLength` characters, with a visible marker saying how much was cut. */
export function capLogText(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  let end = maxLength;
  // Do not leave half a surrogate pair behind.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…(${text.length - end} more chars)`;
}

/**
 * One value from outside (a request field, a key, an error message) made safe to put in a log
 * line: control characters escaped, phone numbers masked, cut at `maxLength` (default 256).
 * `logger.warn(\`Unknown reference ${sanitizeLogValue(ref)}\`)`.
 */
export function sanitizeLogValue(value: unknown, maxLength = LOG_VALUE_MAX_LENGTH): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : String(value);
  } catch {
    text = '[unprintable]';
  }
  return capLogText(escapeLogText(maskPhoneNumbers(text)), maxLength);
}

/**
 * A whole log line made safe: as `sanitizeLogValue`, with the longer line limit. The suite's
 * loggers (`HubtelLogger`) run every message through it.
 */
export function sanitizeLogLine(line: string, maxLength = LOG_LINE_MAX_LENGTH): string {
  return capLogText(escapeLogText(maskPhoneNumbers(line)), maxLength);
}

/**
 * A newline that does not start a stack frame ("    at fn (file:1:2)", ending in a line and
 * column, or `(<anonymous>)`, `(native)`, `(index 0)`): frames keep their lines, anything else
 * (a message's own newline) is escaped.
 */
const NEWLINE_NOT_FRAME =
  /\n(?![ \t]+at [^\n]*(?::\d+:\d+\)?|\((?:<anonymous>|native|index \d+)\))(?:\n|$))/g;

/**
 * A stack trace made safe: its frames stay on their own lines, but any other newline (one inside
 * the error's message, which the first line repeats and which may quote a value) and every other
 * control character is escaped, and phone numbers are masked.
 */
export function sanitizeStack(stack: string, maxLength = 4 * LOG_LINE_MAX_LENGTH): string {
  const masked = maskPhoneNumbers(stack);
  const escaped = UNSAFE.test(masked)
    ? masked.replace(UNSAFE_BUT_NEWLINE, escapeChar).replace(NEWLINE_NOT_FRAME, '\\n')
    : masked;
  return capLogText(escaped, maxLength);
}
