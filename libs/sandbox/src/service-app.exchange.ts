import { HubtelApiError, HubtelNetworkError, HubtelTimeoutError } from 'nestjs-hubtel';
import type { UssdScreenLimits } from '#internal';
import { OutboundError, isoNow, jsonOrText, requestOnce } from './sandbox.http.js';
import { checkServiceFlowResponse } from './service-app.check.js';
import { measureUssdScreen, oversizeIssue, ussdWarnings } from './service-app.ussd.js';
import type {
  SandboxSession,
  SandboxSessionExchange,
  ServiceFlowRequest,
  ServiceFlowResponse,
} from './sandbox.types.js';

export interface ServiceFlowPost {
  url: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal: AbortSignal;
  /** Check the answer against the contract (a `Release`, `timeout` or `query` answer is not). */
  checked: boolean;
  /** On a USSD session: the phone's screen sizes, to measure `Message` against. */
  screenLimits?: UssdScreenLimits;
}

/** Posts `request` and records the exchange; no answer, a non-2xx or (checked) a non-object throws. */
export async function postServiceFlow(
  record: SandboxSession,
  request: ServiceFlowRequest,
  post: ServiceFlowPost,
): Promise<{ exchange: SandboxSessionExchange; response: ServiceFlowResponse }> {
  const exchange: SandboxSessionExchange = {
    at: isoNow(),
    url: post.url,
    request,
    statusCode: null,
    response: null,
    durationMs: 0,
    error: null,
    issues: [],
  };
  record.exchanges.push(exchange);
  if (record.exchanges.length > 200) record.exchanges.shift(); // a bounded history
  let result;
  try {
    result = await requestOnce('POST', post.url, JSON.stringify(request), {
      signal: post.signal,
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...post.headers },
      timeoutMs: post.timeoutMs,
      keepBytes: 1024 * 1024,
    });
  } catch (err) {
    const e = err as OutboundError;
    exchange.error = e.message;
    exchange.durationMs = e.durationMs ?? 0;
    if (e.timedOut)
      throw new HubtelTimeoutError(
        `The service application did not answer ${request.Type} within ${post.timeoutMs} ms`,
        { cause: err },
      );
    throw new HubtelNetworkError(`Could not reach the service application: ${e.message}`, { cause: err });
  }
  exchange.statusCode = result.statusCode;
  exchange.durationMs = result.durationMs;
  const parsed = result.body === '' ? null : jsonOrText(result.body);
  exchange.response = parsed;
  if (result.statusCode < 200 || result.statusCode >= 300) {
    exchange.error = `HTTP ${result.statusCode}`;
    throw new HubtelApiError(
      `The service application answered ${request.Type} with HTTP ${result.statusCode}`,
      { httpStatus: result.statusCode, body: parsed },
    );
  }
  if (!post.checked) return { exchange, response: (parsed ?? undefined) as ServiceFlowResponse };
  if (parsed === null || typeof parsed !== 'object') {
    exchange.error = 'not JSON';
    throw new HubtelApiError(`The service application's answer to ${request.Type} is not a JSON object`, {
      httpStatus: result.statusCode,
      body: result.body.slice(0, 2048),
    });
  }
  exchange.issues = checkServiceFlowResponse(parsed, record.sessionId);
  const response = parsed as ServiceFlowResponse;
  if (post.screenLimits && typeof response.Message === 'string') {
    // The phone shows Message only: measure it as the network carries it.
    exchange.screen = measureUssdScreen(response.Message, post.screenLimits);
    if (!exchange.screen.fits) exchange.issues.push(oversizeIssue(exchange.screen));
    const warnings = ussdWarnings(response, exchange.screen);
    if (warnings.length > 0) exchange.warnings = warnings;
  }
  return { exchange, response };
}
