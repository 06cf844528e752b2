import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HubtelOption, optionFields } from './hubtel-option.decorator.js';
import { IsOptionalSection } from './hubtel-options.dto.js';
import {
  declaredOptionsFromEnv,
  inheritDeclaredOptions,
  overrideOptions,
  resolveDeclaredOptions,
} from './hubtel-options.declared.js';

class AccessDeclaration {
  @HubtelOption({ account: 'notInherited' })
  pathSecret?: string;
}

class RetryOptions {
  @IsOptional()
  @IsInt()
  @Min(1)
  @HubtelOption({ env: 'HUBTEL_TEST_ATTEMPTS', default: 3 })
  attempts?: number;

  @IsOptional()
  @IsInt()
  @HubtelOption({ env: 'HUBTEL_TEST_BASE_MS', default: 100 })
  baseMs?: number;

  @IsOptional()
  @IsInt()
  @HubtelOption({ defaultFrom: (retry) => Math.max(1000, retry.baseMs as number) })
  maxMs?: number;
}

class CheckOptions {
  @IsOptional()
  @IsString()
  @HubtelOption({ account: 'own' })
  key?: string;

  @IsOptional()
  @IsString()
  @HubtelOption({ default: 'https://check.test' })
  url?: string;
}

class WatchOptions {
  @IsOptional()
  @IsInt()
  @HubtelOption({ default: 5 })
  everyMs?: number;
}

class TestOptions {
  @IsString()
  @HubtelOption({ env: 'HUBTEL_TEST_ID', account: 'own' })
  id: string;

  @IsOptional()
  @IsString()
  @HubtelOption({ env: 'HUBTEL_TEST_SHOP', account: 'notInherited' })
  shop?: string;

  /** Checked in code (a URL): kept as given. */
  @HubtelOption({ env: 'HUBTEL_TEST_URL', default: 'https://example.test' })
  url?: string;

  @IsOptional()
  @HubtelOption({ env: 'HUBTEL_TEST_VERBOSE', default: false })
  verbose?: boolean;

  @IsOptionalSection(() => RetryOptions)
  @HubtelOption({ account: 'merged', default: {} })
  retry?: RetryOptions;

  /** Present or absent on purpose: no default creates it. */
  @IsOptionalSection(() => WatchOptions)
  watch?: WatchOptions;

  @HubtelOption({ account: 'merged', section: () => AccessDeclaration })
  access?: { pathSecret?: string; allow?: string[] };

  @HubtelOption({ defaultFrom: (_section, root) => root.shop !== undefined })
  shopKnown?: boolean;

  @HubtelOption({ account: 'defaultOnly' })
  resolver?: { resolve(name: string): unknown };

  /** Required of a named account when the default has one; its `url` is inherited, never its `key`. */
  @IsOptionalSection(() => CheckOptions)
  @HubtelOption({ account: 'ownIfDefault' })
  check?: CheckOptions;
}

class LoudTestOptions extends TestOptions {
  @IsOptional()
  @IsInt()
  @HubtelOption({ env: 'HUBTEL_TEST_VOLUME', default: 11 })
  volume?: number;
}

