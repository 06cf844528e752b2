import { ConfigurableModuleBuilder } from '@nestjs/common';
import { type HubtelRouteOptions } from 'nestjs-hubtel';
import { accessGuardNeeded, mountController } from '#internal';
import { CheckoutAccessGuard, CheckoutCallbackController } from './checkout-callback.controller.js';
import { CHECKOUT_DEFAULT_CALLBACK_PATH, CHECKOUT_ROUTE } from './checkout.constants.js';
import type { CheckoutModuleOptions, CheckoutRouteInfo } from './checkout.options.js';

/**
 * Extras of `forRoot`/`forRootAsync`: static, because Nest fixes routes before async options
 * resolve.
 */
export interface CheckoutModuleExtras {
  /** Register CheckoutService globally. Default false. */
  isGlobal?: boolean;
  /**
   * The web callback route: `path` (default `hubtel/checkout/callback`), class `decorators`
   * (e.g. your `Public()`, `SkipThrottle()`), extra `guards`, or `disabled: true` to mount it
   * yourself and call `CheckoutService.handleCallback`.
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
    // forRoot without access options needs no guard; forRootAsync may set them later: keep it.
    const guarded = accessGuardNeeded(definition, CHECKOUT_MODULE_OPTIONS, (options) => options.access);
    return {
      ...definition,
      global: extras.isGlobal,
      controllers: info.disabled
        ? []
        : [
            mountController(CheckoutCallbackController, CHECKOUT_DEFAULT_CALLBACK_PATH, route, {
              guard: CheckoutAccessGuard,
              needed: guarded,
            }),
          ],
      providers: [...(definition.providers ?? []), { provide: CHECKOUT_ROUTE, useValue: info }],
    };
  })
  .build();

/** `CheckoutModule.forRoot(...)` argument. */
export type CheckoutModuleForRootOptions = typeof CHECKOUT_OPTIONS_TYPE;
/** `CheckoutModule.forRootAsync(...)` argument (useFactory / useClass / useExisting, imports, inject). */
export type CheckoutModuleAsyncOptions = typeof CHECKOUT_ASYNC_OPTIONS_TYPE;
