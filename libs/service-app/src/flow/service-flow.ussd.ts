// What a USSD phone shows: `Message` only, one screen (core's `ussdScreen`). A select prompt's options
// become numbered lines, paged when they do not fit; every other text is cut to a screen.
import { HubtelLogger } from 'nestjs-hubtel';
import { ussdScreen } from '#internal';
import type { SelectOption, ServiceFlowResponse } from '../service-app.types.js';
import { ELLIPSIS, MIN_OPTION_TEXT, cutToFit, plain, type ResolvedUssdOptions } from '../service-app.ussd.js';
import type { StoredScreen } from '../service-flow.types.js';
import { promptResponse } from './service-flow.responses.js';
import type { SessionRecord } from './service-flow.session.js';

/** Shortest cut prompt worth keeping beside a whole option (else the option is cut instead). */
const MIN_HEAD_TEXT = 12;

/** A select prompt as a USSD phone shows it: its pages, and the number of each option. */
export interface UssdMenu {
  /** Each page's whole `Message`, and its prompt as shown on it ('' for none). */
  readonly pages: readonly string[];
  readonly heads: readonly string[];
  /** Number typed → index of the option, the same on every page. */
  readonly numbers: ReadonlyMap<string, number>;
  /** Whether a prompt or a label had to be cut. */
  readonly cut: boolean;
}

function navigationLines(options: ResolvedUssdOptions): [more: string, back: string] {
  const { moreKey, moreLabel, backKey, backLabel } = options;
  return [`${moreKey}. ${plain(moreLabel, options)}`, `${backKey}. ${plain(backLabel, options)}`];
}

/**
 * Lays a menu out in pages, filled greedily. Options are numbered skipping the `reserved` keys (a number
 * keeps its option on every page); a label is never split, one too long is cut on a page of its own.
 */
export function layoutMenu(
  title: string,
  displays: readonly string[],
  options: ResolvedUssdOptions,
  reserved: ReadonlySet<string>,
): UssdMenu {
  const numbers = new Map<string, number>();
  const lines: string[] = [];
  let n = 1;
  displays.forEach((display, index) => {
    while (reserved.has(String(n))) n++;
    numbers.set(String(n), index);
    // A line break inside a label would make two lines of one option.
    lines.push(`${n}. ${plain(display.replace(/\s*[\r\n]+\s*/g, ' '), options)}`);
    n++;
  });
  const [moreLine, backLine] = navigationLines(options);
  const head = plain(title, options);
  /** Whether a page of these parts fits one screen (one non-GSM line makes it UCS-2). */
  const fits = (lead: string, page: readonly string[], nav: readonly string[]) =>
    ussdScreen([...(lead ? [lead] : []), ...page, ...nav].join('\n'), options).fits;

  const pages: string[] = [];
  const heads: string[] = [];
  let cut = false;
  let i = 0;
  while (i < lines.length) {
    const nav = (more: boolean) => [...(more ? [moreLine] : []), ...(pages.length > 0 ? [backLine] : [])];
    const page: string[] = [];
    let j = i;
    while (j < lines.length && fits(head, [...page, lines[j]!], nav(j < lines.length - 1)))
      page.push(lines[j++]!);
    let pageHead = head;
    if (j === i) {
      // Not one option fits beside the prompt: shorten the prompt if that keeps the option whole.
      cut = true;
      const navLines = nav(i < lines.length - 1);
      const alone = (lead: string, line: string) => fits(lead, [line], navLines);
      const whole = pageHead ? cutToFit(pageHead, (lead) => alone(lead, lines[i]!)) : '';
      if (pageHead && whole.length >= Math.min(pageHead.length, MIN_HEAD_TEXT) && alone(whole, lines[i]!)) {
        pageHead = whole;
        page.push(lines[i]!);
      } else {
        const least = Array.from(lines[i]!).slice(0, MIN_OPTION_TEXT).join('') + ELLIPSIS;
        if (pageHead && !alone(pageHead, least)) pageHead = cutToFit(pageHead, (lead) => alone(lead, least));
        page.push(cutToFit(lines[i]!, (line) => alone(pageHead, line)));
      }
      j = i + 1;
    }
    pages.push([...(pageHead ? [pageHead] : []), ...page, ...nav(j < lines.length)].join('\n'));
    heads.push(pageHead);
    i = j;
  }
  return { pages, heads, numbers, cut };
}

const CUT_WARNINGS_LIMIT = 1_000;

/** A session's prompts and texts as its channel shows them (on USSD: menus paged, texts cut to a screen). */
export class UssdScreens {
  private readonly menus = new WeakMap<StoredScreen, UssdMenu>();
  private readonly reserved: ReadonlySet<string>;
  /** Flow/step pairs already warned about a cut text (one line each, not one per session). */
  private readonly cutWarned = new Set<string>();

  constructor(
    readonly options: ResolvedUssdOptions,
    private readonly backInputs: readonly string[],
    private readonly logger = new HubtelLogger('HubtelServiceApp'),
  ) {
    this.reserved = new Set([options.moreKey, options.backKey, ...backInputs]);
  }

