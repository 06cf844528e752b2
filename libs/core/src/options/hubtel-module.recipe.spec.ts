import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AccountRegistry } from '../accounts/hubtel-accounts.js';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HubtelOption } from './hubtel-option.decorator.js';
import { hubtelModuleRecipe } from './hubtel-module.recipe.js';
import { hubtelOptionsRecipe } from './hubtel-options.recipe.js';

@Injectable()
class Registry extends AccountRegistry<string> {
  readonly recorded: Array<[string, unknown]> = [];
  constructor() {
    super('parcel', 'ParcelModule.forRoot');
  }
  override register(name: string, overrides: unknown): void {
    this.recorded.push([name, overrides]);
  }
}

class ParcelOptions {
  @HubtelOption({ account: 'own' })
  clientId?: string;
  @HubtelOption({ account: 'own' })
  clientSecret?: string;
}

const token = (name: string) => `TEST_ACCOUNT:${name}`;
const PARCEL = hubtelModuleRecipe({
  options: hubtelOptionsRecipe<ParcelOptions, ParcelOptions, ParcelOptions>({
    scope: 'parcel',
    options: ParcelOptions,
    resolve: () => ({}),
  }),
  module: 'ParcelModule',
  factoryMethod: 'create',
  resolvedToken: 'PARCEL_OPTIONS',
  registry: Registry,
  accounts: { provide: 'PARCEL_ACCOUNTS', inject: {}, default: () => 'default', named: (_d, name) => name },
  token,
  bind: (_registry, name) => `client of ${name}`,
});
const { ConfigurableModuleClass: ParcelModule } = PARCEL;

function optionOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof HubtelConfigError) return error.option;
    throw error;
  }
  return 'no error';
}

describe('registerAccount / registerAccountAsync of a module made by the recipe', () => {
  it('registers each account (from a value or a factory) and provides what it registered under its token', async () => {
    @Injectable()
    class User {
      constructor(
        @Inject(token('north')) readonly north: string,
        @Inject(token('south')) readonly south: string,
      ) {}
    }
    @Module({ providers: [{ provide: 'KEY', useValue: 's-secret' }], exports: ['KEY'] })
    class ConfigModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [
        ParcelModule.registerAccount({ name: 'north', isGlobal: true, clientId: 'n' }),
        ParcelModule.registerAccountAsync({
          name: 'south',
          isGlobal: true,
          imports: [ConfigModule],
          inject: ['KEY'],
          useFactory: (secret: string) => ({ clientSecret: secret }),
        }),
      ],
      providers: [User],
    }).compile();
    expect(moduleRef.get(User)).toMatchObject({ north: 'client of north', south: 'client of south' });
    expect(moduleRef.get(Registry).recorded.sort()).toEqual([
      ['north', { clientId: 'n' }],
      ['south', { clientSecret: 's-secret' }],
    ]);
  });

  it('refuses a bad name or a missing factory, naming the option', () => {
    expect(optionOf(() => ParcelModule.registerAccount({ name: 'North' }))).toBe(
      'parcel.registerAccount.name',
    );
    expect(optionOf(() => ParcelModule.registerAccount({ name: 'default' }))).toBe(
      'parcel.registerAccount.name',
    );
    expect(
      optionOf(() => ParcelModule.registerAccountAsync({ name: 'bad name', useFactory: () => ({}) })),
    ).toBe('parcel.registerAccountAsync.name');
    expect(optionOf(() => ParcelModule.registerAccountAsync({ name: 'south' } as never))).toBe(
      'parcel[south].useFactory',
    );
  });
});
