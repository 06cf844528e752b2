/* How many SMS a text costs: GSM-7 160 septets (153 per part), else UCS-2 70 units (67 per part). */
import { gsm7Cost, isGsm7 } from '#internal';

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegmentInfo {
  encoding: SmsEncoding;
  /** SMS parts the text is sent as (0 for an empty text). */
  segments: number;
  /** Characters as a person counts them (Unicode code points). */
  characters: number;
  /** Encoded length: septets for GSM-7 (extension characters count 2), UTF-16 units for UCS-2. */
  units: number;
  /** Capacity of one part for this text: 160 or 153 (GSM-7), 70 or 67 (UCS-2). */
  perSegment: number;
  /** Units still free in the last part before another part is needed. */
  remaining: number;
}

const LIMITS: Record<SmsEncoding, { single: number; multi: number }> = {
  'GSM-7': { single: 160, multi: 153 },
  'UCS-2': { single: 70, multi: 67 },
};

/**
 * Segments, encoding and size of an SMS text.
 * `countSmsSegments('hello')` → `{ encoding: 'GSM-7', segments: 1, characters: 5, units: 5, perSegment: 160, remaining: 155 }`.
 */
export function countSmsSegments(text: string): SmsSegmentInfo {
  const chars = Array.from(text);
  const gsm = isGsm7(text);
  const encoding: SmsEncoding = gsm ? 'GSM-7' : 'UCS-2';
  // Cost of each character: a 2-unit character must not be split across two parts.
  const costs = chars.map((c) => (gsm ? gsm7Cost(c) : c.length));
  const units = costs.reduce((a, b) => a + b, 0);
  const { single, multi } = LIMITS[encoding];
  const perSegment = units > single ? multi : single;
  let segments = units === 0 ? 0 : 1;
  let used = units;
  if (units > single) {
    used = 0;
    for (const cost of costs) {
      if (used + cost > multi) {
        segments++;
        used = 0;
      }
      used += cost;
    }
  }
  return { encoding, segments, characters: chars.length, units, perSegment, remaining: perSegment - used };
}
