/** The USSD rules shared by the options and the flow's screens: which requests are USSD, how to cut. */
import { HubtelConfigError } from 'nestjs-hubtel';
import { isGsm7, isTelcoOperator, isUssdRequest, ussdScreen } from '#internal';
import type { ServiceAppMessages } from './service-app.constants.js';
import type { ServiceAppUssdOptions } from './service-app.option-sections.js';

/** The channel a session runs on: a USSD phone, or an app rendering `Data` as a list. */
export type ServiceFlowChannel = 'ussd' | 'app';

/** The `ussd` options resolved: keys trimmed, the operator lists as lower-case sets. */
export type ResolvedUssdOptions = Required<Omit<ServiceAppUssdOptions, 'operators' | 'appOperators'>> &
  Record<'operators' | 'appOperators', ReadonlySet<string>>;

/** Three dots, not `…`: U+2026 is outside GSM-7 and would shrink the whole screen to 70. */
export const ELLIPSIS = '...';
/** Least room a cut option keeps for its text: "7. " plus a recognisable start. */
export const MIN_OPTION_TEXT = 12;
/** USSD when `Platform` is `USSD` or `Operator` a telco (or in `ussd.operators`, not `appOperators`). */
export function detectChannel(
  platform: unknown,
  operator: string | undefined,
  options: ResolvedUssdOptions,
): ServiceFlowChannel {
  if (isUssdRequest({ Platform: platform })) return 'ussd';
  if (operator === undefined) return 'app';
  const name = operator.trim().toLowerCase();
  if (options.appOperators.has(name)) return 'app';
  if (isTelcoOperator(name)) return 'ussd';
  if (options.operators.size === 0) return 'app';
  return options.operators.has(name) || options.operators.has(name.replace(/-[a-z]+$/, '')) ? 'ussd' : 'app';
}

/** The longest start of `text` that `fits` with an ellipsis, at a word boundary keeping half or more. */
export function cutToFit(text: string, fits: (candidate: string) => boolean): string {
  if (fits(text)) return text;
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length - 1;
  let best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (fits(chars.slice(0, mid).join('').trimEnd() + ELLIPSIS)) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  let head = chars.slice(0, best).join('');
  const space = head.search(/\s\S*$/);
  if (chars[best] !== ' ' && space > head.length / 2) head = head.slice(0, space);
  return head.trimEnd() + ELLIPSIS;
}

/** GSM-7 text for a screen: accents dropped, typographic marks made plain, the rest `?`. */
export function transliterate(text: string): string {
  if (isGsm7(text)) return text;
  let out = '';
  for (const char of text) {
    const plain = isGsm7(char)
      ? char
      : (PLAIN[char] ?? char.normalize('NFD').replace(/[\u0300-\u036f]/g, ''));
    out += plain !== '' && isGsm7(plain) ? plain : '?';
  }
  return out;
}

/** A text as the screen shows it: transliterated when the `ussd` options ask for it. */
export function plain(text: string, options: { transliterate: boolean }): string {
  return options.transliterate ? transliterate(text) : text;
}

const PLAIN: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u2013': '-',
  '\u2014': '-',
  '\u2026': '...',
  '\u00a0': ' ',
  '\u20b5': 'GHS',
  '\t': ' ',
};

/** The `ussd` options checked together: distinct keys, texts fit a screen, a UCS-2 page holds an option. */
export function resolveUssd(
  checked: Required<ServiceAppUssdOptions>,
  backInputs: readonly string[],
  messages: ServiceAppMessages,
  P: string,
): ResolvedUssdOptions {
  const prefix = `${P}.ussd`;
  const options: ResolvedUssdOptions = {
    ...checked,
    moreKey: checked.moreKey.trim(),
    backKey: checked.backKey.trim(),
    operators: operatorList(checked.operators, `${prefix}.operators`),
    appOperators: operatorList(checked.appOperators, `${prefix}.appOperators`),
  };
  if (options.moreKey === options.backKey)
    throw new HubtelConfigError(`${prefix}.backKey`, `must differ from moreKey ("${options.moreKey}")`);
  for (const key of ['moreKey', 'backKey'] as const)
    if (backInputs.includes(options[key]))
      throw new HubtelConfigError(
        `${prefix}.${key}`,
        `"${options[key]}" is also a backInput: a key must mean one thing`,
      );
  const nav = `${options.moreKey}. ${options.moreLabel}\n${options.backKey}. ${options.backLabel}`;
  if (nav.length + 1 + MIN_OPTION_TEXT + 4 > options.unicodeScreenSize)
    throw new HubtelConfigError(
      `${prefix}.moreLabel`,
      `the navigation lines ("${nav.replace('\n', '", "')}") leave no room for an option on a ${options.unicodeScreenSize}-character screen`,
    );
  for (const [key, text] of Object.entries(messages)) {
    const screen = ussdScreen(plain(text, options), options);
    if (!screen.fits)
      throw new HubtelConfigError(
        `serviceApp.messages.${key}`,
        `is ${screen.length} characters, longer than one USSD screen (${screen.limit}${screen.gsm7 ? '' : ', it has a character outside GSM-7'})`,
      );
  }
  return options;
}

function operatorList(value: unknown, option: string): ReadonlySet<string> {
  if (value === undefined) return new Set();
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === ''))
    throw new HubtelConfigError(option, 'must be an array of non-empty strings');
  return new Set(value.map((v: string) => v.trim().toLowerCase()));
}
