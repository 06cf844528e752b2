import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { CheckoutModule } from 'nestjs-hubtel/checkout';
import { ServiceAppModule } from 'nestjs-hubtel/service-app';
import { SmsModule } from 'nestjs-hubtel/sms';
import { EXAMPLE_DEFAULTS, shopsOf, type ExampleAppConfig } from './app.config.js';
import { BundleDeliveries } from './bundles/bundle-deliveries.service.js';
import { BundleFulfillment } from './bundles/bundle-fulfillment.listener.js';
import { DataBundleFlow } from './bundles/bundle.flow.js';
import { SimulatorController } from './bundles/simulator.controller.js';
import { AppUrls } from './platform/app-urls.service.js';
import { HUBTEL_PLATFORM, PlatformModule, type HubtelPlatform } from './platform/platform.module.js';
import { jobRunnerModules } from './platform/job-runner.modules.js';
import { OperationsModule } from './ops/operations.module.js';
import { StoreUnavailableFilter } from './platform/store-unavailable.filter.js';
import { AppStoreModule } from './platform/store.module.js';
import { OrdersService } from './shop/orders.service.js';
import { ORDER_LIMITS, OrdersRateLimitGuard } from './shop/orders.rate-limit.js';
import { ReceiptsListener } from './shop/receipts.listener.js';
import { ShopController } from './shop/shop.controller.js';
import { ShopSettings } from './shop/shop.settings.js';

/**
 * The example merchant app: a shop paid through Hubtel checkout with SMS receipts, and a
 * data-bundle programmable service. The three modules get their options from `HUBTEL_PLATFORM`
 * (the sandbox's, or the real platform's from HUBTEL_* variables): nothing else depends on where
 * the platform is. AppStoreModule decides where records are kept (memory, or Redis with REDIS_URL
 * or REDIS_CLUSTER_NODES), and jobRunnerModules where jobs run with it (this process, or BullMQ).
 */
@Module({})
export class AppModule {
  static forRoot(config: ExampleAppConfig): DynamicModule {
    const sandbox = config.platform.kind === 'sandbox';
    const limits = { ...EXAMPLE_DEFAULTS.orderLimits, ...config.orderLimits };
    return {
      module: AppModule,
      imports: [
        EventEmitterModule.forRoot(),
        // Health indicator and metrics (global); served on OPS_PORT, not here (see bootstrap.ts).
        OperationsModule.forRoot(),
        AppStoreModule.forRoot(config),
        ...jobRunnerModules(config),
        PlatformModule.forRoot(config),
        ...(config.imports ?? []),
        SmsModule.forRootAsync({
          inject: [HUBTEL_PLATFORM],
          useFactory: (platform: HubtelPlatform) => platform.sms,
        }),
        CheckoutModule.forRootAsync({
          inject: [HUBTEL_PLATFORM],
          useFactory: (platform: HubtelPlatform) => platform.checkout,
        }),
        // Each further shop sells through its own Hubtel account: its keys, POS Sales ID, SMS
        // sender; its callbacks come to the checkout route with its name after it.
        ...shopsOf(config).flatMap(({ account }) => [
          CheckoutModule.registerAccountAsync({
            name: account,
            inject: [HUBTEL_PLATFORM],
            useFactory: (platform: HubtelPlatform) => platform.accounts[account]!.checkout,
          }),
          SmsModule.registerAccountAsync({
            name: account,
            inject: [HUBTEL_PLATFORM],
            useFactory: (platform: HubtelPlatform) => platform.accounts[account]!.sms,
          }),
        ]),
        ServiceAppModule.forRootAsync({
          inject: [HUBTEL_PLATFORM],
          useFactory: (platform: HubtelPlatform) => platform.serviceApp,
        }),
      ],
      // The simulator drives the sandbox's client-app driver: there is none against the real platform.
      controllers: [ShopController, ...(sandbox ? [SimulatorController] : [])],
      providers: [
        { provide: APP_FILTER, useClass: StoreUnavailableFilter },
        AppUrls,
        {
          provide: ShopSettings,
          useValue: new ShopSettings(config.shopName, config.platform.kind, shopsOf(config)),
        },
        OrdersService,
        // POST /orders (ShopController): per client address, and for all clients together.
        { provide: ORDER_LIMITS, useValue: limits },
        OrdersRateLimitGuard,
        ReceiptsListener,
        DataBundleFlow,
        BundleDeliveries,
        BundleFulfillment,
      ],
    };
  }
}
