import { HttpService } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from 'nestjs-hubtel';
import { createHttpTransport, hubtelHttpModule } from '#internal';
import { SMS_HTTP_TRANSPORT, SMS_LOGGER_CONTEXT, SMS_OPTIONS } from './sms.constants.js';
import { SMS_MODULE_OPTIONS, SmsConfigurableModule } from './sms.module-definition.js';
import {
  resolveSmsOptions,
  smsTransportConfig,
  type ResolvedSmsOptions,
  type SmsModuleOptions,
} from './sms.options.js';
import { SmsService } from './sms.service.js';

/**
 * Sending SMS through the platform's SMS API.
 *
 * ```ts
 * SmsModule.forRoot({ clientId, clientSecret, senderId: 'MyShop' })
 * SmsModule.forRootAsync({ imports: [ConfigModule], inject: [ConfigService],
 *   useFactory: (c: ConfigService) => smsOptionsFromEnv((k) => c.get(k)), isGlobal: true })
 * ```
 * Options are validated when the module is created: a bad option stops the application at
 * bootstrap with a HubtelConfigError naming it.
 */
@Module({
  imports: [hubtelHttpModule()],
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
    SmsService,
  ],
  exports: [SmsService, SMS_OPTIONS],
})
export class SmsModule extends SmsConfigurableModule {}
