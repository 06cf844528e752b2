import { Inject } from '@nestjs/common';
import { SMS_DEFAULT_ACCOUNT, getSmsAccountToken } from './sms.constants.js';
import { SmsService } from './sms.service.js';

/**
 * Injects the sender of an account: `@InjectSms('north') north: SmsSender`, registered with
 * `SmsModule.registerAccount({ name: 'north', ... })`. Without a name (or with `default`), the
 * default account's SmsService.
 */
export function InjectSms(account?: string): ReturnType<typeof Inject> {
  return Inject(
    account === undefined || account === SMS_DEFAULT_ACCOUNT ? SmsService : getSmsAccountToken(account),
  );
}
