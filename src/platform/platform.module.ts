import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { type HubtelEnvSource } from 'nestjs-hubtel';
import {
  checkoutAccountsFromEnv,
  type CheckoutAccountOverrides,
  type CheckoutModuleOptions,
} from 'nestjs-hubtel/checkout';
import { HubtelSandbox, SandboxModule, type SandboxAccountOptions } from 'nestjs-hubtel/sandbox';
import { serviceAppOptionsFromEnv, type ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { smsAccountsFromEnv, type SmsAccountOverrides, type SmsModuleOptions } from 'nestjs-hubtel/sms';
import { EXAMPLE_DEFAULTS, shopsOf, type ExampleAppConfig } from '../app.config.js';

/** Injection token of the `HubtelPlatform` the three modules are configured from. */
export const HUBTEL_PLATFORM = Symbol('EXAMPLE_HUBTEL_PLATFORM');

/** Where the platform is and how to reach it: the only thing that differs between sandbox and real mode. */
export interface HubtelPlatform {
  mode: 'sandbox' | 'hubtel';
  sms: SmsModuleOptions;
  checkout: CheckoutModuleOptions;
  serviceApp: ServiceAppModuleOptions;
  /** Each further shop's account: its checkout and SMS options (registerAccount's). */
  accounts: Record<string, { checkout: CheckoutAccountOverrides; sms: SmsAccountOverrides }>;
  /** The sandbox, in sandbox mode. */
  sandbox?: HubtelSandbox;
}

/** The modules' options for a sandbox: its base URLs, credentials and POS Sales ID. */
export function sandboxPlatform(sandbox: HubtelSandbox, config: ExampleAppConfig): HubtelPlatform {
  const urls = sandbox.baseUrls();
  const { sms, api } = sandbox.credentials;
  const accounts: HubtelPlatform['accounts'] = {};
  for (const shop of shopsOf(config)) {
    // The sandbox serves the shop's account with keys of its own (sandboxAccounts below).
    const account = sandbox.account(shop.account);
    accounts[shop.account] = {
      checkout: {
        ...account.credentials.api,
        posSalesId: account.posSalesId,
        merchantAccountNumber: account.posSalesId,
      },
      sms: {
        ...account.credentials.sms,
        ...(account.senderIds[0] ? { senderId: account.senderIds[0] } : {}),
      },
    };
  }
  return withOverrides(config, {
    mode: 'sandbox',
    sandbox,
    accounts,
    sms: { baseUrl: urls.sms, ...sms, senderId: EXAMPLE_DEFAULTS.sandboxSenderId },
    checkout: {
      ...api,
      baseUrls: { checkout: urls.checkout, status: urls.status },
      // With a POS Sales ID the module confirms every callback with the status check and
      // reconciles invoices whose callback never came, exactly as in production.
      posSalesId: sandbox.posSalesId,
      merchantAccountNumber: sandbox.posSalesId,
    },
    serviceApp: {
      callbackUrl: urls.fulfillmentCallback,
      // Each fulfillment request's payment is confirmed with the status check before the bundle
      // is delivered, exactly as in production (where HUBTEL_POS_SALES_ID turns it on).
      statusCheck: { ...api, posSalesId: sandbox.posSalesId, url: urls.status },
    },
  });
}

/** The modules' options for the real platform, from HUBTEL_* variables (the modules' own env pickers). */
export function hubtelPlatform(env: HubtelEnvSource, config: ExampleAppConfig): HubtelPlatform {
  const checkout = checkoutAccountsFromEnv(env);
  const sms = smsAccountsFromEnv(env);
  const accounts: HubtelPlatform['accounts'] = {};
  for (const { name, ...options } of checkout.accounts)
    accounts[name] = { checkout: options, sms: sms.accounts.find((a) => a.name === name)! };
  return withOverrides(config, {
    mode: 'hubtel',
    sms: sms.default,
    checkout: checkout.default,
    serviceApp: serviceAppOptionsFromEnv(env),
    accounts,
  });
}

/** The sandbox's further accounts: one per further shop, its sender id and merchant name its own. */
export function sandboxAccounts(
  shops: ReadonlyArray<{ account: string; name: string }>,
): SandboxAccountOptions[] {
  return shops.map((shop) => ({
    name: shop.account,
    merchantName: shop.name,
    ...(shop.account === EXAMPLE_DEFAULTS.secondShop.account
      ? { senderIds: [EXAMPLE_DEFAULTS.secondShop.sandboxSenderId] }
      : {}),
  }));
}

function withOverrides(config: ExampleAppConfig, platform: HubtelPlatform): HubtelPlatform {
  const o = config.overrides ?? {};
  return {
    ...platform,
    sms: { ...platform.sms, ...o.sms },
    checkout: { ...platform.checkout, ...o.checkout },
    serviceApp: { ...platform.serviceApp, ...o.serviceApp },
  };
}

/**
 * Provides `HUBTEL_PLATFORM` (and, in sandbox mode, `HubtelSandbox`) to the whole app, so the
 * modules' `forRootAsync` factories can inject it.
 */
@Module({})
export class PlatformModule {
  static forRoot(config: ExampleAppConfig): DynamicModule {
    const platform = config.platform;
    if (platform.kind === 'hubtel') {
      return {
        module: PlatformModule,
        global: true,
        providers: [{ provide: HUBTEL_PLATFORM, useFactory: () => hubtelPlatform(platform.env, config) }],
        exports: [HUBTEL_PLATFORM],
      };
    }
    const fromSandbox: Provider = {
      provide: HUBTEL_PLATFORM,
      inject: [HubtelSandbox],
      useFactory: (sandbox: HubtelSandbox) => sandboxPlatform(sandbox, config),
    };
    if (platform.instance) {
      // The caller's sandbox (a test's): used, never stopped by the app.
      return {
        module: PlatformModule,
        global: true,
        providers: [{ provide: HubtelSandbox, useValue: platform.instance }, fromSandbox],
        exports: [HUBTEL_PLATFORM, HubtelSandbox],
      };
    }
    // The embedded sandbox starts while the app bootstraps and stops when it closes.
    const sandboxModule = SandboxModule.forRoot({
      // Each shop's account sends its receipts from its own sender only.
      sms: { senderIds: [EXAMPLE_DEFAULTS.sandboxSenderId] },
      accounts: sandboxAccounts(shopsOf(config)),
      port: platform.port ?? 0,
      host: platform.host ?? EXAMPLE_DEFAULTS.host,
      ...(platform.publicUrl === undefined ? {} : { publicUrl: platform.publicUrl }),
    });
    return {
      module: PlatformModule,
      global: true,
      imports: [sandboxModule],
      providers: [fromSandbox],
      exports: [HUBTEL_PLATFORM, sandboxModule],
    };
  }
}
