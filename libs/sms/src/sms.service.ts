import { Inject, Injectable, Optional } from '@nestjs/common';
import { HUBTEL_TELEMETRY, type HubtelTelemetry } from 'nestjs-hubtel';
import { type HttpTransport } from '#internal';
import type { SmsAccounts } from './sms.accounts.js';
import { SmsClient, type SmsSender } from './sms.client.js';
import { SMS_ACCOUNTS, SMS_DEFAULT_ACCOUNT, SMS_HTTP_TRANSPORT, SMS_OPTIONS } from './sms.constants.js';
import type { ResolvedSmsOptions } from './sms.options.js';

/** The SmsClient of the default account; any other account's through `forAccount(name)`. */
@Injectable()
export class SmsService extends SmsClient {
  constructor(
    @Inject(SMS_OPTIONS) options: ResolvedSmsOptions,
    @Inject(SMS_HTTP_TRANSPORT) transport: HttpTransport,
    @Inject(SMS_ACCOUNTS) private readonly accounts: SmsAccounts,
    @Optional() @Inject(HUBTEL_TELEMETRY) telemetry?: HubtelTelemetry,
  ) {
    super(SMS_DEFAULT_ACCOUNT, options, transport, telemetry);
  }

  /** The same methods for account `name`; an unknown name rejects (SmsUnknownAccountError), nothing sent. */
  forAccount(name: string): SmsSender {
    return name === SMS_DEFAULT_ACCOUNT ? this : this.accounts.sender(name);
  }
}
