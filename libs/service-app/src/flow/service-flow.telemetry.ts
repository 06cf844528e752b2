import { type HubtelTelemetry } from 'nestjs-hubtel';
import type { ServiceFlowResponse } from '../service-app.types.js';

/** Request types the platform sends; anything else is reported as `other` (labels stay bounded). */
const KNOWN_REQUESTS = new Set(['initiation', 'response', 'release', 'timeout']);

/** Runs one service-flow step and reports it (request and answer types, latency). */
export async function timedStep(
  telemetry: HubtelTelemetry,
  body: unknown,
  step: (body: unknown) => Promise<ServiceFlowResponse>,
): Promise<ServiceFlowResponse> {
  const began = performance.now();
  const type = (body as { Type?: unknown } | null)?.Type;
  const lower = typeof type === 'string' ? type.toLowerCase() : '';
  const request = KNOWN_REQUESTS.has(lower) ? lower : 'other';
  let response = 'invalid';
  try {
    const answer = await step(body);
    response = answer.Type.toLowerCase();
    return answer;
  } finally {
    telemetry.record({
      kind: 'service-flow',
      request: response === 'invalid' ? 'invalid' : request,
      response,
      durationMs: performance.now() - began,
    });
  }
}
