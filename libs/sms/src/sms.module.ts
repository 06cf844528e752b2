import { HttpService } from '@nestjs/axios';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from 'nestjs-hubtel';
import {
  registerAccountAsyncModule,
  registerAccountModule,
  type AccountModuleSpec,
  createHttpTransport,
  hubtelHttpModule,
  type HttpTransport,
} from '#internal';
import { SmsAccounts, smsTransportFactory, type SmsTransportFactory } from './sms.accounts.js';
import {
  SMS_ACCOUNTS,
  SMS_HTTP_TRANSPORT,
  SMS_LOGGER_CONTEXT,
  SMS_TRANSPORT_FACTORY,
  SMS_OPTIONS,
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

/** How `registerAccount(Async)` make their modules (core's account-module helpers). */
const ACCOUNT_MODULE: AccountModuleSpec<SmsAccounts> = {
  area: 'sms',
  forRoot: 'SmsModule.forRoot',
  module: SmsAccountModule,
  registryModule: SmsAccountsModule,
  registry: SmsAccounts,
  token: getSmsAccountToken,
  register: (accounts, name, overrides) => accounts.register(name, overrides),
};

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
    return registerAccountModule(ACCOUNT_MODULE, options);
  }

  /** `registerAccount` with the account's options from a factory (ConfigService, a vault...). */
  static registerAccountAsync(options: SmsAccountAsyncOptions): DynamicModule {
    return registerAccountAsyncModule(ACCOUNT_MODULE, options);
  }
}
