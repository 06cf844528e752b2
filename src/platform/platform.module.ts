import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { type HubtelEnvSource } from 'nestjs-hubtel';
import { checkoutOptionsFromEnv, type CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import { HubtelSandbox, SandboxModule } from 'nestjs-hubtel/sandbox';
import { serviceAppOptionsFromEnv, type ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { smsOptionsFromEnv, type SmsModuleOptions } from 'nestjs-hubtel/sms';
import { EXAMPLE_DEFAULTS, type ExampleAppConfig } from '../app.config.js';

/** Injection token of the `HubtelPlatform` the three modules are configured from. */
export const HUBTEL_PLATFORM = Symbol('EXAMPLE_HUBTEL_PLATFORM');

/** Where the platform is and how to reach it: the only thing that differs between sandbox and real mode. */
export interface HubtelPlatform {
  mode: 'sandbox' | 'hubtel';
  sms: SmsModuleOptions;
  checkout: CheckoutModuleOptions;
  serviceApp: ServiceAppModuleOptions;
  /** The sandbox, in sandbox mode. */
  sandbox?: HubtelSandbox;
}

/** The modules' options for a sandbox: its base URLs, credentials and POS Sales ID. */
export function sandboxPlatform(sandbox: HubtelSandbox, config: ExampleAppConfig): HubtelPlatform {
  const urls = sandbox.baseUrls();
  const { sms, api } = sandbox.credentials;
  return withOverrides(config, {
    mode: 'sandbox',
    sandbox,
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
  return withOverrides(config, {
    mode: 'hubtel',
    sms: smsOptionsFromEnv(env),
    checkout: checkoutOptionsFromEnv(env),
    serviceApp: serviceAppOptionsFromEnv(env),
  });
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
