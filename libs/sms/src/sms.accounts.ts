import type { HttpService } from '@nestjs/axios';
import { Injectable } from '@nestjs/common';
import type { HubtelTelemetry } from 'nestjs-hubtel';
import {
  AccountRegistry,
  accountLoggerContext,
  HttpTransport,
  type HttpTransportConfig,
  type HubtelDefaultAccount,
} from '#internal';
import { SmsClient, type SmsSender } from './sms.client.js';
import { SMS_LOGGER_CONTEXT } from './sms.constants.js';
import { SmsUnknownAccountError } from './sms.errors.js';
import { smsTransportConfig, type ResolvedSmsOptions } from './sms.options.js';
import { accountTelemetry } from './sms.telemetry.js';

/** Makes account `account`'s transport from its settings (`SMS_TRANSPORT_FACTORY`). */
export type SmsTransportFactory = (account: string, config: HttpTransportConfig) => HttpTransport;

/** What `SmsModule.forRoot` hands over (named accounts inherit from it). */
export interface SmsDefaultAccount extends HubtelDefaultAccount<ResolvedSmsOptions> {
  transport: HttpTransport;
  transportFor: SmsTransportFactory;
}

/** The default factory: the app's HTTP client, the account's own settings and log context. */
export function smsTransportFactory(http: HttpService, telemetry?: HubtelTelemetry): SmsTransportFactory {
  return (account, config) =>
    new HttpTransport(http, {
      ...config,
      telemetry,
      loggerContext: accountLoggerContext(SMS_LOGGER_CONTEXT, account),
    });
}

/** Account `name` (not `default`): its own transport, from SMS_TRANSPORT_FACTORY, and telemetry label. */
export function namedSmsClient(d: SmsDefaultAccount, name: string, options: ResolvedSmsOptions): SmsClient {
  const { telemetry } = d;
  const transport = d.transportFor(name, smsTransportConfig(options));
  return new SmsClient(name, options, transport, telemetry && accountTelemetry(telemetry, name));
}

/** The application's SMS accounts, each with its own transport and key pair (health probes read each). */
@Injectable()
export class SmsAccounts extends AccountRegistry<SmsClient> {
  constructor() {
    super('sms', 'SmsModule.forRoot', (...args) => new SmsUnknownAccountError(...args));
  }

  /** A sender bound to `name`; its calls find the account first (and reject when there is none). */
  sender(name: string): SmsSender {
    const client = () => this.get(name);
    return {
      account: name,
      send: async (input) => (await client()).send(input),
      sendBatch: async (input) => (await client()).sendBatch(input),
      getMessageStatus: async (messageId) => (await client()).getMessageStatus(messageId),
      getBatchStatus: async (batchId) => (await client()).getBatchStatus(batchId),
    };
  }
}
