// The sandbox's USSD phone: a handset shows `Message` only; the user types from its numbered menu.
import { DEFAULT_USSD_SCREEN, ussdScreen, type UssdScreenLimits } from '#internal';
import { invalidArgument } from './sandbox.errors.js';
import type { SandboxUssdScreen, ServiceFlowOption, UssdMenuLine } from './sandbox.types.js';

/** A menu line as the platform's SDK writes it: `1. 1GB`, also `1) 1GB`; `9. More`, `8. Back`. */
const MENU_LINE = /^\s*(\d{1,3})\s*[.)]\s*(\S.*?)\s*$/;

/** The numbered lines of a USSD screen, in screen order. */
export function parseUssdMenu(message: string): UssdMenuLine[] {
  const lines: UssdMenuLine[] = [];
  for (const line of message.split(/\r?\n/)) {
    const m = MENU_LINE.exec(line);
    if (m) lines.push({ key: m[1]!, label: m[2]! });
  }
  return lines;
}

/** The screen limits with core's defaults (182 GSM-7, 70 UCS-2) filled in; throws on a size out of range. */
export function ussdLimits(limits: Partial<UssdScreenLimits> | undefined): UssdScreenLimits {
  const filled = { ...DEFAULT_USSD_SCREEN, ...limits };
  for (const field of ['screenSize', 'unicodeScreenSize'] as const) {
    const size = filled[field];
    if (!Number.isInteger(size) || size < 1 || size > 10_000)
      throw invalidArgument(`ussd.${field}`, 'must be a whole number from 1 to 10000', size);
  }
  return filled;
}

/** Measures what the phone shows of an answer (its `Message`). */
export function measureUssdScreen(message: string, limits: UssdScreenLimits): SandboxUssdScreen {
  const { length, limit, gsm7, fits } = ussdScreen(message, limits);
  return { length, limit, gsm7, fits, menu: parseUssdMenu(message) };
}

/** The contract issue of a screen that does not fit: the network cuts or refuses it. */
export function oversizeIssue(screen: SandboxUssdScreen): string {
  return `screen too long: ${screen.length} characters, a USSD screen holds ${screen.limit}${
    screen.gsm7 ? '' : ' once any character is outside the GSM 7-bit alphabet'
  }`;
}

/** What a USSD user types for `option`: a number as is, else the key of the menu line showing it. */
export function ussdKeyFor(
  option: string | number,
  menu: UssdMenuLine[],
  options: ServiceFlowOption[],
): string {
  const wanted = String(option).trim();
  if (/^\d+$/.test(wanted)) return wanted;
  const byValue = options.find((o) => o.Value === wanted);
  const line = findMenuLine(menu, byValue ? byValue.Display : wanted);
  if (!line) {
    const shown = menu.map((l) => `${l.key}. ${l.label}`).join(' | ');
    const summary = `No option "${wanted}" on this USSD screen; it shows: ${shown}`;
    throw invalidArgument('option', 'not on the current screen', option, summary);
  }
  return line.key;
}

/** The menu line the user would type for an option: by its label, allowing a label cut with an ellipsis. */
function findMenuLine(menu: UssdMenuLine[], display: string): UssdMenuLine | undefined {
  const wanted = display.trim().toLowerCase();
  const exact = menu.find((l) => l.label.toLowerCase() === wanted);
  if (exact) return exact;
  return menu.find((l) => {
    const cut = l.label.replace(/(…|\.\.\.)$/, '').toLowerCase();
    return cut.length > 0 && cut !== l.label.toLowerCase() && wanted.startsWith(cut);
  });
}

/** What a USSD user would trip on in an answer that keeps the contract. */
export function ussdWarnings(
  response: { Type?: unknown; DataType?: unknown; Data?: unknown },
  screen: SandboxUssdScreen,
): string[] {
  const warnings: string[] = [];
  const type = String(response.Type ?? '').toLowerCase();
  const options = Array.isArray(response.Data) ? (response.Data as ServiceFlowOption[]) : [];
  const select = type === 'response' && String(response.DataType ?? '').toLowerCase() === 'select';
  if (select && options.length > 0 && screen.menu.length === 0)
    warnings.push(
      'select prompt without a numbered menu in Message: a USSD phone shows Message only, so the user sees no choices',
    );
  if (type === 'addtocart')
    warnings.push(
      'AddToCart on USSD: the platform expects Release with the Item (the session ends, payment follows)',
    );
  return warnings;
}
