import { countSmsSegments } from './sms.segments.js';

describe('countSmsSegments', () => {
  it('GSM-7: 160 in one part, then 153 per part', () => {
    expect(countSmsSegments('')).toEqual({
      encoding: 'GSM-7',
      segments: 0,
      characters: 0,
      units: 0,
      perSegment: 160,
      remaining: 160,
    });
    expect(countSmsSegments('hello')).toEqual({
      encoding: 'GSM-7',
      segments: 1,
      characters: 5,
      units: 5,
      perSegment: 160,
      remaining: 155,
    });
    expect(countSmsSegments('a'.repeat(160))).toMatchObject({ segments: 1, remaining: 0 });
    expect(countSmsSegments('a'.repeat(161))).toMatchObject({
      segments: 2,
      perSegment: 153,
      units: 161,
      remaining: 145,
    });
    expect(countSmsSegments('a'.repeat(306))).toMatchObject({ segments: 2, remaining: 0 });
    expect(countSmsSegments('a'.repeat(307))).toMatchObject({ segments: 3 });
  });

  it('GSM-7 extension characters cost two septets and are never split across parts', () => {
    expect(countSmsSegments('€')).toMatchObject({ encoding: 'GSM-7', units: 2, characters: 1 });
    expect(countSmsSegments('{}[]~|^\\€')).toMatchObject({ units: 18, characters: 9 });
    expect(countSmsSegments('€'.repeat(80))).toMatchObject({ segments: 1, units: 160 });
    // 152 plain + one € (2 septets) = 154 > 153: the € moves to part 2.
    expect(countSmsSegments('a'.repeat(152) + '€' + 'a'.repeat(10))).toMatchObject({
      segments: 2,
      units: 164,
      remaining: 153 - 12,
    });
  });

  it('GSM-7 covers accented letters of the basic table (é, ñ, Ç, Δ)', () => {
    expect(countSmsSegments('Café Ñandù Ç Δ £5 @ ¿?')).toMatchObject({ encoding: 'GSM-7' });
    expect(countSmsSegments('Ñandú')).toMatchObject({ encoding: 'UCS-2' }); // ú is not in GSM-7 (ù is)
  });

  it('anything else is UCS-2: 70 in one part, then 67', () => {
    expect(countSmsSegments('Akwaaba ₵')).toMatchObject({
      encoding: 'UCS-2',
      segments: 1,
      perSegment: 70,
      units: 9,
    });
    expect(countSmsSegments('ç'.repeat(70))).toMatchObject({ encoding: 'UCS-2', segments: 1 });
    expect(countSmsSegments('ç'.repeat(71))).toMatchObject({ segments: 2, perSegment: 67 });
    expect(countSmsSegments('ç'.repeat(134))).toMatchObject({ segments: 2, remaining: 0 });
  });

  it('UCS-2 surrogate pairs count two units, one character, and are not split', () => {
    expect(countSmsSegments('😀')).toMatchObject({ encoding: 'UCS-2', units: 2, characters: 1 });
    expect(countSmsSegments('😀'.repeat(35))).toMatchObject({ segments: 1, units: 70 });
    // 66 units + an emoji (2) = 68 > 67: the emoji opens part 2.
    expect(countSmsSegments('ç'.repeat(66) + '😀' + 'ç'.repeat(4))).toMatchObject({
      segments: 2,
      units: 72,
      remaining: 67 - 6,
    });
  });
});
