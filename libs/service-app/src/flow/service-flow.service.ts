import { Inject, Injectable, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import { describeError, parseInbound, within } from '#internal';
import type { InboundAccessPolicy, InboundPipeline } from '#internal';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  HUBTEL_TELEMETRY,
  HubtelStoreUnavailableError,
  type HubtelStore,
  type HubtelTelemetry,
  HubtelLogger,
} from 'nestjs-hubtel';
import {
  SERVICE_APP_ACCESS_POLICY,
  SERVICE_APP_DEFAULTS,
  SERVICE_APP_OPTIONS,
  SERVICE_APP_PIPELINE,
  SERVICE_APP_STORE,
} from '../service-app.constants.js';
import { validateServiceFlowRequest, type ServiceFlowRequestDto } from '../service-app.dto.js';
import { ServiceAppUnknownAccountError, ServiceAppWrongAccountError } from '../service-app.errors.js';
import { ServiceAppEvents, ServiceQueryEvent } from '../service-app.events.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { ServiceFlowResponse } from '../service-app.types.js';
import { detectChannel } from '../service-app.ussd.js';
import type { StoredSession } from '../service-flow.types.js';
import { FlowEngine } from './service-flow.engine.js';
import { ServiceFlowRegistry } from './service-flow.registry.js';
import { queryResponse, releaseResponse } from './service-flow.responses.js';
import { sessionKey, storedSession } from './service-flow.session.js';

const KNOWN_REQUESTS = new Set(['initiation', 'response', 'release', 'timeout']);

/** The service interaction endpoint: one answer per call, never a 500 (a failure ends a session politely). */
@Injectable()
export class ServiceFlowService implements OnApplicationBootstrap {
  private readonly logger = new HubtelLogger('HubtelServiceApp');
  private readonly engine: FlowEngine;

  constructor(
    private readonly registry: ServiceFlowRegistry,
    @Inject(SERVICE_APP_STORE) private readonly store: HubtelStore,
    @Inject(SERVICE_APP_OPTIONS) private readonly options: ResolvedServiceAppOptions,
    @Optional() @Inject(HUBTEL_TELEMETRY) private readonly telemetry?: HubtelTelemetry,
    @Optional() @Inject(SERVICE_APP_PIPELINE) private readonly pipeline?: InboundPipeline,
    @Optional() @Inject(SERVICE_APP_ACCESS_POLICY) access?: InboundAccessPolicy,
  ) {
    this.engine = new FlowEngine(registry, store, options, this.logger, access?.enabled ?? false);
  }

  /** @internal The engine of account `account`: the same flows, store and start cap, its own options. */
  forAccount(
    account: string,
    options: ResolvedServiceAppOptions,
    access: InboundAccessPolicy,
  ): ServiceFlowService {
    const { registry, store, telemetry, pipeline } = this;
    const engine = new ServiceFlowService(registry, store, options, telemetry, pipeline, access);
    engine.engine.sessions.pending = this.engine.sessions.pending;
    engine.accountEngines = this.accountEngines;
    engine.engine.named = account === HUBTEL_DEFAULT_ACCOUNT ? undefined : account;
    engine.onApplicationBootstrap();
    return engine;
  }

  onApplicationBootstrap(): void {
    this.engine.resume.warnUnguarded(this.account, this.engine.named);
  }

  get account(): string {
    return this.engine.account;
  }

  /** @internal Set by the module's accounts: how `handle(body, account)` finds another account. */
  accountEngines?: { get(name: string): Promise<{ flows: ServiceFlowService }> };

  /**
   * Answers one service-flow request body. Throws HubtelValidationError for an invalid body,
   * ServiceAppWrongAccountError for another account's session, ServiceAppUnknownAccountError for an
   * unknown `account` (the endpoint's account, when you mount it yourself); never otherwise.
   */
  async handle(body: unknown, account?: string): Promise<ServiceFlowResponse> {
    if (account !== undefined && account !== this.account) {
      if (!this.accountEngines) throw new ServiceAppUnknownAccountError(account, [this.account], false);
      return (await this.accountEngines.get(account)).flows.handle(body);
    }
    if (!this.telemetry) return this.step(body);
    const began = performance.now();
    const type = (body as { Type?: unknown } | null)?.Type;
    const lower = typeof type === 'string' ? type.toLowerCase() : '';
    let response = 'invalid';
    try {
      const answer = await this.step(body);
      response = answer.Type.toLowerCase();
      return answer;
    } finally {
      this.telemetry.record({
        kind: 'service-flow',
        // Anything but the platform's request types is `other`: labels stay bounded.
        request: response === 'invalid' ? 'invalid' : KNOWN_REQUESTS.has(lower) ? lower : 'other',
        response,
        durationMs: performance.now() - began,
      });
    }
  }

  private async step(body: unknown): Promise<ServiceFlowResponse> {
    const request = parseInbound(validateServiceFlowRequest, body, 'service-flow request');
    const answer = this.dispatch(request);
    if (this.store.local) return answer; // a MemoryStore never stalls: no time-out guard
    // A stalled store holding the answer past the platform's 5 s: the `outage` end screen instead.
    const { stepBudgetMs, messages } = this.options;
    const result = await within(answer, stepBudgetMs + SERVICE_APP_DEFAULTS.storeGraceMs, undefined);
    if (result) return result;
    this.logger.warn(
      `Service-flow request of session ${request.SessionId} not answered within ${stepBudgetMs} ms (the store is slow); answered "${messages.outage}"`,
    );
    return releaseResponse(request.SessionId, messages.outage);
  }

