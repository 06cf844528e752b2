import fc from 'fast-check';
import { sanitizeLogLine } from './log-sanitize.js';
import { REDACTED, isSecretKey, maskMsisdn, maskPhoneNumbers, redact, redactToString } from './redact.js';

describe('maskMsisdn', () => {
  it('keeps the first and last three digits', () => {
    expect(maskMsisdn('233241234567')).toBe('233******567');
    expect(maskMsisdn('0241234567')).toBe('024****567');
    expect(maskMsisdn('+233 24 123 4567')).toBe('+233 ** *** *567');
  });
  it('masks short digit strings whole and leaves digit-free text alone', () => {
    expect(maskMsisdn('12345')).toBe('*****');
    expect(maskMsisdn('n/a')).toBe('n/a');
  });
});

describe('maskPhoneNumbers', () => {
  it('masks MSISDN-looking runs and written forms inside text', () => {
    expect(maskPhoneNumbers('to 233241234567 and +233241234568.')).toBe('to 233******567 and +233******568.');
    expect(maskPhoneNumbers('call 024 123 4567 or (024) 123-4567')).toBe(
      'call 024 *** *567 or (024) ***-*567',
    );
    expect(maskPhoneNumbers('{"To":"00233241234567"}')).toBe('{"To":"002********567"}');
  });
  it('leaves ids alone: UUIDs and digit runs glued to letters', () => {
    const uuid = '3f930123-4567-4890-8123-430123456789';
    expect(maskPhoneNumbers(`order ${uuid} for 233241234567`)).toBe(`order ${uuid} for 233******567`);
    expect(maskPhoneNumbers('inv3f930123456789')).toBe('inv3f930123456789');
    // A "0" and eight or more digits inside a dashless hex id (SessionIds, checkout ids).
    expect(maskPhoneNumbers('session 7c9a0241234567b3e4 done')).toBe('session 7c9a0241234567b3e4 done');
    expect(maskPhoneNumbers('session 0241234567b3e4, ab0241234567')).toBe(
      'session 0241234567b3e4, ab0241234567',
    );
    // A phone number glued to letters that are no hex id is still one (issue 21, item 8).
    expect(maskPhoneNumbers('ref (024) 123-4567x')).toBe('ref (024) ***-*567x');
  });

  it('never changes a dashless hex id (randomUUID without dashes, as the platform sends them)', () => {
    // Seeded, so a failure reproduces; biased to digits so long digit runs inside ids are common.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const hex = '0123456789abcdef';
    let withRun = 0;
    for (let n = 0; n < 5_000; n++) {
      let id = '';
      for (let i = 0; i < 32; i++)
        id += next() < 0.85 ? String(Math.floor(next() * 10)) : hex[10 + Math.floor(next() * 6)];
      if (!/^\d+$/.test(id) && /[a-f]\d{9,}[a-f]/.test(id)) withRun++;
      if (/^\d+$/.test(id)) continue; // all digits: indistinguishable from a long number
      const line = `Session ${id} added "Airtime for 233241234567"`;
      expect(maskPhoneNumbers(line)).toBe(`Session ${id} added "Airtime for 233******567"`);
    }
    expect(withRun).toBeGreaterThan(1_000); // the sweep did cover ids with phone-length digit runs
  });

  // Issue 21, item 8: the forms people write a number in were logged unmasked, and ids of 9 or
  // more digits that are no phone number were masked ("forged-141****608").
  it.each([
    ['233 24 123 4567', '233 ** *** *567'],
    ['+233 24 123 4567', '+233 ** *** *567'],
    ['+233 (0)24 123 4567', '+233 (*)** *** *567'],
    ['00233241234567', '002********567'],
    ['024.123.4567', '024.***.*567'],
    ['024-123-4567', '024-***-*567'],
    ['233-241-234-567', '233-***-***-567'],
    ['233.24.123.4567', '233.**.***.*567'],
    ['0 24 123 4567', '0 24 *** *567'],
    ['(024) 123 4567', '(024) *** *567'],
    ['ord0241234567', 'ord024****567'],
    ['ORD233241234567', 'ORD233******567'],
    ['ord_0241234567', 'ord_024****567'],
    ['order ord-0241234567 paid', 'order ord-024****567 paid'],
    ['to 0241234567.', 'to 024****567.'],
    ['on 2026-01-01 0241234567', 'on 2026-01-01 024****567'],
    ['０２４１２３４５６７', '０２４****５６７'], // fullwidth
    ['＋２３３ ２４ １２３ ４５６７', '＋２３３ ** *** *５６７'],
    ['٠٢٤١٢٣٤٥٦٧', '٠٢٤****٥٦٧'], // Arabic-Indic
    ['۰۲۴۱۲۳۴۵۶۷', '۰۲۴****۵۶۷'], // Extended Arabic-Indic (Persian, Urdu)
    ['رقم٢٣٣٢٤١٢٣٤٥٦٧', 'رقم٢٣٣******٥٦٧'],
    ['+44 7911 123456', '+44 7*** ***456'],
    ['447911123456', '447******456'],
    ['+1 415 555 2671', '+1 41* *** *671'],
  ])('masks a phone number written %j', (written, masked) => {
    expect(maskPhoneNumbers(written)).toBe(masked);
    expect(maskPhoneNumbers(`Order for ${written}, again`)).toBe(`Order for ${masked}, again`);
  });

  it.each([
    'forged-141234608', // 9 digits: no number without a country code or trunk 0
    'ref 1412346089', // 10 digits not starting with 0
    'at 1712345678901 ms', // a millisecond timestamp
    'epoch 1712345678',
    'batch 42 of 123456789',
    'amount 4567890123.45',
    'GHS 1,234,567.89',
    'inv3f930123456789',
    'ab0241234567',
    'session 7c9a0241234567b3e4 done',
    '3f930123-4567-4890-8123-430123456789',
    'on 2026-01-01 10:00:00.123Z',
    'at 2026-01-01T10:00:00.000Z',
    'ip 192.168.100.200',
    '12345678901234567890', // 20 digits: longer than any number
    '00012345678',
    'v1.2.3 build 20260101',
  ])('leaves %j readable (no phone number)', (text) => {
    expect(maskPhoneNumbers(text)).toBe(text);
  });

  // Issue 30, item 10: numbers split by zero-width characters, "/", "_" or tabs were logged whole.
  it.each([
    ['024\u200b123\u200b4567', '024\u200b***\u200b*567'],
    ['0\u200c2\u200d4\u20601\ufeff2\u00ad34567', '0\u200c2\u200d4\u2060*\ufeff*\u00ad**567'],
    ['024/123/4567', '024/***/*567'],
    ['024_123_4567', '024_***_*567'],
    ['024\t123\t4567', '024\t***\t*567'],
    [
      '+233\u200b24\u200b\u200b\u200b\u200b123\u200b4567',
      '+233\u200b**\u200b\u200b\u200b\u200b***\u200b*567',
    ],
  ])('masks a number split by separators: %j', (written, masked) => {
    expect(maskPhoneNumbers(`Unknown reference "${written}"`)).toBe(`Unknown reference "${masked}"`);
  });

  /** A Ghanaian or international number, and the ways people (or forgers) split its digits. */
  const phoneNumber = fc.oneof(
    fc.tuple(fc.constantFrom('02', '03', '05'), fc.stringMatching(/^\d{8}$/)).map(([a, b]) => a + b),
    fc
      .tuple(fc.constantFrom('233', '+233', '00233'), fc.stringMatching(/^[2-5]\d{8}$/))
      .map(([a, b]) => a + b),
    fc.tuple(fc.constantFrom('+44', '+49', '+234'), fc.stringMatching(/^[1-9]\d{9}$/)).map(([a, b]) => a + b),
  );
  const visible = fc.constantFrom(
    ' ',
    '\t',
    '.',
    '-',
    '/',
    '_',
    '(',
    ')',
    '\u00a0',
    '\u2009',
    '\u3000',
    '\uff0f',
  );
  const invisible = fc.constantFrom(
    '\u200b',
    '\u200c',
    '\u200d',
    '\u2060',
    '\ufeff',
    '\u00ad',
    '\u200e',
    '\u202c',
  );
  const gap = fc
    .tuple(fc.array(visible, { maxLength: 2 }), fc.array(invisible, { maxLength: 4 }))
    .chain(([v, i]) => fc.shuffledSubarray([...v, ...i], { minLength: v.length + i.length }))
    .map((chars) => chars.join(''));
  const written = phoneNumber.chain((number) =>
    fc
      .array(gap, { minLength: number.length, maxLength: number.length })
      // Between digits; after a "+" only invisible ones ("+ 44…" is no way to write a number).
      .map((gaps) =>
        [...number]
          .map((c, i) =>
            i === 0 ? c : number[i - 1] === '+' ? gaps[i]!.replace(/[^\p{Cf}]/gu, '') + c : gaps[i]! + c,
          )
          .join(''),
      ),
  );
  const around = fc.constantFrom(['Unknown reference "', '"'], ['to ', '.'], ['ref=', ' paid'], ['', '']);

  it('masks a number written with any separators, anywhere in a line (property)', () => {
    fc.assert(
      fc.property(written, around, (number, [before, after]) => {
        const digits = (text: string) => (text.match(/\d/g) ?? []).length;
        const masked = maskPhoneNumbers(before + number + after);
        expect(digits(masked)).toBe(6); // the first three and the last three
        // The log line: masked, then escaped (`\t`, `\ufeff`), the escapes' own digits aside.
        const line = sanitizeLogLine(before + number + after).replace(/\\(?:u[0-9a-f]{4}|x[0-9a-f]{2})/g, '');
        expect(digits(line)).toBe(6);
      }),
      { numRuns: 2_000 },
    );
  });

  it('leaves short numbers, amounts and dates alone', () => {
    const text = 'amount 12.50 on 2026-01-01 10:00, batch 42, status 0000';
    expect(maskPhoneNumbers(text)).toBe(text);
  });
});

