import { HUBTEL_ENV, dropUndefined, hubtelHttpOptionsFromEnv, readHubtelEnv } from 'nestjs-hubtel/internal';
import { HubtelConfigError, type HubtelEnvSource } from 'nestjs-hubtel';
import type { SmsModuleOptions } from './sms.options.js';

/**
 * SmsModule options from environment variables: HUBTEL_SMS_CLIENT_ID, HUBTEL_SMS_CLIENT_SECRET
 * (required; the SMS key pair, distinct from HUBTEL_CLIENT_ID/SECRET), HUBTEL_SMS_URL,
 * HUBTEL_SMS_SENDER_ID, HUBTEL_TIMEOUT_MS, HUBTEL_RETRY_*, HUBTEL_DEFAULT_COUNTRY_CODE.
 * `overrides` win over the environment (undefined overrides are ignored).
 *
 * ```ts
 * SmsModule.forRoot(smsOptionsFromEnv(process.env))
 * SmsModule.forRootAsync({
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => smsOptionsFromEnv((key) => config.get(key), { batchSize: 500 }),
 * })
 * ```
 * A missing variable fails at bootstrap, naming it.
 */
export function smsOptionsFromEnv(
  source: HubtelEnvSource = process.env,
  overrides: Partial<SmsModuleOptions> = {},
): SmsModuleOptions {
  const env = readHubtelEnv(source);
  const options: Partial<SmsModuleOptions> = {
    ...hubtelHttpOptionsFromEnv(env),
    ...dropUndefined({
      clientId: env.smsClientId,
      clientSecret: env.smsClientSecret,
      baseUrl: env.smsUrl,
      senderId: env.smsSenderId,
    }),
    ...dropUndefined(overrides),
  };
  if (options.clientId === undefined) {
    throw new HubtelConfigError(
      HUBTEL_ENV.smsClientId,
      'is not set (the SMS API client id, option sms.clientId)',
    );
  }
  if (options.clientSecret === undefined) {
    throw new HubtelConfigError(
      HUBTEL_ENV.smsClientSecret,
      'is not set (the SMS API client secret, option sms.clientSecret)',
    );
  }
  return options as SmsModuleOptions;
}
