import { Body, Controller, Get, Header, Inject, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { HubtelLogger, HubtelError, maskPhoneNumbers, tryNormalizeMsisdn } from 'nestjs-hubtel';
import { HubtelSandbox, type SandboxServiceSession } from 'nestjs-hubtel/sandbox';
import { AppUrls } from '../platform/app-urls.service.js';
import { ShopSettings } from '../shop/shop.settings.js';
import { BundleDeliveries } from './bundle-deliveries.service.js';
import { renderSimulatorHome, renderSimulatorSession } from './simulator.views.js';

/** Sessions kept for the simulator pages before the oldest are forgotten. */
const MAX_SESSIONS = 200;
const SESSION_ID = /^[0-9a-zA-Z_-]{1,64}$/;

/**
 * The phone in a page (sandbox mode only): plays the platform's client app against this app's own
 * programmable service, through the sandbox's driver — the same HTTP calls the platform makes
 * (`POST /api/service-flow`, then `POST /api/fulfillment` once "paid"), so what you click here is
 * what a customer does, in the Hubtel app (`Operator: Hubtel-Android`, options as buttons) or on a
 * USSD phone (`Operator: mtn`, the screen is `Message` only, answers typed). The fulfillment
 * callback lands in the sandbox.
 */
@Controller('simulator')
export class SimulatorController {
  private readonly logger = new HubtelLogger('Simulator');
  private readonly sessions = new Map<string, SandboxServiceSession>();
  /** The last driver error per session, shown on its page. */
  private readonly errors = new Map<string, string>();

  constructor(
    @Inject(HubtelSandbox) private readonly sandbox: HubtelSandbox,
    private readonly urls: AppUrls,
    private readonly deliveries: BundleDeliveries,
    private readonly settings: ShopSettings,
  ) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  home(): Promise<string> {
    return this.renderHome();
  }

  /** Dials the service: starts a session (`initiation`). */
  @Post('sessions')
  async dial(@Body() body: unknown, @Res() res: Response): Promise<void> {
    const mobile = readField(body, 'mobile');
    const normalised = tryNormalizeMsisdn(mobile);
    if (!normalised.ok) {
      const error = 'Enter the phone number you dial from, e.g. 024 123 4567.';
      return send(res, 400, await this.renderHome({ error, mobile }));
    }
    const channel = readField(body, 'channel') === 'ussd' ? 'ussd' : 'app';
    const session = this.sandbox.serviceApp(this.urls.listening, {
      mobile: normalised.msisdn,
      // The operator is what tells the service the channel (a telco: USSD), as on the platform.
      operator: channel === 'ussd' ? 'mtn' : 'Hubtel-Android',
      channel,
      serviceCode: 'data-bundles',
      // An oversize USSD screen is shown on the page, not refused: that is what the page is for.
      strict: channel === 'app',
    });
    this.keep(session);
    await this.run(session, () => session.start());
    redirect(res, `/simulator/sessions/${session.sessionId}`);
  }

  @Get('sessions/:id')
  async show(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const session = await this.findOrAnswer404(id, res);
    if (session) await this.showSession(res, session, 200, this.errors.get(id));
  }

  /** The user answers the prompt (types an entry or picks an option). */
  @Post('sessions/:id/reply')
  async reply(@Param('id') id: string, @Body() body: unknown, @Res() res: Response): Promise<void> {
    const session = await this.findOrAnswer404(id, res);
    if (!session) return;
    const input = readField(body, 'input');
    if (input === undefined || input.length > 200)
      return await this.showSession(res, session, 400, 'Type an answer (at most 200 characters).');
    if (session.record.state !== 'active')
      return await this.showSession(res, session, 409, 'This session is not waiting for an answer.');
    await this.run(session, () => session.reply(input));
    redirect(res, `/simulator/sessions/${session.sessionId}`);
  }

  /** The user pays the cart in the client app: the sandbox sends the fulfillment request. */
  @Post('sessions/:id/pay')
  async pay(@Param('id') id: string, @Res() res: Response): Promise<void> {
    const session = await this.findOrAnswer404(id, res);
    if (!session) return;
    if (session.record.state !== 'cart')
      return await this.showSession(res, session, 409, 'There is nothing to pay in this session.');
    await this.run(session, () => session.pay());
    redirect(res, `/simulator/sessions/${session.sessionId}`);
  }

  /** Runs a driver call; a failure (the app broke the contract, timed out) is shown on the session page. */
  private async run(session: SandboxServiceSession, call: () => Promise<unknown>): Promise<void> {
    this.errors.delete(session.sessionId);
    try {
      await call();
    } catch (error) {
      if (!(error instanceof HubtelError)) throw error;
      this.logger.warn(`Simulator session ${session.sessionId}: ${maskPhoneNumbers(error.message)}`);
      this.errors.set(session.sessionId, error.message);
    }
  }

  private async renderHome(extra: { error?: string; mobile?: string } = {}): Promise<string> {
    return renderSimulatorHome(this.settings, {
      deliveries: await this.deliveries.list(10),
      serviceFlowUrl: this.urls.to('/api/service-flow'),
      ...extra,
    });
  }

  private async showSession(
    res: Response,
    session: SandboxServiceSession,
    status: number,
    error?: string,
  ): Promise<void> {
    const delivery = session.order ? await this.deliveries.get(session.order.orderId) : undefined;
    send(res, status, renderSimulatorSession(this.settings, session, error, delivery));
  }

  /** The session, or undefined after answering 404 with the home page (unknown, malformed or forgotten id). */
  private async findOrAnswer404(id: string, res: Response): Promise<SandboxServiceSession | undefined> {
    const session = this.find(id);
    if (!session) send(res, 404, await this.renderHome({ error: 'That session has ended. Dial again.' }));
    return session;
  }

  private find(id: string): SandboxServiceSession | undefined {
    return SESSION_ID.test(id) ? this.sessions.get(id) : undefined;
  }

  private keep(session: SandboxServiceSession): void {
    this.sessions.set(session.sessionId, session);
    if (this.sessions.size > MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value!;
      this.sessions.delete(oldest);
      this.errors.delete(oldest);
    }
  }
}

function readField(body: unknown, field: string): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const value = (body as Record<string, unknown>)[field];
  return typeof value === 'string' ? value.trim() : undefined;
}

function send(res: Response, status: number, html: string): void {
  res
    .status(status)
    .setHeader('Content-Type', 'text/html; charset=utf-8')
    .setHeader('Cache-Control', 'no-store')
    .send(html);
}

function redirect(res: Response, location: string): void {
  res.status(303).setHeader('Location', location).end();
}