  private async dispatch(request: ServiceFlowRequestDto): Promise<ServiceFlowResponse> {
    const key = sessionKey(request.SessionId);
    const type = request.Type.toLowerCase();
    try {
      switch (type) {
        case 'initiation':
          return await this.engine.initiate(request, key);
        case 'response':
          return await this.engine.respond(request, key);
        case 'release':
        case 'timeout':
          return await this.end(request, key, type === 'timeout');
        case 'favorite':
          return await this.engine.initiate(request, key, {
            message: request.Message,
            clientState: request.ClientState ?? '',
          });
        case 'query':
          return await this.query(request);
        default:
          // A request Type this module does not know: a polite end, as the platform's SDK answers it.
          this.logger.warn(
            `Service-flow request of session ${request.SessionId} has Type ${JSON.stringify(request.Type)}, which this module does not handle; answered "${this.options.messages.unsupported}"`,
          );
          return releaseResponse(request.SessionId, this.options.messages.unsupported, null, 'Release');
      }
    } catch (error) {
      // Another account's session: refused as it is (the endpoint answers 409), nothing changed.
      if (error instanceof ServiceAppWrongAccountError) throw error;
      if (error instanceof HubtelStoreUnavailableError) {
        // End the session with a message the phone shows (a 503 shows nothing).
        this.logger.warn(
          `Service-flow request of session ${request.SessionId}: the store is unavailable (${error.message}); answered "${this.options.messages.outage}"`,
        );
        return releaseResponse(request.SessionId, this.options.messages.outage);
      }
      // A bug, or another store failure: the platform still gets a well-formed answer.
      this.logger.error(
        `Service-flow request of session ${request.SessionId} failed: ${describeError(error)}`,
      );
      await this.engine.sessions.forget(key).catch(() => undefined);
      return releaseResponse(request.SessionId, this.options.messages.error);
    }
  }

  /** The stored session of a SessionId, if it is active (for diagnostics and tests). */
  async getSession(sessionId: string): Promise<StoredSession | undefined> {
    const record = (await this.engine.sessions.read(sessionKey(sessionId)))?.session;
    // A timed-out session is kept only to refuse late answers: it is no longer active.
    if (!record || record.timedOut) return undefined;
    return storedSession(sessionId, record);
  }

  /** `release`, or `timeout`: marked timed out (a late answer is told it expired); resumable state kept. */
  private async end(
    request: ServiceFlowRequestDto,
    key: string,
    timeout: boolean,
  ): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    // Read first: another account's session is neither kept for resume nor forgotten.
    const entry = await this.engine.sessions.read(key);
    const session = entry?.session;
    if (session) this.engine.assertOwn(sessionId, session);
    if (!timeout || !session?.timedOut) await this.engine.resume.keep(sessionId, session);
    if (!timeout) await this.engine.sessions.forget(key);
    else if (entry && session && !session.timedOut)
      await this.engine.sessions.timeOut(sessionId, key, entry.version, session);
    this.logger.debug(`Session ${sessionId} ${timeout ? 'timed out' : 'released'} by the platform`);
    return releaseResponse(sessionId, this.options.messages[timeout ? 'timedOut' : 'released']);
  }

  /** `query`: the @OnServiceQuery() handler's answer; without one, a polite `Release`. */
  private async query(request: ServiceFlowRequestDto): Promise<ServiceFlowResponse> {
    const sessionId = request.SessionId;
    const { messages, stepBudgetMs } = this.options;
    const end = (message: string) => releaseResponse(sessionId, message, null, 'Release');
    const emitter = this.pipeline?.emitter;
    if (!emitter || !emitter.hasListeners(ServiceAppEvents.Query)) {
      this.logger.debug(`Query of session ${sessionId}: no @OnServiceQuery() handler`);
      return end(messages.queryUnavailable);
    }
    const channel = detectChannel(request.Platform, request.Operator, this.options.ussd);
    const event = new ServiceQueryEvent({
      sessionId,
      serviceCode: request.ServiceCode,
      mobile: request.Mobile,
      operator: request.Operator,
      channel,
      message: request.Message,
      clientState: request.ClientState ?? '',
      account: this.account,
    });
    let reply: ServiceFlowResponse | undefined;
    try {
      const handled = emitter.emitAsync(ServiceAppEvents.Query, event) as Promise<unknown[]>;
      handled.catch(() => undefined);
      const results = await within(handled, stepBudgetMs, 'late' as const);
      if (results === 'late') {
        this.logger.warn(
          `Query of session ${sessionId}: the @OnServiceQuery() handler took longer than ${stepBudgetMs} ms; answered "try again"`,
        );
        return end(messages.busy);
      }
      const answer = results.find((result) => result !== undefined);
      reply = queryResponse(sessionId, answer);
    } catch (error) {
      this.logger.error(`Query of session ${sessionId} failed: ${describeError(error)}`);
      return end(messages.error);
    }
    if (!reply) {
      this.logger.error(
        `Query of session ${sessionId}: the @OnServiceQuery() handler returned neither a string nor { message }`,
      );
      return end(messages.error);
    }
    const onUssd = channel === 'ussd';
    reply.Message = this.engine.ussd.shownText(onUssd, '(query)', '@OnServiceQuery', reply.Message);
    return reply;
  }
}
