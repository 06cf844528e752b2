/** A prompt as the session's channel shows it (on USSD: menus paged, texts cut to a screen). */
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { ServiceAppLogger } from '../service-app.logger.js';
import type { ServiceFlowResponse } from '../service-app.types.js';
import type { StoredScreen } from '../service-flow.types.js';
import { promptResponse } from './service-flow.responses.js';
import type { SessionRecord } from './service-flow.session.js';
import { UssdScreens } from './service-flow.ussd.js';

const CUT_WARNINGS_LIMIT = 1_000;

export class FlowPaging {
  readonly ussd: UssdScreens;
  /** Flow/step pairs already warned about a cut text (one line each, not one per session). */
  private readonly cutWarned = new Set<string>();

  constructor(
    private readonly options: ResolvedServiceAppOptions,
    private readonly logger: ServiceAppLogger,
  ) {
    this.ussd = new UssdScreens(options.ussd, options.backInputs);
  }

  /** A prompt (optionally after an explanation, at a page of its menu) as the session's channel shows it. */
  prompt(
    session: SessionRecord,
    sessionId: string,
    screen: StoredScreen,
    prefix?: string,
    page = 0,
  ): ServiceFlowResponse {
    if (!session.ussd) return promptResponse(sessionId, screen, prefix);
    const shown =
      screen.kind === 'select'
        ? this.ussd.page(screen, page, prefix)
        : this.ussd.text(prefix ? `${prefix}\n${screen.message}` : screen.message);
    if (shown.cut) this.warnCut(session.flow, screen.step);
    return promptResponse(sessionId, screen, prefix, shown.text);
  }

  /** A cart, end or query message on USSD, cut to the screen. */
  shownText(ussd: boolean, flow: string, step: string, message: string): string {
    if (!ussd) return message;
    const shown = this.ussd.text(message);
    if (shown.cut) this.warnCut(flow, step);
    return shown.text;
  }

  /** The page a navigation entry leads to; undefined when `raw` is not one shown on this page. */
  pageMove(screen: StoredScreen, page: number, raw: string): number | undefined {
    const { moreKey, backKey } = this.options.ussd;
    if (raw !== moreKey && raw !== backKey) return undefined;
    const pages = this.ussd.menu(screen).pages.length;
    const current = Math.min(page, pages - 1);
    if (raw === moreKey) return current + 1 < pages ? current + 1 : undefined;
    return current > 0 ? current - 1 : undefined;
  }

  /** Whether `raw` means "back" on this screen. */
  isBack(raw: string, screen: StoredScreen, ussd: true | undefined): boolean {
    if (!this.options.backInputs.includes(raw)) return false;
    // An option whose Value is the back input wins, except on USSD (its numbers skip back inputs).
    if (!ussd && screen.kind === 'select' && screen.options) {
      for (const option of screen.options) if (option.Value === raw) return false;
    }
    return true;
  }

  private warnCut(flow: string, step: string): void {
    const id = `${flow}\u0000${step}`;
    if (this.cutWarned.has(id)) return;
    if (this.cutWarned.size < CUT_WARNINGS_LIMIT) this.cutWarned.add(id);
    const { screenSize, unicodeScreenSize } = this.options.ussd;
    this.logger.warn(
      `Flow ${flow}, step "${step}": a text longer than one USSD screen (${screenSize} characters, ${unicodeScreenSize} with a character outside GSM-7) was cut at a word boundary with "..."; shorten it`,
    );
  }
}
