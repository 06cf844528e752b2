import { IsOptional, IsString } from 'class-validator';
import {
  checkJobOwnership,
  checkOptions,
  HubtelHttpOptionsDto,
  HubtelJobOwnershipOptionsDto,
  IsHubtelCountryCode,
  IsHubtelPosSalesId,
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

  @IsOptional()
  @IsHubtelCountryCode()
  defaultCountryCode?: string;
}

class ClosedDto {
  @IsOptional()
  @IsString()
  busy?: string;
}

describe('checkOptions', () => {
  it('names the option by its path under the prefix, with the validator wording, never the value', () => {
    expect(() => checkOptions(HubtelJobOwnershipOptionsDto, { leaseMs: 999 }, 'x.handlers')).toThrow(
      refusal(
        'x.handlers.leaseMs',
        'Invalid nestjs-hubtel option "x.handlers.leaseMs": must be at least 1000',
      ),
    );
    expect(() => checkOptions(HubtelJobOwnershipOptionsDto, { leaseMs: '2s' }, 'x')).toThrow(
      refusal('x.leaseMs', /"x.leaseMs": must be an integer number, got a string$/),
    );
    expect(() => checkOptions(HubtelJobOwnershipOptionsDto, { leaseMs: 1.5 }, 'x')).toThrow(
      refusal('x.leaseMs'),
    );
  });

  it('names the prefix when the value is not an object', () => {
    expect(() => checkOptions(ClosedDto, 'x', 'x.messages')).toThrow(
      refusal('x.messages', 'Invalid nestjs-hubtel option "x.messages": must be an object, got a string'),
    );
    expect(() => checkOptions(ClosedDto, [], '')).toThrow(refusal('(options)'));
  });

  it('leaves null fields out of the result, as not given, at every level', () => {
    expect(checkOptions(HubtelJobOwnershipOptionsDto, { leaseMs: null, shutdownGraceMs: 0 }, 'x')).toEqual({
      shutdownGraceMs: 0,
    });
    const http = { timeoutMs: null, retry: { maxAttempts: null, baseDelayMs: 5 }, defaultCountryCode: '1' };
    expect(checkOptions(HubtelHttpOptionsDto, http, 'x')).toEqual({
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
  it('job ownership: lease 1 s to 1 h, sweep 0 or 100 ms to 1 h, shutdown grace 0 to 10 min', () => {
    const check = (value: object) =>
      checkJobOwnership(checkOptions(HubtelJobOwnershipOptionsDto, value, 'm'), 'm');
    expect(check({ leaseMs: 1_000, sweepIntervalMs: 0, shutdownGraceMs: 0 })).toEqual({
      leaseMs: 1_000,
      sweepIntervalMs: 0,
      shutdownGraceMs: 0,
    });
    expect(check({ leaseMs: 3_600_000, sweepIntervalMs: 100, shutdownGraceMs: 600_000 })).toBeDefined();
    expect(check({})).toEqual({});
    for (const [value, option] of [
      [{ leaseMs: 3_600_001 }, 'm.leaseMs'],
      [{ sweepIntervalMs: 99 }, 'm.sweepIntervalMs'],
      [{ sweepIntervalMs: 1 }, 'm.sweepIntervalMs'],
      [{ sweepIntervalMs: -1 }, 'm.sweepIntervalMs'],
      [{ sweepIntervalMs: 3_600_001 }, 'm.sweepIntervalMs'],
      [{ shutdownGraceMs: 600_001 }, 'm.shutdownGraceMs'],
      [{ shutdownGraceMs: -1 }, 'm.shutdownGraceMs'],
    ] as const)
      expect(() => check(value)).toThrow(refusal(option));
    expect(() => check({ sweepIntervalMs: 50 })).toThrow(
      refusal('m.sweepIntervalMs', /must be 0 \(no sweep\) or at least 100$/),
    );
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
