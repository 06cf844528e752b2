import { type HubtelEnvSource } from 'nestjs-hubtel';
import {
  HUBTEL_ENV,
  checkOptionsFromEnv,
  dropUndefined,
  hubtelHttpEnvVariables,
  hubtelHttpOptionsFromEnv,
  readHubtelEnv,
} from '#internal';
import { resolveSmsOptions, type SmsModuleOptions } from './sms.options.js';

/** The variable behind each option smsOptionsFromEnv reads (for errors naming it). */
const SMS_ENV_VARIABLES = {
  'sms.clientId': HUBTEL_ENV.smsClientId,
  'sms.clientSecret': HUBTEL_ENV.smsClientSecret,
  'sms.baseUrl': HUBTEL_ENV.smsUrl,
  'sms.senderId': HUBTEL_ENV.smsSenderId,
  ...hubtelHttpEnvVariables('sms'),
};

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
 * A missing or bad value of one of these variables fails here, naming the variable and the option.
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
  checkOptionsFromEnv(() => resolveSmsOptions(options as SmsModuleOptions), SMS_ENV_VARIABLES, overrides);
  return options as SmsModuleOptions;
}
