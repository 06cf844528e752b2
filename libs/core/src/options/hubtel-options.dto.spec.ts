import { IsOptional, IsString } from 'class-validator';
import {
  checkOptions,
  HubtelHttpOptions,
  HubtelShutdownOptions,
  HubtelCountryCodeOption,
  IsHubtelPosSalesId,
  refuseRemovedOptions,
} from './hubtel-options.dto.js';

/** A HubtelConfigError naming `option`, its message matching `message` when given. */
function refusal(option: string, message?: string | RegExp): Error {
  const said =
    message === undefined
      ? {}
      : { message: typeof message === 'string' ? message : expect.stringMatching(message) };
  // An asymmetric matcher, which toThrow takes in place of an error.
  return expect.objectContaining({ code: 'HUBTEL_CONFIG_INVALID', option, ...said }) as Error;
}

class SharedRulesDto {
  @IsOptional()
  @IsHubtelPosSalesId()
  posSalesId?: string;

  @HubtelCountryCodeOption()
  defaultCountryCode?: string;
}

class ClosedDto {
  @IsOptional()
  @IsString()
  busy?: string;
}

describe('checkOptions', () => {
  it('names the option by its path under the prefix, with the validator wording, never the value', () => {
    expect(() => checkOptions(HubtelShutdownOptions, { shutdownGraceMs: -1 }, 'x.handlers')).toThrow(
      refusal(
        'x.handlers.shutdownGraceMs',
        'Invalid nestjs-hubtel option "x.handlers.shutdownGraceMs": must be at least 0',
      ),
    );
    expect(() => checkOptions(HubtelShutdownOptions, { shutdownGraceMs: '2s' }, 'x')).toThrow(
      refusal('x.shutdownGraceMs', /"x.shutdownGraceMs": must be an integer number, got a string$/),
    );
    expect(() => checkOptions(HubtelShutdownOptions, { shutdownGraceMs: 1.5 }, 'x')).toThrow(
      refusal('x.shutdownGraceMs'),
    );
  });

  it('names the prefix when the value is not an object', () => {
    expect(() => checkOptions(ClosedDto, 'x', 'x.messages')).toThrow(
      refusal('x.messages', 'Invalid nestjs-hubtel option "x.messages": must be an object, got a string'),
    );
    expect(() => checkOptions(ClosedDto, [], '')).toThrow(refusal('(options)'));
  });

  it('leaves null fields out of the result, as not given, at every level', () => {
    expect(checkOptions(HubtelShutdownOptions, { shutdownGraceMs: null }, 'x')).toEqual({});
    const http = { timeoutMs: null, retry: { maxAttempts: null, baseDelayMs: 5 }, defaultCountryCode: '1' };
    expect(checkOptions(HubtelHttpOptions, http, 'x')).toEqual({
      retry: { baseDelayMs: 5 },
      defaultCountryCode: '1',
    });
  });

  it('refuses unknown fields, naming them and the known ones, only when asked', () => {
    expect(checkOptions(ClosedDto, { busy: 'b', nope: 1 }, 'x')).toEqual({ busy: 'b' });
    expect(() => checkOptions(ClosedDto, { nope: 1 }, 'x.messages', { forbidUnknown: true })).toThrow(
      refusal(
        'x.messages.nope',
        'Invalid nestjs-hubtel option "x.messages.nope": is not a known field (busy)',
      ),
    );
  });
});

describe('shared option rules', () => {
  it('shutdown grace: 0 to 10 min', () => {
    const check = (value: object) => checkOptions(HubtelShutdownOptions, value, 'm');
    expect(check({ shutdownGraceMs: 0 })).toEqual({ shutdownGraceMs: 0 });
    expect(check({ shutdownGraceMs: 600_000 })).toEqual({ shutdownGraceMs: 600_000 });
    expect(check({})).toEqual({});
    for (const value of [600_001, -1, 0.5, '5s'])
      expect(() => check({ shutdownGraceMs: value })).toThrow(refusal('m.shutdownGraceMs'));
  });

  it('the job options removed in 0.2.0 are refused, naming the option and what replaced it', () => {
    const bullmq =
      /"m.handlers.(leaseMs|sweepIntervalMs)": was removed in 0.2.0: jobs on Redis run on BullMQ; a dead replica's job is taken over by BullMQ's stalled-job check \(HubtelBullmqModule lockDurationMs \/ stalledIntervalMs\); remove it$/;
    for (const [value, option, message] of [
      [{ leaseMs: 30_000 }, 'm.handlers.leaseMs', bullmq],
      [{ sweepIntervalMs: 0 }, 'm.handlers.sweepIntervalMs', bullmq],
      [{ shutdownGraceMs: 0, sweepIntervalMs: 'x' }, 'm.handlers.sweepIntervalMs', bullmq],
      [{ leaseMs: null }, 'm.handlers.leaseMs', bullmq],
      [
        { recoverOnBootstrap: false },
        'm.handlers.recoverOnBootstrap',
        /"m.handlers.recoverOnBootstrap": was removed in 0.2.0: jobs on Redis run on BullMQ, which keeps unfinished jobs in Redis/,
      ],
    ] as const)
      expect(() => refuseRemovedOptions(value, 'm.handlers')).toThrow(refusal(option, message));
    // Absent (or undefined, as a spread of unset settings leaves it): nothing to refuse.
    for (const value of [{}, { leaseMs: undefined, shutdownGraceMs: 5_000 }, undefined, null, 'x'])
      expect(() => refuseRemovedOptions(value, 'm')).not.toThrow();
  });

  it('POS Sales ID: letters, digits, "-" and "_", at most 64; country code: 1 to 3 digits', () => {
    const valid = { posSalesId: 'A-1_b'.padEnd(64, 'x'), defaultCountryCode: '1' };
    expect(checkOptions(SharedRulesDto, valid, 'c')).toEqual(valid);
    for (const [value, option, message] of [
      [{ posSalesId: 'a/b' }, 'c.posSalesId', /must contain only letters, digits, "-" and "_"$/],
      [{ posSalesId: '' }, 'c.posSalesId', /must contain only letters/],
      [{ posSalesId: 'x'.repeat(65) }, 'c.posSalesId', /at most 64 characters long$/],
      [{ posSalesId: 11684 }, 'c.posSalesId', /must be a string, got a number$/],
      [{ defaultCountryCode: '+233' }, 'c.defaultCountryCode', /of 1 to 3 digits without "\+"/],
      [{ defaultCountryCode: '0233' }, 'c.defaultCountryCode', /of 1 to 3 digits/],
    ] as const)
      expect(() => checkOptions(SharedRulesDto, value, 'c')).toThrow(refusal(option, message));
  });
});
