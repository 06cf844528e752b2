import { HttpException, type LoggerService } from '@nestjs/common';
import { HubtelValidationError } from '../errors/hubtel.errors.js';
import { describeError } from '../logging/redact.js';
import { dropUndefined } from '../options/hubtel-env.js';
import type {
  HubtelInboundSignal,
  HubtelInboundSource,
  HubtelTelemetry,
} from '../telemetry/hubtel-telemetry.js';
import { inboundHttpError } from './inbound-http-errors.js';
import { HubtelShuttingDownError, shuttingDownHttpError } from './inbound-shutdown.js';

/** How one inbound module answers the errors of its endpoints (see answerInbound). */
export interface InboundAnswerOptions {
  logger: Pick<LoggerService, 'error'>;
  /** Given with `source`: each refusal is recorded once, with the code it is answered with. */
  telemetry?: HubtelTelemetry | undefined;
  source?: HubtelInboundSource;
  /** The account the request was routed to, once known: a refusal is counted under it. */
  account?: () => string | undefined;
  /** Before routing (a wrong secret): the known account the path names, to count a refusal under. */
  pathAccount?: () => string | undefined;
  /** Which refusals to count (default: every one); an endpoint whose work reports itself picks. */
  counts?: (refusal: HubtelInboundSignal, routed: boolean) => boolean;
  /** The area's own typed refusals: the HTTP answer of `error`, or undefined when not one. */
  refusal?: (error: unknown) => HttpException | undefined;
  /** Told of a body refused by validation, before its 400 (e.g. to log it). */
  onInvalid?: (error: HubtelValidationError) => void;
}

/**
 * Runs an endpoint's work, answering what it throws: 400 for a bad body, 503 on shutdown, refusals as
 * they are; else the store failed: 503 `HUBTEL_UNAVAILABLE` (not acknowledged: sent again).
 */
export async function answerInbound<T>(
  what: string,
  response: unknown,
  call: () => T | Promise<T>,
  options: InboundAnswerOptions,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const answer = toHttpError(what, response, error, options);
    if (options.telemetry && options.source) {
      const routed = options.account?.();
      const body = answer.getResponse() as { code?: unknown };
      const code = typeof body === 'object' && typeof body?.code === 'string' ? body.code : 'HUBTEL_ERROR';
      const signal = inboundSignal(options.source, 'rejected', code, routed ?? options.pathAccount?.());
      if (options.counts?.(signal, routed !== undefined) ?? true) options.telemetry.record(signal);
    }
    throw answer;
  }
}

function toHttpError(
  what: string,
  response: unknown,
  error: unknown,
  options: InboundAnswerOptions,
): HttpException {
  if (error instanceof HubtelValidationError) {
    options.onInvalid?.(error);
    const { issues } = error;
    const shown = issues.slice(0, 5).map((issue) => issue.message);
    const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
    const message = `Invalid ${what}: ${shown.join('; ')}${more}`;
    return inboundHttpError(400, 'HUBTEL_INVALID_BODY', message, issues);
  }
  if (error instanceof HubtelShuttingDownError) return shuttingDownHttpError(response, error);
  const refused = options.refusal?.(error);
  if (refused) return refused;
  if (error instanceof HttpException) return error;
  options.logger.error(`A ${what} could not be recorded or handled: ${describeError(error)}`);
  const message = `The ${what} could not be recorded; send it again later`;
  return inboundHttpError(503, 'HUBTEL_UNAVAILABLE', message);
}

/** The signal of an inbound request with its outcome. */
export function inboundSignal(
  source: HubtelInboundSource,
  outcome: HubtelInboundSignal['outcome'],
  reason?: string,
  account?: string,
): HubtelInboundSignal {
  return dropUndefined<HubtelInboundSignal>({ kind: 'inbound', source, outcome, reason, account });
}