describe('options declared once (@HubtelOption)', () => {
  it('fills defaults, computed ones from the options around them, and keeps the unchecked fields', () => {
    const resolver = { resolve: () => undefined };
    expect(resolveDeclaredOptions(TestOptions, { id: 'a', retry: { baseMs: 2000 }, resolver }, 't')).toEqual({
      id: 'a',
      url: 'https://example.test',
      verbose: false,
      retry: { attempts: 3, baseMs: 2000, maxMs: 2000 },
      shopKnown: false,
      resolver,
    });
    const resolved = resolveDeclaredOptions(TestOptions, { id: 'a', shop: 's', watch: {}, retry: null }, 't');
    expect(resolved.watch).toEqual({ everyMs: 5 });
    expect(resolved.retry).toEqual({ attempts: 3, baseMs: 100, maxMs: 1000 });
    expect(resolved.shopKnown).toBe(true);
  });

  it('checks the fields against their rules, naming the option', () => {
    expect(() => resolveDeclaredOptions(TestOptions, { id: 'a', retry: { attempts: 0 } }, 'test')).toThrow(
      expect.objectContaining({ option: 'test.retry.attempts' }),
    );
    expect(() => resolveDeclaredOptions(TestOptions, {}, 'test')).toThrow(HubtelConfigError);
  });

  it('lists a subclass’s fields after its ancestors’', () => {
    expect(optionFields(LoudTestOptions).map((field) => field.key)).toEqual([
      'id',
      'shop',
      'url',
      'verbose',
      'retry',
      'watch',
      'access',
      'shopKnown',
      'resolver',
      'check',
      'volume',
    ]);
    expect(resolveDeclaredOptions(LoudTestOptions, { id: 'a' }, 't').volume).toBe(11);
  });

  describe('declaredOptionsFromEnv', () => {
    const env = {
      HUBTEL_TEST_ID: 'id-1',
      HUBTEL_TEST_URL: ' http://127.0.0.1:1 ',
      HUBTEL_TEST_VERBOSE: 'true',
      HUBTEL_TEST_BASE_MS: '250',
      HUBTEL_NORTH_TEST_ID: 'id-north',
      HUBTEL_NORTH_TEST_ATTEMPTS: '5',
    };

    it('reads the declared variables, typed, a section when one of its variables is set', () => {
      expect(declaredOptionsFromEnv(LoudTestOptions, env, 'test')).toEqual({
        options: { id: 'id-1', url: 'http://127.0.0.1:1', verbose: true, retry: { baseMs: 250 } },
        variables: {
          'test.id': 'HUBTEL_TEST_ID',
          'test.shop': 'HUBTEL_TEST_SHOP',
          'test.url': 'HUBTEL_TEST_URL',
          'test.verbose': 'HUBTEL_TEST_VERBOSE',
          'test.retry.attempts': 'HUBTEL_TEST_ATTEMPTS',
          'test.retry.baseMs': 'HUBTEL_TEST_BASE_MS',
          'test.volume': 'HUBTEL_TEST_VOLUME',
        },
      });
    });

    it("reads a named account's own variables, naming what it set and what it must set", () => {
      expect(declaredOptionsFromEnv(TestOptions, env, 'test[north]', 'north')).toEqual({
        options: { id: 'id-north', retry: { attempts: 5 } },
        variables: {
          'test[north].id': 'HUBTEL_NORTH_TEST_ID',
          'test[north].retry.attempts': 'HUBTEL_NORTH_TEST_ATTEMPTS',
        },
      });
      expect(declaredOptionsFromEnv(TestOptions, {}, 'test[south]', 'south').variables).toEqual({
        'test[south].id': 'HUBTEL_SOUTH_TEST_ID',
      });
    });

    it('refuses a bad number or boolean, naming the variable', () => {
      expect(() => declaredOptionsFromEnv(TestOptions, { HUBTEL_TEST_BASE_MS: '1e3' }, 't')).toThrow(
        expect.objectContaining({ option: 'HUBTEL_TEST_BASE_MS' }),
      );
      expect(() =>
        declaredOptionsFromEnv(TestOptions, { HUBTEL_NORTH_TEST_VERBOSE: 'yes' }, 't', 'north'),
      ).toThrow(expect.objectContaining({ option: 'HUBTEL_NORTH_TEST_VERBOSE' }));
    });
  });

  it('overrides sections field by field, ignoring undefined overrides', () => {
    expect(
      overrideOptions<TestOptions>(
        TestOptions,
        { id: 'env', retry: { attempts: 2, baseMs: 250 } },
        {
          id: undefined,
          retry: { attempts: 4 },
          shop: 'mine',
        },
      ),
    ).toEqual({ id: 'env', retry: { attempts: 4, baseMs: 250 }, shop: 'mine' });
  });

  describe('inheritDeclaredOptions (a named account over the default one)', () => {
    const defaults = {
      id: 'default-id',
      shop: 'default-shop',
      url: 'http://default.test',
      retry: { attempts: 2, baseMs: 500 },
      access: { pathSecret: 'default-secret', allow: ['10.0.0.0/8'] },
      resolver: { resolve: () => undefined },
    };

    it('inherits what it leaves out, sections field by field, never what is each account’s own', () => {
      expect(
        inheritDeclaredOptions(TestOptions, 't[north]', defaults, {
          name: 'north',
          id: 'north-id',
          retry: { attempts: 7, baseMs: undefined },
        }),
      ).toEqual({
        id: 'north-id',
        url: 'http://default.test',
        retry: { attempts: 7, baseMs: 500 },
        access: { allow: ['10.0.0.0/8'] },
      });
      expect(
        inheritDeclaredOptions(TestOptions, 't[north]', defaults, {
          id: 'north-id',
          access: { pathSecret: 'north-secret' },
        }).access,
      ).toEqual({ pathSecret: 'north-secret', allow: ['10.0.0.0/8'] });
    });

    it('an ownIfDefault section: required when the default has one, completed with its inherited fields only', () => {
      const checked = { ...defaults, check: { key: 'default-key', url: 'https://default-check.test' } };
      expect(() => inheritDeclaredOptions(TestOptions, 't[north]', checked, { id: 'n' })).toThrow(
        expect.objectContaining({ option: 't[north].check' }),
      );
      expect(
        inheritDeclaredOptions(TestOptions, 't[north]', checked, { id: 'n', check: { key: 'north-key' } })
          .check,
      ).toEqual({
        key: 'north-key',
        url: 'https://default-check.test',
      });
      // Without one on the default account, a named account may go without.
      expect(inheritDeclaredOptions(TestOptions, 't[north]', defaults, { id: 'n' }).check).toBeUndefined();
    });

    it.each([
      [{ shop: 's' }, 't[north].id', /is required: a named account gives its own credentials/],
      [{ id: 'x', resolver: {} }, 't[north].resolver', /default account only \(forRoot\)/],
      ['north', 't[north]', /must be an options object/],
    ])('%j fails naming %s', (overrides, option, message) => {
      let error: unknown;
      try {
        inheritDeclaredOptions(TestOptions, 't[north]', defaults, overrides);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(HubtelConfigError);
      expect((error as HubtelConfigError).option).toBe(option);
      expect((error as Error).message).toMatch(message);
    });
  });
});
