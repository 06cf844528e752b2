// Escaping for text that reaches a log line: a request's value could otherwise forge a line of its
// own, recolour the terminal (ANSI) or reorder what a person reads (bidi). Masking comes first: it
// reads a tab or zero-width space between digits as a separator, where its escape would split them.
import { maskPhoneNumbers } from './redact.js';

/** C0, DEL and C1 controls, line/paragraph separators, bidi marks and overrides, the BOM. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Longest log line written by the suite's loggers (a line built from request values included). */
export const LOG_LINE_MAX_LENGTH = 4_096;

function escapeChar(char: string): string {
  const named = NAMED[char];
  if (named) return named;
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control, line-separator and bidi character as a visible escape (`\n`, `\x1b`). */
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

/** One value from outside made safe for a log line: controls escaped, phones masked, cut at `maxLength`. */
export function sanitizeLogValue(value: unknown, maxLength = 256): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : String(value);
  } catch {
    text = '[unprintable]';
  }
  return sanitizeLogLine(text, maxLength);
}

/** A whole log line made safe, as `sanitizeLogValue`; HubtelLogger runs every message through it. */
export function sanitizeLogLine(line: string, maxLength = LOG_LINE_MAX_LENGTH): string {
  return capLogText(escapeLogText(maskPhoneNumbers(line)), maxLength);
}

/** A newline that does not start a stack frame ("    at fn (file:1:2)", `(native)`, ...). */
const NEWLINE_NOT_FRAME =
  /\n(?![ \t]+at [^\n]*(?::\d+:\d+\)?|\((?:<anonymous>|native|index \d+)\))(?:\n|$))/g;

/** A stack trace made safe: frames keep their lines; any other newline (the message's) is escaped. */
export function sanitizeStack(stack: string, maxLength = 4 * LOG_LINE_MAX_LENGTH): string {
  const masked = maskPhoneNumbers(stack);
  const escaped = UNSAFE.test(masked)
    ? masked
        .replace(UNSAFE_ALL, (char) => (char === '\n' ? char : escapeChar(char)))
        .replace(NEWLINE_NOT_FRAME, '\\n')
    : masked;
  return capLogText(escaped, maxLength);
}
