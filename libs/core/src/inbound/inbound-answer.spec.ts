import { HttpException } from '@nestjs/common';
import { HubtelValidationError } from '../errors/hubtel.errors.js';
import type { HubtelSignal } from '../telemetry/hubtel-telemetry.js';
import { answerInbound } from './inbound-answer.js';
import { inboundHttpError } from './inbound-http-errors.js';

const quiet = { error() {} };

async function refusal(call: () => unknown, options: Parameters<typeof answerInbound>[3]) {
  try {
    await answerInbound('test request', undefined, call, options);
  } catch (error) {
    return error as HttpException;
  }
  throw new Error('answered');
}

describe('answerInbound', () => {
  it('answers each failure with its 4xx / 503 and counts it under the routed account, once known', async () => {
    const signals: HubtelSignal[] = [];
    let routed: string | undefined = undefined; // unknown until the request is routed
    const options = {
      logger: quiet,
      telemetry: { record: (s: HubtelSignal) => signals.push(s) },
      source: 'checkout' as const,
      account: () => routed,
    };
    const notFound = await refusal(() => {
      throw inboundHttpError(404, 'HUBTEL_NOT_FOUND', 'Not found');
    }, options);
    routed = 'north';
    const invalid = await refusal(() => {
      throw new HubtelValidationError('bad', [{ field: 'Data', message: 'is required' }]);
    }, options);
    const storeDown = await refusal(() => {
      throw new Error('store down');
    }, options);
    expect([notFound.getStatus(), invalid.getStatus(), storeDown.getStatus()]).toEqual([404, 400, 503]);
    expect(signals).toEqual([
      { kind: 'inbound', source: 'checkout', outcome: 'rejected', reason: 'HUBTEL_NOT_FOUND' },
      {
        kind: 'inbound',
        source: 'checkout',
        outcome: 'rejected',
        reason: 'HUBTEL_INVALID_BODY',
        account: 'north',
      },
      {
        kind: 'inbound',
        source: 'checkout',
        outcome: 'rejected',
        reason: 'HUBTEL_UNAVAILABLE',
        account: 'north',
      },
    ]);
  });

  it("counts a refusal before routing under the path's known account, still as not routed", async () => {
    const signals: HubtelSignal[] = [];
    const routedFlags: boolean[] = [];
    await refusal(
      () => {
        throw inboundHttpError(404, 'HUBTEL_NOT_FOUND', 'Not found');
      },
      {
        logger: quiet,
        telemetry: { record: (s: HubtelSignal) => signals.push(s) },
        source: 'service-flow',
        account: () => undefined,
        pathAccount: () => 'north',
        counts: (_signal, routed) => (routedFlags.push(routed), !routed),
      },
    );
    expect(signals).toEqual([
      {
        kind: 'inbound',
        source: 'service-flow',
        outcome: 'rejected',
        reason: 'HUBTEL_NOT_FOUND',
        account: 'north',
      },
    ]);
    expect(routedFlags).toEqual([false]);
  });

  it('counts only the refusals `counts` picks', async () => {
    const signals: HubtelSignal[] = [];
    const options = {
      logger: quiet,
      telemetry: { record: (s: HubtelSignal) => signals.push(s) },
      source: 'service-flow' as const,
      account: () => 'north',
      counts: (signal: { reason?: string }) => signal.reason === 'HUBTEL_WRONG_ACCOUNT',
    };
    await refusal(() => {
      throw inboundHttpError(409, 'HUBTEL_WRONG_ACCOUNT', 'Another account');
    }, options);
    await refusal(() => {
      throw inboundHttpError(409, 'HUBTEL_UNKNOWN_SESSION', 'No session');
    }, options);
    expect(signals.map((s) => (s as { reason?: string }).reason)).toEqual(['HUBTEL_WRONG_ACCOUNT']);
  });

  it('a body with many bad fields: the message shows five and counts the rest, the body lists each, no value echoed', async () => {
    const issues = ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((field) => ({
      field,
      message: `${field} is required`,
      value: 'secret-ish',
    }));
    const told: HubtelValidationError[] = [];
    const invalid = await refusal(
      () => {
        throw new HubtelValidationError('bad', issues);
      },
      { logger: quiet, onInvalid: (error) => void told.push(error) },
    );
    expect(invalid.getStatus()).toBe(400);
    expect(invalid.getResponse()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      code: 'HUBTEL_INVALID_BODY',
      message:
        'Invalid test request: A is required; B is required; C is required; D is required; E is required (and 2 more)',
      issues: issues.map(({ field, message }) => ({ field, message })),
    });
    expect(told).toHaveLength(1);
  });
});
