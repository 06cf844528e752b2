import {
  LOG_LINE_MAX_LENGTH,
  capLogText,
  escapeLogText,
  sanitizeLogLine,
  sanitizeLogValue,
  sanitizeStack,
} from './log-sanitize.js';

describe('escapeLogText', () => {
  it('writes control, separator and bidi characters as visible escapes', () => {
    expect(escapeLogText('a\nb\rc\td')).toBe('a\\nb\\rc\\td');
    expect(escapeLogText('\x1b[31mred\x1b[0m')).toBe('\\x1b[31mred\\x1b[0m');
    expect(escapeLogText('nul\x00 del\x7f c1\x85\x9b')).toBe('nul\\x00 del\\x7f c1\\x85\\x9b');
    expect(escapeLogText('a\u2028b\u2029c')).toBe('a\\u2028b\\u2029c');
    expect(escapeLogText('\u202egnp\u202c\u2066\u2069\u200e\u200f\u061c\ufeff')).toBe(
      '\\u202egnp\\u202c\\u2066\\u2069\\u200e\\u200f\\u061c\\ufeff',
    );
  });
  it('leaves ordinary text (accents, emoji, other scripts) as it is', () => {
    const text = 'Kofi Ànnán 🇬🇭 — أكرا 12.50 GHS';
    expect(escapeLogText(text)).toBe(text);
  });
});

describe('capLogText', () => {
  it('cuts with a visible marker, never inside a surrogate pair', () => {
    expect(capLogText('abcdef', 4)).toBe('abcd…(2 more chars)');
    expect(capLogText('abc', 4)).toBe('abc');
    expect(capLogText('ab😀cd', 3)).toBe('ab…(4 more chars)');
  });
});

describe('sanitizeLogValue / sanitizeLogLine', () => {
  it('escapes, masks phone numbers and caps', () => {
    expect(sanitizeLogValue('ref\n[Shop] Order 1 paid for 233241234567')).toBe(
      'ref\\n[Shop] Order 1 paid for 233******567',
    );
    expect(sanitizeLogValue('x'.repeat(1_000))).toBe(`${'x'.repeat(256)}…(744 more chars)`);
    expect(sanitizeLogValue(42)).toBe('42');
    const line = sanitizeLogLine(`Invoice ${'r'.repeat(10_000)}`);
    expect(line.startsWith(`Invoice ${'r'.repeat(LOG_LINE_MAX_LENGTH - 8)}…(`)).toBe(true);
  });
  it('leaves ids alone as the masking does', () => {
    const line = 'Session 7c9a0241234567b3e4 for 3f930123-4567-4890-8123-430123456789';
    expect(sanitizeLogLine(line)).toBe(line);
  });
});

describe('sanitizeStack', () => {
  it('keeps the frames on their lines; escapes a newline inside the message', () => {
    const error = new Error('ref\n[Shop] Order 1 paid\x1b[2K by 233241234567');
    const stack = sanitizeStack(error.stack!);
    const lines = stack.split('\n');
    expect(lines[0]).toBe('Error: ref\\n[Shop] Order 1 paid\\x1b[2K by 233******567');
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.slice(1).every((l) => /^\s+at /.test(l))).toBe(true);
    // A "frame" without a line and column is not one.
    expect(sanitizeStack('Error: x\n    at [Shop] Order 1 paid\n    at f (a.js:1:2)')).toBe(
      'Error: x\\n    at [Shop] Order 1 paid\n    at f (a.js:1:2)',
    );
  });
});
