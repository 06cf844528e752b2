/* The GSM 03.38 alphabet of SMS and USSD: one character outside it makes the whole text UCS-2 (shorter). */

/** GSM 03.38 basic character set (ESC, 0x1B, left out: it cannot be typed). */
const GSM7_BASIC = new Set(
  Array.from(
    '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
      '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
  ),
);
/** GSM 03.38 extension table: each costs two septets (ESC + the character). */
const GSM7_EXTENSION = new Set(Array.from('^{}\\[~]|€\f'));

/** True when every character of the text is in the GSM 7-bit alphabet (basic or extension). */
export function isGsm7(text: string): boolean {
  for (const c of text) if (!GSM7_BASIC.has(c) && !GSM7_EXTENSION.has(c)) return false;
  return true;
}

/** Septets one GSM-7 character costs: 2 for the extension table, 1 otherwise. */
export function gsm7Cost(char: string): number {
  return GSM7_EXTENSION.has(char) ? 2 : 1;
}

export interface UssdScreenLimits {
  /** Characters a GSM 7-bit screen holds (182: 160 octets of 7-bit text). */
  screenSize: number;
  /** Characters a screen holds once any character is outside GSM-7 (UCS-2). */
  unicodeScreenSize: number;
}

export const DEFAULT_USSD_SCREEN: UssdScreenLimits = { screenSize: 182, unicodeScreenSize: 70 };

/** What one USSD screen of this text holds and uses: septets if GSM-7, else UTF-16 units. */
export function ussdScreen(
  text: string,
  limits: UssdScreenLimits = DEFAULT_USSD_SCREEN,
): { gsm7: boolean; length: number; limit: number; fits: boolean } {
  const gsm7 = isGsm7(text);
  let length = 0;
  if (gsm7) for (const c of text) length += gsm7Cost(c);
  else length = text.length;
  const limit = gsm7 ? limits.screenSize : limits.unicodeScreenSize;
  return { gsm7, length, limit, fits: length <= limit };
}
