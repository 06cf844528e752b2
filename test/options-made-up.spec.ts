import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { IsOptional, IsString } from 'class-validator';
import { HubtelOption } from '#internal';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { CheckoutAccounts } from '../libs/checkout/src/checkout.accounts.js';
import { CheckoutModule } from '../libs/checkout/src/checkout.module.js';
import {
  CheckoutModuleOptions,
  checkoutAccountsFromEnv,
  checkoutOptionsFromEnv,
} from '../libs/checkout/src/checkout.options.js';
import { CHECKOUT_RESOLVED_OPTIONS } from '../libs/checkout/src/checkout.constants.js';
import { ServiceAppAccounts } from '../libs/service-app/src/service-app.accounts.js';
import { SERVICE_APP_OPTIONS } from '../libs/service-app/src/service-app.constants.js';
import { ServiceAppModule } from '../libs/service-app/src/service-app.module.js';
import {
  ServiceAppModuleOptions,
  serviceAppAccountsFromEnv,
  serviceAppOptionsFromEnv,
} from '../libs/service-app/src/service-app.options.js';
import { SMS_ACCOUNTS, SMS_OPTIONS } from '../libs/sms/src/sms.constants.js';
import type { SmsAccounts } from '../libs/sms/src/sms.accounts.js';
import { SmsModule } from '../libs/sms/src/sms.module.js';
import { SmsModuleOptions, smsAccountsFromEnv, smsOptionsFromEnv } from '../libs/sms/src/sms.options.js';

/*
 * One recipe for every module: an option added to a module's options class (one field, declared
 * here at run time, before anything reads the class) reaches forRoot, registerAccount, the
 * environment readers and the resolved options with no other edit.
 */

function addMadeUpOption(options: Function): void {
  const field = (decorator: PropertyDecorator) => decorator(options.prototype as object, 'madeUp');
  Reflect.defineMetadata('design:type', String, options.prototype as object, 'madeUp');
  field(IsOptional());
  field(IsString());
  field(HubtelOption({ env: 'HUBTEL_MADE_UP', default: 'by default' }));
}

interface ModuleCase {
  name: string;
  options: Function;
  /** The options every account of this module needs besides the made-up one. */
  required: Record<string, unknown>;
  account: Record<string, unknown>;
  env: Record<string, string>;
  accountEnv: Record<string, string>;
  forRoot: (options: object) => unknown;
  registerAccount: (options: object) => unknown;
  fromEnv: (env: Record<string, string>) => object;
  accountsFromEnv: (env: Record<string, string>) => { default: object; accounts: object[] };
  /** What the module needs beside it in an app. */
  imports?: unknown[];
  /** The resolved options of forRoot's account and of account `name`, from the running app. */
  resolved: (app: {
    get<T>(token: unknown): T;
  }) => Promise<{ main: object; named: (name: string) => Promise<object> }>;
}

const CASES: ModuleCase[] = [
  {
    name: 'SmsModule',
    options: SmsModuleOptions,
    required: { clientId: 'main-id', clientSecret: 'main-secret' },
    account: { clientId: 'north-id', clientSecret: 'north-secret' },
    env: { HUBTEL_SMS_CLIENT_ID: 'main-id', HUBTEL_SMS_CLIENT_SECRET: 'main-secret' },
    accountEnv: { HUBTEL_NORTH_SMS_CLIENT_ID: 'north-id', HUBTEL_NORTH_SMS_CLIENT_SECRET: 'north-secret' },
    forRoot: (options) => SmsModule.forRoot(options as SmsModuleOptions),
    registerAccount: (options) => SmsModule.registerAccount(options as never),
    fromEnv: (env) => smsOptionsFromEnv(env),
    accountsFromEnv: (env) => smsAccountsFromEnv(env),
    resolved: async (app) => ({
      main: app.get(SMS_OPTIONS),
      named: async (name) =>
        (await app.get<SmsAccounts>(SMS_ACCOUNTS).get(name)) as unknown as { options: object },
    }),
  },
  {
    name: 'CheckoutModule',
    options: CheckoutModuleOptions,
    required: { clientId: 'main-id', clientSecret: 'main-secret' },
    account: { clientId: 'north-id', clientSecret: 'north-secret' },
    env: { HUBTEL_CLIENT_ID: 'main-id', HUBTEL_CLIENT_SECRET: 'main-secret' },
    accountEnv: { HUBTEL_NORTH_CLIENT_ID: 'north-id', HUBTEL_NORTH_CLIENT_SECRET: 'north-secret' },
    imports: [EventEmitterModule.forRoot()],
    forRoot: (options) => CheckoutModule.forRoot(options as CheckoutModuleOptions),
    registerAccount: (options) => CheckoutModule.registerAccount(options as never),
    fromEnv: (env) => checkoutOptionsFromEnv(env),
    accountsFromEnv: (env) => checkoutAccountsFromEnv(env),
    resolved: async (app) => ({
      main: app.get(CHECKOUT_RESOLVED_OPTIONS),
      named: (name) => app.get<CheckoutAccounts>(CheckoutAccounts).get(name),
    }),
  },
  {
    name: 'ServiceAppModule',
    options: ServiceAppModuleOptions,
    required: {},
    account: {},
    env: {},
    accountEnv: {},
    imports: [EventEmitterModule.forRoot()],
    forRoot: (options) => ServiceAppModule.forRoot(options as ServiceAppModuleOptions),
    registerAccount: (options) => ServiceAppModule.registerAccount(options as never),
    fromEnv: (env) => serviceAppOptionsFromEnv(env),
    accountsFromEnv: (env) => serviceAppAccountsFromEnv(env),
    resolved: async (app) => ({
      main: app.get(SERVICE_APP_OPTIONS),
      named: (name) => app.get<ServiceAppAccounts>(ServiceAppAccounts).get(name),
    }),
  },
];

for (const module of CASES) addMadeUpOption(module.options);

describe.each(CASES)('a made-up option on $name', (module) => {
  it('is taken by forRoot and registerAccount and reaches the resolved options, inherited as declared', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...((module.imports ?? []) as never[]),
        module.forRoot({ ...module.required, madeUp: 'main' }) as never,
        module.registerAccount({ name: 'north', ...module.account, madeUp: 'north' }) as never,
        module.registerAccount({ name: 'south', ...module.account }) as never,
      ],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const { main, named } = await module.resolved(app);
      expect(main).toMatchObject({ madeUp: 'main' });
      expect(((await named('north')) as { options: object }).options).toMatchObject({ madeUp: 'north' });
      expect(((await named('south')) as { options: object }).options).toMatchObject({ madeUp: 'main' });
    } finally {
      await app.close();
    }
  });

  it('has its default', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [...((module.imports ?? []) as never[]), module.forRoot(module.required) as never],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      expect((await module.resolved(app)).main).toMatchObject({ madeUp: 'by default' });
    } finally {
      await app.close();
    }
  });

  it('is read from its environment variable, and a named account from its own', () => {
    expect(module.fromEnv({ ...module.env, HUBTEL_MADE_UP: 'from env' })).toMatchObject({
      madeUp: 'from env',
    });
    const read = module.accountsFromEnv({
      ...module.env,
      ...module.accountEnv,
      HUBTEL_ACCOUNTS: 'north',
      HUBTEL_MADE_UP: 'main env',
      HUBTEL_NORTH_MADE_UP: 'north env',
    });
    expect(read.default).toMatchObject({ madeUp: 'main env' });
    expect(read.accounts).toEqual([expect.objectContaining({ name: 'north', madeUp: 'north env' })]);
  });
});
