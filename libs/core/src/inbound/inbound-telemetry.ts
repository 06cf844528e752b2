import { HttpException } from '@nestjs/common';
import type {
  HubtelHandlerSignal,
  HubtelInboundSignal,
  HubtelInboundSource,
  HubtelJobSignal,
} from '../telemetry/hubtel-telemetry.js';

/** The pipeline's signals (built only when a telemetry is given: see HubtelTelemetry). */
export function handlerSignal(
  pipeline: string,
  job: string,
  handler: string,
  ok: boolean,
): HubtelHandlerSignal {
  return { kind: 'handler', pipeline, job, handler, ok };
}

export function jobSignal(
  pipeline: string,
  job: string,
  outcome: HubtelJobSignal['outcome'],
  attempt: number,
): HubtelJobSignal {
  return { kind: 'job', pipeline, job, outcome, attempt };
}

/** The signal of an inbound request with its outcome. */
export function inboundSignal(
  source: HubtelInboundSource,
  outcome: HubtelInboundSignal['outcome'],
  reason?: string,
  account?: string,
): HubtelInboundSignal {
  const signal: HubtelInboundSignal = { kind: 'inbound', source, outcome };
  if (reason !== undefined) signal.reason = reason;
  if (account !== undefined) signal.account = account;
  return signal;
}

/**
 * The signal of an inbound request refused with `error`: its reason is the machine-readable
 * `code` of the answer (an InboundErrorBody), or `HUBTEL_ERROR` for anything else.
 */
export function inboundRejection(
  source: HubtelInboundSource,
  error: unknown,
  account?: string,
): HubtelInboundSignal {
  const body = error instanceof HttpException ? error.getResponse() : undefined;
  const code = body !== null && typeof body === 'object' ? (body as { code?: unknown }).code : undefined;
  return inboundSignal(source, 'rejected', typeof code === 'string' ? code : 'HUBTEL_ERROR', account);
}
