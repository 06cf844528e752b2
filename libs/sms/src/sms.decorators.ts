import { Inject } from '@nestjs/common';
import { SMS_DEFAULT_ACCOUNT, getSmsAccountToken } from './sms.constants.js';
import { SmsService } from './sms.service.js';

/** Injects an account's sender: `@InjectSms('north') north: SmsSender`; none: the default's SmsService. */
export function InjectSms(account?: string): ReturnType<typeof Inject> {
  const named = account !== undefined && account !== SMS_DEFAULT_ACCOUNT;
  return Inject(named ? getSmsAccountToken(account) : SmsService);
}
