import { HttpService } from '@nestjs/axios';
import { Global, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { HUBTEL_TELEMETRY, HubtelConfigError, type HubtelTelemetry } from 'nestjs-hubtel';
import { checkAccountName, createHttpTransport, hubtelHttpModule, type HttpTransport } from '#internal';
import { SmsAccounts, smsTransportFactory, type SmsTransportFactory } from './sms.accounts.js';
import {
  SMS_ACCOUNTS,
  SMS_HTTP_TRANSPORT,
  SMS_LOGGER_CONTEXT,
  SMS_TRANSPORT_FACTORY,
  SMS_OPTIONS,
  getSmsAccountOptionsToken,
  getSmsAccountToken,
} from './sms.constants.js';
import {
  SMS_MODULE_OPTIONS,
  SmsConfigurableModule,
  type SmsAccountAsyncOptions,
  type SmsAccountOptions,
} from './sms.module-definition.js';
import {
  resolveSmsOptions,
  smsTransportConfig,
  type ResolvedSmsOptions,
  type SmsModuleOptions,
} from './sms.options.js';
import { SmsService } from './sms.service.js';

/**
 * One SmsAccounts per application, whichever modules register accounts: global, so forRoot's
 * module and every registerAccount module share it (each Nest application gets its own).
 */
@Global()
@Module({ providers: [SmsAccounts], exports: [SmsAccounts] })
class SmsAccountsModule {}

/** The module `registerAccount(Async)` returns (one per account name). */
@Module({})
class SmsAccountModule {}

/**
 * Sending SMS through the platform's SMS API.
 *
 * ```ts
 * SmsModule.forRoot({ clientId, clientSecret, senderId: 'MyShop' })
 * SmsModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService],
 *   useFactory: (c: ConfigService) => smsOptionsFromEnv((k) => c.get(k)), isGlobal: true })
 * // further accounts, each inheriting what it does not set from forRoot's:
 * SmsModule.registerAccount({ name: 'north', clientId, clientSecret, senderId: 'NorthShop' })
 * ```
 * Options are validated when the module is created: a bad option stops the application at
 * bootstrap with a HubtelConfigError naming it.
 */
@Module({
  imports: [hubtelHttpModule(), SmsAccountsModule],
  providers: [
    {
      provide: SMS_OPTIONS,
      useFactory: (options: SmsModuleOptions) => resolveSmsOptions(options),
      inject: [SMS_MODULE_OPTIONS],
    },
    {
      provide: SMS_HTTP_TRANSPORT,
      useFactory: (http: HttpService, options: ResolvedSmsOptions, telemetry?: HubtelTelemetry) =>
        createHttpTransport(
          http,
          telemetry ? { ...smsTransportConfig(options), telemetry } : smsTransportConfig(options),
          SMS_LOGGER_CONTEXT,
        ),
      inject: [HttpService, SMS_OPTIONS, { token: HUBTEL_TELEMETRY, optional: true }],
    },
    {
      provide: SMS_TRANSPORT_FACTORY,
      useFactory: smsTransportFactory,
      inject: [HttpService, { token: HUBTEL_TELEMETRY, optional: true }],
    },
    {
      // The default account, handed to the application's accounts: named ones inherit from it.
      provide: SMS_ACCOUNTS,
      useFactory: (
        accounts: SmsAccounts,
        options: SmsModuleOptions,
        resolved: ResolvedSmsOptions,
        transport: HttpTransport,
        transportFor: SmsTransportFactory,
        telemetry?: HubtelTelemetry,
      ) => accounts.attachDefault({ options, resolved, transport, transportFor, telemetry }),
      inject: [
        SmsAccounts,
        SMS_MODULE_OPTIONS,
        SMS_OPTIONS,
        SMS_HTTP_TRANSPORT,
        SMS_TRANSPORT_FACTORY,
        { token: HUBTEL_TELEMETRY, optional: true },
      ],
    },
    SmsService,
  ],
  exports: [SmsService, SMS_OPTIONS],
})
export class SmsModule extends SmsConfigurableModule {
  /**
   * A further account, by name: its sender is injected with `@InjectSms(name)` (in the modules
   * that import this one, or everywhere with `isGlobal`), and `sms.forAccount(name)` reaches it
   * from anywhere. It gives its own `clientId` / `clientSecret`; every other option it leaves out
   * is the default account's (`SmsModule.forRoot`, required).
   */
  static registerAccount(options: SmsAccountOptions): DynamicModule {
    const { name, isGlobal, ...overrides } = options ?? ({} as SmsAccountOptions);
    return SmsModule.accountModule(name, isGlobal, [], {
      provide: getSmsAccountOptionsToken(name),
      useValue: overrides,
    });
  }

  /** `registerAccount` with the account's options from a factory (ConfigService, a vault...). */
  static registerAccountAsync(options: SmsAccountAsyncOptions): DynamicModule {
    const {
      name,
      isGlobal,
      imports = [],
      inject = [],
      useFactory,
    } = options ?? ({} as SmsAccountAsyncOptions);
    checkAccountName(name, 'sms.registerAccountAsync.name', 'SmsModule.forRoot');
    if (typeof useFactory !== 'function')
      throw new HubtelConfigError(
        `sms[${name}].useFactory`,
        'must be a function returning the account options',
      );
    return SmsModule.accountModule(name, isGlobal, imports, {
      provide: getSmsAccountOptionsToken(name),
      useFactory,
      inject,
    });
  }

  private static accountModule(
    name: string,
    isGlobal: boolean | undefined,
    imports: NonNullable<DynamicModule['imports']>,
    optionsProvider: Provider,
  ): DynamicModule {
    checkAccountName(name, 'sms.registerAccount.name', 'SmsModule.forRoot');
    const token = getSmsAccountToken(name);
    return {
      module: SmsAccountModule,
      global: isGlobal ?? false,
      imports: [...imports, SmsAccountsModule],
      providers: [
        optionsProvider,
        {
          provide: token,
          useFactory: (accounts: SmsAccounts, overrides: unknown) => accounts.register(name, overrides),
          inject: [SmsAccounts, getSmsAccountOptionsToken(name)],
        },
      ],
      exports: [token],
    };
  }
}