describe('redact', () => {
  it('replaces secret-named keys at any depth and masks phone numbers in strings and numbers', () => {
    const out = redact({
      clientId: 'id',
      clientSecret: 's3cret',
      headers: { Authorization: 'Basic abc', 'x-api-key': 'k', Accept: 'application/json' },
      Recipients: ['233241234567', '0201234567'],
      msisdn: 233241234567,
      batchId: 141234608,
      at: 1712345678901,
      nested: [{ password: 'p', token: 't', note: 'ok' }],
      amount: 10.5,
    });
    expect(out).toEqual({
      clientId: REDACTED,
      clientSecret: REDACTED,
      headers: { Authorization: REDACTED, 'x-api-key': REDACTED, Accept: 'application/json' },
      Recipients: ['233******567', '020****567'],
      msisdn: '233******567',
      batchId: 141234608,
      at: 1712345678901,
      nested: [{ password: REDACTED, token: REDACTED, note: 'ok' }],
      amount: 10.5,
    });
  });
  it('survives cycles, dates, buffers and errors, and does not change its input', () => {
    const input: Record<string, unknown> = {
      at: new Date(0),
      buf: Buffer.from('abc'),
      err: new Error('to 233241234567'),
    };
    input.self = input;
    const out = redact(input) as Record<string, unknown>;
    expect(out.self).toBe('[Circular]');
    expect(out.at).toBe('1970-01-01T00:00:00.000Z');
    expect(out.buf).toBe('[binary 3 bytes]');
    expect(out.err).toMatchObject({ message: 'to 233******567' });
    expect(input.self).toBe(input);
  });
  it('names secret keys', () => {
    expect(['clientSecret', 'Authorization', 'apiKey', 'refresh_token', 'client_id'].every(isSecretKey)).toBe(
      true,
    );
    expect(['From', 'Content', 'Recipients', 'messageId'].some(isSecretKey)).toBe(false);
  });
  it('redactToString cuts long output', () => {
    expect(redactToString({ a: 'x'.repeat(100) }, 20)).toMatch(/^\{"a":"x{14}…\(\d+ more chars\)$/);
  });
  it('redactToString keeps the first 25 items of a long array and counts the rest', () => {
    const recipients = Array.from({ length: 10_000 }, (_, i) => String(233200000000 + i));
    const text = redactToString({ Recipients: recipients, nested: [[1, 2, 3]] }, 100_000);
    const logged = JSON.parse(text) as { Recipients: string[]; nested: number[][] };
    expect(logged.Recipients).toHaveLength(26);
    expect(logged.Recipients[0]).toBe('233******000');
    expect(logged.Recipients[25]).toBe('…(9975 more items)');
    expect(logged.nested).toEqual([[1, 2, 3]]);
    // redact itself keeps everything: only the one-line form is shortened.
    expect((redact({ Recipients: recipients }) as { Recipients: string[] }).Recipients).toHaveLength(10_000);
  });
});
