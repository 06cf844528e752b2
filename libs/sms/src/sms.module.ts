import { HttpService } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from 'nestjs-hubtel';
import {
  hubtelHttpModule,
  hubtelModuleRecipe,
  type HubtelAccountAsyncOptions,
  type HubtelAccountOptions,
  type HubtelModuleExtras,
} from '#internal';
import { SmsAccounts, namedSmsClient, smsTransportFactory, type SmsDefaultAccount } from './sms.accounts.js';
import { SmsClient } from './sms.client.js';
import {
  SMS_ACCOUNTS,
  SMS_HTTP_TRANSPORT,
  SMS_DEFAULT_ACCOUNT,
  SMS_TRANSPORT_FACTORY,
  SMS_OPTIONS,
  getSmsAccountToken,
} from './sms.constants.js';
import {
  SMS_OPTIONS_RECIPE,
  smsTransportConfig,
  type ResolvedSmsOptions,
  type SmsAccountOverrides,
} from './sms.options.js';
import { SmsService } from './sms.service.js';

/** What `SmsModule.forRoot` takes besides its options (`isGlobal`). */
export interface SmsModuleExtras extends HubtelModuleExtras {}

const SMS_MODULE = hubtelModuleRecipe({
  options: SMS_OPTIONS_RECIPE,
  module: 'SmsModule',
  factoryMethod: 'createSmsOptions',
  resolvedToken: SMS_OPTIONS,
  registry: SmsAccounts,
  accounts: {
    provide: SMS_ACCOUNTS,
    inject: { transport: SMS_HTTP_TRANSPORT, transportFor: SMS_TRANSPORT_FACTORY },
    default: (d: SmsDefaultAccount) =>
      new SmsClient(SMS_DEFAULT_ACCOUNT, d.resolved, d.transport, d.telemetry),
    named: namedSmsClient,
  },
  token: getSmsAccountToken,
  bind: (accounts, name) => accounts.sender(name),
});

/** `SmsModule.forRoot(...)` argument. */
export type SmsModuleForRootOptions = typeof SMS_MODULE.OPTIONS_TYPE;
/** `SmsModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type SmsModuleAsyncOptions = typeof SMS_MODULE.ASYNC_OPTIONS_TYPE;
/** `SmsModule.registerAccount(...)` argument: the account's name, its options, and module extras. */
export type SmsAccountOptions = HubtelAccountOptions<SmsAccountOverrides>;
/** `SmsModule.registerAccountAsync(...)` argument. */
export interface SmsAccountAsyncOptions extends HubtelAccountAsyncOptions<SmsAccountOverrides> {}

/**
 * Sending SMS through the platform's SMS API; a bad option stops the app at bootstrap, named.
 *
 * ```ts
 * SmsModule.forRoot({ clientId, clientSecret, senderId: 'MyShop' })
 * SmsModule.forRootAsync({ inject: [ConfigService],
 *   useFactory: (c: ConfigService) => smsOptionsFromEnv((k) => c.get(k)) })
 * // a further account (`@InjectSms('north')`, `sms.forAccount('north')`), forRoot's options under its own:
 * SmsModule.registerAccount({ name: 'north', clientId, clientSecret, senderId: 'NorthShop' })
 * ```
 */
@Module({
  imports: [hubtelHttpModule()],
  providers: [
    {
      provide: SMS_HTTP_TRANSPORT,
      // The factory's way, not its token's: an overridden factory makes the named accounts' only.
      useFactory: (http: HttpService, options: ResolvedSmsOptions, telemetry?: HubtelTelemetry) =>
        smsTransportFactory(http, telemetry)(SMS_DEFAULT_ACCOUNT, smsTransportConfig(options)),
      inject: [HttpService, SMS_OPTIONS, { token: HUBTEL_TELEMETRY, optional: true }],
    },
    {
      provide: SMS_TRANSPORT_FACTORY,
      useFactory: smsTransportFactory,
      inject: [HttpService, { token: HUBTEL_TELEMETRY, optional: true }],
    },
    SmsService,
  ],
  exports: [SmsService, SMS_OPTIONS],
})
export class SmsModule extends SMS_MODULE.ConfigurableModuleClass {}