  menu(screen: StoredScreen): UssdMenu {
    let menu = this.menus.get(screen);
    if (!menu) {
      const displays = (screen.options ?? []).map((o) => o.Display);
      this.menus.set(screen, (menu = layoutMenu(screen.message, displays, this.options, this.reserved)));
    }
    return menu;
  }

  /** The session's prompt (optionally after an explanation, at its menu page) as its channel shows it. */
  prompt(session: SessionRecord, sessionId: string, prefix?: string): ServiceFlowResponse {
    const screen = session.screen;
    if (!session.ussd) return promptResponse(sessionId, screen, prefix);
    const shown =
      screen.kind === 'select'
        ? this.page(screen, session.page ?? 0, prefix)
        : this.text(prefix ? `${prefix}\n${screen.message}` : screen.message);
    if (shown.cut) this.warnCut(session.flow, screen.step);
    return promptResponse(sessionId, screen, prefix, shown.text);
  }

  /** A cart, end or query message on USSD, cut to the screen. */
  shownText(ussd: boolean, flow: string, step: string, message: string): string {
    if (!ussd) return message;
    const shown = this.text(message);
    if (shown.cut) this.warnCut(flow, step);
    return shown.text;
  }

  /** One page of a menu (clamped), with an explanation above it (always shown: see below). */
  page(screen: StoredScreen, page: number, prefix?: string): { text: string; cut: boolean } {
    const menu = this.menu(screen);
    const index = Math.min(Math.max(page, 0), menu.pages.length - 1);
    const whole = menu.pages[index] ?? '';
    if (!prefix) return { text: whole, cut: menu.cut };
    const lead = plain(prefix, this.options);
    const fits = (text: string) => ussdScreen(text, this.options).fits;
    if (fits(`${lead}\n${whole}`)) return { text: `${lead}\n${whole}`, cut: menu.cut };
    // No room: the reason (it must be read) takes the prompt's place, then the page drops its last
    // options (still chosen by number) but keeps its navigation; at worst the reason alone is cut.
    const head = menu.heads[index] ?? '';
    const navigation = new Set(navigationLines(this.options));
    const lines = (head ? whole.slice(head.length + 1) : whole).split('\n');
    const nav = lines.filter((line) => navigation.has(line));
    const shown = lines.filter((line) => !navigation.has(line));
    while (shown.length > 0 && !fits([lead, ...shown, ...nav].join('\n'))) shown.pop();
    if (shown.length > 0) return { text: [lead, ...shown, ...nav].join('\n'), cut: menu.cut };
    const alone = cutToFit(lead, (candidate) => fits([candidate, ...nav].join('\n')));
    return { text: [alone, ...nav].join('\n'), cut: true };
  }

  /** A text (input prompt, re-ask, cart or end message) cut to one screen at a word boundary. */
  text(message: string): { text: string; cut: boolean } {
    const text = plain(message, this.options);
    if (ussdScreen(text, this.options).fits) return { text, cut: false };
    return { text: cutToFit(text, (candidate) => ussdScreen(candidate, this.options).fits), cut: true };
  }

  /** Whether `raw` is a key that means navigation here ("more", "back" of the menu pages). */
  isNavigationKey(raw: string): boolean {
    return raw === this.options.moreKey || raw === this.options.backKey;
  }

  /** The page a navigation entry leads to; undefined when `raw` is not one shown on this page. */
  pageMove(screen: StoredScreen, page: number, raw: string): number | undefined {
    if (!this.isNavigationKey(raw)) return undefined;
    const pages = this.menu(screen).pages.length;
    const current = Math.min(page, pages - 1);
    if (raw === this.options.moreKey) return current + 1 < pages ? current + 1 : undefined;
    return current > 0 ? current - 1 : undefined;
  }

  /** The option a typed number chooses (any page's number: numbers never change between pages). */
  chosen(screen: StoredScreen, raw: string): SelectOption | undefined {
    const index = this.menu(screen).numbers.get(raw);
    return index === undefined ? undefined : screen.options?.[index];
  }

  isBack(raw: string, screen: StoredScreen, ussd: true | undefined): boolean {
    if (!this.backInputs.includes(raw)) return false;
    // An option whose Value is the back input wins, except on USSD (its numbers skip back inputs).
    return ussd || screen.kind !== 'select' || !screen.options?.some((option) => option.Value === raw);
  }

  private warnCut(flow: string, step: string): void {
    const id = `${flow}\u0000${step}`;
    if (this.cutWarned.has(id)) return;
    if (this.cutWarned.size < CUT_WARNINGS_LIMIT) this.cutWarned.add(id);
    const { screenSize, unicodeScreenSize } = this.options;
    this.logger.warn(
      `Flow ${flow}, step "${step}": a text longer than one USSD screen (${screenSize} characters, ${unicodeScreenSize} with a character outside GSM-7) was cut at a word boundary with "..."; shorten it`,
    );
  }
}
