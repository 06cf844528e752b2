import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import {
  registerAccountAsyncModule,
  registerAccountModule,
  type AccountModuleSpec,
} from './account-module.js';

@Injectable()
class Registry {
  readonly registered: Array<[string, unknown]> = [];
}
@Global()
@Module({ providers: [Registry], exports: [Registry] })
class RegistryModule {}
@Module({})
class AccountModule {}

const token = (name: string) => `TEST_ACCOUNT:${name}`;
const SPEC: AccountModuleSpec<Registry> = {
  area: 'parcel',
  forRoot: 'ParcelModule.forRoot',
  module: AccountModule,
  registryModule: RegistryModule,
  registry: Registry,
  token,
  register: (registry, name, overrides) => {
    registry.registered.push([name, overrides]);
    return `client of ${name}`;
  },
};

function optionOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof HubtelConfigError) return error.option;
    throw error;
  }
  return 'no error';
}

describe('registerAccountModule / registerAccountAsyncModule', () => {
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
        registerAccountModule(SPEC, { name: 'north', isGlobal: true, clientId: 'n' } as never),
        registerAccountAsyncModule(SPEC, {
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
    expect(moduleRef.get(Registry).registered.sort()).toEqual([
      ['north', { clientId: 'n' }],
      ['south', { clientSecret: 's-secret' }],
    ]);
  });

  it('refuses a bad name or a missing factory, naming the option', () => {
    expect(optionOf(() => registerAccountModule(SPEC, { name: 'North' }))).toBe(
      'parcel.registerAccount.name',
    );
    expect(optionOf(() => registerAccountModule(SPEC, { name: 'default' }))).toBe(
      'parcel.registerAccount.name',
    );
    expect(
      optionOf(() => registerAccountAsyncModule(SPEC, { name: 'bad name', useFactory: () => ({}) })),
    ).toBe('parcel.registerAccountAsync.name');
    expect(optionOf(() => registerAccountAsyncModule(SPEC, { name: 'south' } as never))).toBe(
      'parcel[south].useFactory',
    );
  });
});
