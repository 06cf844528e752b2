import type { HttpService } from '@nestjs/axios';
import { Injectable } from '@nestjs/common';
import type { HubtelTelemetry } from 'nestjs-hubtel';
import {
  AccountRegistry,
  createHttpTransport,
  type HttpTransport,
  type HttpTransportConfig,
  type HubtelDefaultAccount,
} from '#internal';
import { SmsClient } from './sms.client.js';
import { SMS_DEFAULT_ACCOUNT, smsLoggerContext } from './sms.constants.js';
import { SmsUnknownAccountError } from './sms.errors.js';
import {
  SMS_OPTIONS_RECIPE,
  smsTransportConfig,
  type ResolvedSmsOptions,
  type SmsModuleOptions,
} from './sms.options.js';
import { accountTelemetry } from './sms.telemetry.js';
import type { SmsSender } from './sms.types.js';

/** Makes account `account`'s transport from its settings (`SMS_TRANSPORT_FACTORY`). */
export type SmsTransportFactory = (account: string, config: HttpTransportConfig) => HttpTransport;

/** What `SmsModule.forRoot` hands over: named accounts inherit from it. */
export interface SmsDefaultAccount extends HubtelDefaultAccount<SmsModuleOptions, ResolvedSmsOptions> {
  transport: HttpTransport;
  transportFor: SmsTransportFactory;
}

/** The default factory: the app's HTTP client, the account's own settings and log context. */
export function smsTransportFactory(http: HttpService, telemetry?: HubtelTelemetry): SmsTransportFactory {
  return (account, config) => createHttpTransport(http, { ...config, telemetry }, smsLoggerContext(account));
}

/** The application's SMS accounts, each with its own transport and key pair (health probes read each). */
@Injectable()
export class SmsAccounts extends AccountRegistry<SmsClient> {
  constructor() {
    super('sms', 'SmsModule.forRoot', (...args) => new SmsUnknownAccountError(...args));
  }

  /** Called by forRoot's module; a second forRoot in one application does not replace the first. */
  attach(defaults: SmsDefaultAccount): this {
    const { resolved, transport, telemetry } = defaults;
    return this.attachDefault({
      account: new SmsClient(SMS_DEFAULT_ACCOUNT, resolved, transport, telemetry),
      build: (name, overrides) => {
        const options = SMS_OPTIONS_RECIPE.resolveAccount(name, defaults.options, overrides);
        const own = defaults.transportFor(name, smsTransportConfig(options));
        return new SmsClient(name, options, own, telemetry && accountTelemetry(telemetry, name));
      },
      resolver: resolved.accounts,
    });
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
