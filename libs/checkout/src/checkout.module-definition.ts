import { ConfigurableModuleBuilder, type FactoryProvider, type ModuleMetadata } from '@nestjs/common';
import { type HubtelRouteOptions } from 'nestjs-hubtel';
import { mountController } from '#internal';
import { CheckoutCallbackController } from './checkout-callback.controller.js';
import { CHECKOUT_DEFAULT_CALLBACK_PATH, CHECKOUT_ROUTE } from './checkout.constants.js';
import type {
  CheckoutAccountOverrides,
  CheckoutModuleOptions,
  CheckoutRouteInfo,
} from './checkout.options.js';

/**
 * Extras of `forRoot`/`forRootAsync`: static, because Nest fixes routes before async options
 * resolve.
 */
export interface CheckoutModuleExtras {
  /** Register CheckoutService globally. Default false. */
  isGlobal?: boolean;
  /**
   * The web callback route of every account: `path` (default `hubtel/checkout/callback`; a named
   * account's callbacks come on `<path>/<name>`), class `decorators` (e.g. your `Public()`,
   * `SkipThrottle()`), extra `guards`, or `disabled: true` to mount it yourself and call
   * `CheckoutService.handleCallback`.
   */
  callback?: HubtelRouteOptions;
}

export const {
  ConfigurableModuleClass: CheckoutConfigurableModule,
  MODULE_OPTIONS_TOKEN: CHECKOUT_MODULE_OPTIONS,
  OPTIONS_TYPE: CHECKOUT_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: CHECKOUT_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<CheckoutModuleOptions>({ moduleName: 'HubtelCheckout' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createCheckoutOptions')
  .setExtras<CheckoutModuleExtras>({ isGlobal: false, callback: {} }, (definition, extras) => {
    const route = extras.callback ?? {};
    const info: CheckoutRouteInfo = {
      path: route.path ?? CHECKOUT_DEFAULT_CALLBACK_PATH,
      disabled: route.disabled === true,
    };
    // One controller for every account: it routes each request and checks that account's access.
    return {
      ...definition,
      global: extras.isGlobal,
      controllers: info.disabled
        ? []
        : [mountController(CheckoutCallbackController, CHECKOUT_DEFAULT_CALLBACK_PATH, route)],
      providers: [...(definition.providers ?? []), { provide: CHECKOUT_ROUTE, useValue: info }],
    };
  })
  .build();

/** `CheckoutModule.forRoot(...)` argument. */
export type CheckoutModuleForRootOptions = typeof CHECKOUT_OPTIONS_TYPE;
/** `CheckoutModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type CheckoutModuleAsyncOptions = typeof CHECKOUT_ASYNC_OPTIONS_TYPE;

/** `CheckoutModule.registerAccount(...)` argument: the account's name, its options, and module extras. */
export type CheckoutAccountOptions = CheckoutAccountOverrides & {
  /** The account's name (`north`): lower-case letters, digits, `-`, `_`; not `default`. */
  name: string;
  /** Make `@InjectCheckout(name)` work in every module, not only those importing this registration. */
  isGlobal?: boolean;
};

/** `CheckoutModule.registerAccountAsync(...)` argument. */
export interface CheckoutAccountAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  name: string;
  isGlobal?: boolean;
  inject?: FactoryProvider['inject'];
  /** The account's options (as `registerAccount` takes them, without `name`). */
  useFactory: (...args: never[]) => CheckoutAccountOverrides | Promise<CheckoutAccountOverrides>;
}
