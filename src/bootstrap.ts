import type { AddressInfo } from 'node:net';
import type { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HubtelRedisConfigError } from 'nestjs-hubtel';
import { CHECKOUT_DEFAULT_CALLBACK_PATH } from 'nestjs-hubtel/checkout';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { EXAMPLE_DEFAULTS, ExampleEnvError, type ExampleAppConfig } from './app.config.js';
import { AppModule } from './app.module.js';
import { OperationsHttpModule } from './ops/operations.module.js';
import { AppUrls } from './platform/app-urls.service.js';
import { applyHttpSecurity, setServerTimeouts } from './platform/http-security.js';
import { portHolder } from './platform/port-holder.js';
import { StoreInfo } from './platform/store.module.js';
import { ShopSettings } from './shop/shop.settings.js';

export interface ExampleApp {
  app: INestApplication;
  mode: 'sandbox' | 'hubtel';
  /** Where it listens (`http://127.0.0.1:3000`). */
  url: string;
  /** Where `/health` and `/metrics` are served (OPS_PORT), apart from the shop. */
  opsUrl: string;
  /** Its public address (PUBLIC_URL, or `url`). */
  publicUrl: string;
  /** The sandbox it runs against, in sandbox mode. */
  sandbox?: HubtelSandbox;
  /** The addresses to show a person. */
  addresses: ExampleAddresses;
  /** Where records are kept: memory, or Redis (URL with the password masked). */
  store: StoreInfo;
  /** Stops the app (and the embedded sandbox). */
  close(): Promise<void>;
}

export interface ExampleAddresses {
  shop: string;
  /** The further shops (each on its own Hubtel account), when there are some. */
  otherShops?: Array<{ name: string; account: string; url: string; checkoutCallback: string }>;
  simulator?: string;
  serviceFlow: string;
  fulfillment: string;
  checkoutCallback: string;
  sandbox?: string;
  /** The sandbox's dashboard: messages sent, invoices, callbacks, sessions, live. */
  sandboxDashboard?: string;
}

export interface StartOptions {
  /** Nest's logger setting (`false` for none, as in tests). Default: Nest's console logger. */
  logger?: LoggerService | LogLevel[] | false;
}

/** Builds the app, starts the embedded sandbox (sandbox mode) and listens on `config.port`. */
export async function startExampleApp(
  config: ExampleAppConfig,
  options: StartOptions = {},
): Promise<ExampleApp> {
  // abortOnError false: a bad option must reject here (and say which), not kill the process.
  const app = await NestFactory.create(AppModule.forRoot(config), {
    abortOnError: false,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  }).catch((error: unknown) => {
    throw inTermsOfTheEnvironment(error);
  });
  try {
    applyHttpSecurity(app);
    setServerTimeouts(app.getHttpServer(), { ...EXAMPLE_DEFAULTS.timeouts, ...config.timeouts });
    await app.listen(config.port, config.host);
  } catch (error) {
    await app.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new ExampleEnvError(
        'PORT',
        `${await inUse(config.port, config.host)}; set PORT to another port (0 picks a free one). ` +
          'Several copies on one host need each its own PORT and OPS_PORT (/health and /metrics; default PORT + 1)',
      );
    throw error;
  }
  let ops: INestApplication;
  try {
    ops = await listenOperations(app, config, options);
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.getHttpServer().address() as AddressInfo;
  const opsAddress = ops.getHttpServer().address() as AddressInfo;
  const opsUrl = `http://${hostForUrl(config.ops?.host ?? EXAMPLE_DEFAULTS.host)}:${opsAddress.port}`;
  const url = `http://${hostForUrl(config.host)}:${address.port}`;
  const publicUrl = (config.publicUrl ?? url).replace(/\/+$/, '');
  app.get(AppUrls).set(publicUrl, url);
  const sandbox = config.platform.kind === 'sandbox' ? app.get(HubtelSandbox) : undefined;
  const otherShops = app
    .get(ShopSettings)
    .shops.filter((shop) => shop.path !== '/')
    .map((shop) => ({
      name: shop.name,
      account: shop.account,
      url: `${publicUrl}${shop.path}`,
      checkoutCallback: `${publicUrl}/${CHECKOUT_DEFAULT_CALLBACK_PATH}/${shop.account}`,
    }));
  const addresses: ExampleAddresses = {
    shop: `${publicUrl}/`,
    ...(otherShops.length > 0 ? { otherShops } : {}),
    serviceFlow: `${publicUrl}/api/service-flow`,
    fulfillment: `${publicUrl}/api/fulfillment`,
    checkoutCallback: `${publicUrl}/${CHECKOUT_DEFAULT_CALLBACK_PATH}`,
    ...(sandbox
      ? {
          simulator: `${publicUrl}/simulator`,
          sandbox: sandbox.url,
          ...(sandbox.dashboardUrl ? { sandboxDashboard: sandbox.dashboardUrl } : {}),
        }
      : {}),
  };
  return {
    app,
    mode: config.platform.kind,
    url,
    opsUrl,
    publicUrl,
    sandbox,
    addresses,
    store: app.get(StoreInfo),
    close: async () => {
      await ops.close();
      await app.close();
    },
  };
}

/**
 * The store and runner name their own options (`redis.url`); a person starting the app set an
 * environment variable, so a REDIS_URL at one node of a cluster is said in those terms.
 */
function inTermsOfTheEnvironment(error: unknown): unknown {
  if (error instanceof HubtelRedisConfigError && error.reason === 'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT') {
    return new HubtelRedisConfigError(
      'REDIS_URL',
      error.reason,
      'points at one node of a Redis Cluster (most keys would answer MOVED): set REDIS_CLUSTER_NODES=host:port,host:port,... to some of its nodes instead, and unset REDIS_URL',
    );
  }
  return error;
}

/** The operations app on OPS_PORT: the shop's `/health` and `/metrics`, nothing else. */
async function listenOperations(
  shop: INestApplication,
  config: ExampleAppConfig,
  options: StartOptions,
): Promise<INestApplication> {
  const port = config.ops?.port ?? 0;
  const host = config.ops?.host ?? EXAMPLE_DEFAULTS.host;
  const ops = await NestFactory.create(OperationsHttpModule.forRoot(shop), {
    abortOnError: false,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  try {
    applyHttpSecurity(ops);
    setServerTimeouts(ops.getHttpServer(), { ...EXAMPLE_DEFAULTS.timeouts, ...config.timeouts });
    await ops.listen(port, host);
  } catch (error) {
    await ops.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new ExampleEnvError(
        'OPS_PORT',
        `${await inUse(port, host)}; set OPS_PORT to another port (0 picks a free one; the default is PORT + 1)`,
      );
    throw error;
  }
  return ops;
}

/** `3002 is already in use on 127.0.0.1 (by process 4242 (node dist/app/main.js))`: who, when this host can tell. */
async function inUse(port: number, host: string): Promise<string> {
  const holder = await portHolder(port);
  return `${port} is already in use on ${host}${holder ? ` (by ${holder})` : ''}`;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
