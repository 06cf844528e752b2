import type { ModuleMetadata } from '@nestjs/common';
import { HubtelConfigError, readEnvValue, type HubtelEnvSource } from 'nestjs-hubtel';
import type { CheckoutModuleOptions } from 'nestjs-hubtel/checkout';
import type { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import type { ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import type { SmsModuleOptions } from 'nestjs-hubtel/sms';

/*
 * The example app's configuration. Two ways to run it, and nothing else differs between them:
 *   - sandbox (default): an embedded HubtelSandbox plays the platform, zero configuration;
 *   - hubtel: the real platform, when HUBTEL_CLIENT_ID (or any other platform credential) is set.
 */

/**
 * A bad or missing environment variable of the example app itself (PORT, OPS_PORT, REDIS_URL, ...):
 * said in those terms, not as a nestjs-hubtel option. `instanceof HubtelConfigError`, so one catch
 * serves both; `option` is the variable.
 */
export class ExampleEnvError extends HubtelConfigError {
  constructor(variable: string, problem: string) {
    super(variable, problem);
    this.message = `Invalid environment variable ${variable}: ${problem}`;
  }
}

export const EXAMPLE_DEFAULTS = Object.freeze({
  port: 3000,
  host: '127.0.0.1',
  shopName: 'Adinkra Goods',
  /** Sender id of the SMS receipts in sandbox mode (at most 11 characters). */
  sandboxSenderId: 'Adinkra',
  /**
   * The second shop of sandbox mode: a second Hubtel account (its own keys, POS Sales ID and SMS
   * sender), served by the same app. Against the real platform, HUBTEL_ACCOUNTS names the others.
   */
  secondShop: Object.freeze({ account: 'kumasi', name: 'Kumasi Crafts', sandboxSenderId: 'KumasiCraft' }),
  /** A request's headers within 10 s, the whole request (body included) within 30 s. */
  timeouts: Object.freeze({ headersMs: 10_000, requestMs: 30_000 }),
  /**
   * `POST /orders` per minute, per client address and for all clients together (per instance):
   * each order is an invoice at the platform and status checks later, so a script must not place
   * them by the thousand.
   */
  orderLimits: Object.freeze({ perClientPerMinute: 10, perMinute: 600 }),
});

/** Run against a HubtelSandbox: one the app starts (port/host) or one the caller owns (`instance`). */
export interface SandboxPlatformConfig {
  kind: 'sandbox';
  /** An already started sandbox (tests): the app uses it and does not stop it. */
  instance?: HubtelSandbox;
  /** Port of the embedded sandbox. Default 0 (a free port, printed at start-up). */
  port?: number;
  /**
   * Interface the embedded sandbox binds (SANDBOX_HOST). Default 127.0.0.1, whatever HOST says:
   * its admin API can pay any invoice, so it is reachable from elsewhere only when asked for.
   */
  host?: string;
  /** Address of the sandbox as browsers reach it, when not http://host:port. */
  publicUrl?: string;
}

/** Run against the real platform, with credentials and URLs from `env` (HUBTEL_*). */
export interface HubtelPlatformConfig {
  kind: 'hubtel';
  env: HubtelEnvSource;
}

/** What a Nest module may import. */
export type ModuleImports = NonNullable<ModuleMetadata['imports']>;

export interface ExampleAppConfig {
  /** PORT: where the app listens. 0 picks a free port. */
  port: number;
  /** HOST: the interface it listens on. */
  host: string;
  /**
   * PUBLIC_URL: the app's address as the platform and browsers reach it (callback, return and
   * cancellation URLs are built on it). Default: the address it listens on.
   */
  publicUrl?: string;
  platform: SandboxPlatformConfig | HubtelPlatformConfig;
  /**
   * REDIS_URL: keep every record (the modules' and the shop's own orders) in this Redis, so
   * restarts lose nothing and several replicas serve one shop. Default: in memory, this process only.
   */
  redisUrl?: string;
  /**
   * REDIS_CLUSTER_NODES (`host:port,host:port,...`, some nodes of a Redis Cluster): the same, on a
   * cluster. Not with REDIS_URL; a REDIS_URL at one node of a cluster is refused at startup.
   */
  redisClusterNodes?: Array<{ host: string; port: number }>;
  shopName: string;
  /**
   * Further shops, one per further Hubtel account (`account`: its name in the modules'
   * registerAccount and in HUBTEL_ACCOUNTS). Default: see shopsOf (a sandbox's further accounts).
   */
  shops?: ReadonlyArray<{ account: string; name: string }>;
  /**
   * The HTTP server's time-outs, so a client that sends its request slowly (a byte at a time)
   * cannot hold a connection for Node's default 300 s. Default EXAMPLE_DEFAULTS.timeouts.
   */
  timeouts?: { headersMs?: number; requestMs?: number };
  /**
   * OPS_PORT / OPS_HOST: where `GET /health` and `GET /metrics` are served, apart from the shop
   * (scrapers and probes reach it; the public does not). Default port 0 (a free one; from the
   * environment: PORT + 1), host 127.0.0.1.
   */
  ops?: { port?: number; host?: string };
  /** ORDERS_PER_CLIENT_PER_MINUTE / ORDERS_PER_MINUTE. Default EXAMPLE_DEFAULTS.orderLimits. */
  orderLimits?: { perClientPerMinute?: number; perMinute?: number };
  /**
   * Module options laid over what the platform choice gives (tests shorten retry delays and the
   * reconciliation schedule here). Top-level keys replace, they are not merged deeply.
   */
  /** Modules the embedding app adds beside the example's own (a test's event recorder, say). */
  imports?: ModuleImports;
  overrides?: {
    sms?: Partial<SmsModuleOptions>;
    checkout?: Partial<CheckoutModuleOptions>;
    serviceApp?: Partial<ServiceAppModuleOptions>;
  };
}

/** Variables whose presence switches the app to the real platform. */
export const REAL_PLATFORM_VARIABLES = [
  'HUBTEL_CLIENT_ID',
  'HUBTEL_CLIENT_SECRET',
  'HUBTEL_SMS_CLIENT_ID',
  'HUBTEL_SMS_CLIENT_SECRET',
] as const;

/** What the real platform needs besides the credentials: the platform must reach us, and SMS needs an approved sender id. */
export const REAL_PLATFORM_REQUIRED = [
  ...REAL_PLATFORM_VARIABLES,
  'HUBTEL_SMS_SENDER_ID',
  'PUBLIC_URL',
] as const;

function readPort(env: HubtelEnvSource, key: string, fallback: number): number {
  const raw = readEnvValue(env, key);
  if (raw === undefined) return fallback;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65_535)
    throw new ExampleEnvError(key, `must be a port number from 0 to 65535, got "${raw.slice(0, 20)}"`);
  return Number(raw);
}

function readCount(env: HubtelEnvSource, key: string): number | undefined {
  const raw = readEnvValue(env, key);
  if (raw === undefined) return undefined;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1)
    throw new ExampleEnvError(key, `must be a whole number from 1, got "${raw.slice(0, 20)}"`);
  return Number(raw);
}

function readUrl(env: HubtelEnvSource, key: string): string | undefined {
  const raw = readEnvValue(env, key);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ExampleEnvError(key, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ExampleEnvError(key, 'must be an absolute http(s) URL');
  if (url.search || url.hash) throw new ExampleEnvError(key, 'must not have a query or fragment');
  return raw.replace(/\/+$/, '');
}

/** `redis://` or `rediss://` (TLS), with host, optional `user:password@`, port and `/db`. */
function readRedisUrl(env: HubtelEnvSource): string | undefined {
  const raw = readEnvValue(env, 'REDIS_URL');
  if (raw === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  // The value is not echoed: it may hold the password.
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '')
    throw new ExampleEnvError(
      'REDIS_URL',
      'must be a Redis URL such as redis://127.0.0.1:6379 or rediss://:password@host:6380/0',
    );
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname))
    throw new ExampleEnvError('REDIS_URL', 'may end with a database number (/0 to /99), nothing else');
  return raw;
}

/** `host:port,host:port,...` (IPv6 hosts in brackets: `[::1]:7000`). */
function readRedisClusterNodes(env: HubtelEnvSource): Array<{ host: string; port: number }> | undefined {
  const raw = readEnvValue(env, 'REDIS_CLUSTER_NODES');
  if (raw === undefined) return undefined;
  const nodes = raw.split(',').map((part) => {
    const match = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(part);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65_535)
      throw new ExampleEnvError(
        'REDIS_CLUSTER_NODES',
        'must list host:port of some cluster nodes, comma-separated, e.g. 10.0.0.1:6379,10.0.0.2:6379',
      );
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
  return nodes;
}

/**
 * The configuration from environment variables:
 *   PORT (default 3000), HOST (default 127.0.0.1), PUBLIC_URL, SHOP_NAME,
 *   HUBTEL_ACCOUNTS, SHOP_NAME_<ACCOUNT> — a further shop per further Hubtel account (sandbox mode
 *   has a second one, EXAMPLE_DEFAULTS.secondShop: see shopsOf),
 *   SANDBOX_PORT (default 0: a free port), SANDBOX_HOST (default 127.0.0.1, not HOST),
 *   SANDBOX_PUBLIC_URL — sandbox mode;
 *   HUBTEL_CLIENT_ID, HUBTEL_CLIENT_SECRET, HUBTEL_SMS_CLIENT_ID, HUBTEL_SMS_CLIENT_SECRET,
 *   HUBTEL_SMS_SENDER_ID, PUBLIC_URL (all required once one credential is set) and the optional
 *   HUBTEL_POS_SALES_ID, HUBTEL_MERCHANT_ACCOUNT_NUMBER, HUBTEL_CALLBACK_URL, HUBTEL_*_URL,
 *   HUBTEL_TIMEOUT_MS, HUBTEL_RETRY_* — real platform;
 *   REDIS_URL — either mode: every record in Redis instead of this process's memory;
 *   REDIS_CLUSTER_NODES — the same on a Redis Cluster (host:port,host:port,...; not with REDIS_URL);
 *   OPS_PORT (default PORT + 1; 0 with PORT=0), OPS_HOST (default 127.0.0.1) — /health and /metrics;
 *   ORDERS_PER_CLIENT_PER_MINUTE (default 10), ORDERS_PER_MINUTE (default 600) — POST /orders.
 * A bad or missing value throws an ExampleEnvError naming the variable.
 */
export function exampleConfigFromEnv(env: HubtelEnvSource = process.env): ExampleAppConfig {
  const port = readPort(env, 'PORT', EXAMPLE_DEFAULTS.port);
  const host = readEnvValue(env, 'HOST') ?? EXAMPLE_DEFAULTS.host;
  const publicUrl = readUrl(env, 'PUBLIC_URL');
  const shopName = readEnvValue(env, 'SHOP_NAME') ?? EXAMPLE_DEFAULTS.shopName;
  const redisUrl = readRedisUrl(env);
  const redisClusterNodes = readRedisClusterNodes(env);
  if (redisUrl !== undefined && redisClusterNodes !== undefined)
    throw new ExampleEnvError(
      'REDIS_CLUSTER_NODES',
      'is set with REDIS_URL: set one (REDIS_CLUSTER_NODES for a Redis Cluster, REDIS_URL for one Redis)',
    );
  const store =
    redisUrl !== undefined ? { redisUrl } : redisClusterNodes !== undefined ? { redisClusterNodes } : {};
  // Next to the shop's port by default; a free one when the shop's is picked freely (tests).
  const ops = {
    port: readPort(env, 'OPS_PORT', port === 0 || port === 65_535 ? 0 : port + 1),
    host: readEnvValue(env, 'OPS_HOST') ?? EXAMPLE_DEFAULTS.host,
  };
  const perClient = readCount(env, 'ORDERS_PER_CLIENT_PER_MINUTE');
  const perMinute = readCount(env, 'ORDERS_PER_MINUTE');
  const limits = {
    ops,
    orderLimits: {
      ...(perClient === undefined ? {} : { perClientPerMinute: perClient }),
      ...(perMinute === undefined ? {} : { perMinute }),
    },
  };

  const real = REAL_PLATFORM_VARIABLES.filter((key) => readEnvValue(env, key) !== undefined);
  if (real.length === 0) {
    const sandboxPublicUrl = readUrl(env, 'SANDBOX_PUBLIC_URL');
    return {
      port,
      host,
      shopName,
      ...store,
      ...limits,
      ...(publicUrl === undefined ? {} : { publicUrl }),
      platform: {
        kind: 'sandbox',
        port: readPort(env, 'SANDBOX_PORT', 0),
        // Not HOST: HOST=0.0.0.0 opens the shop to the network, not the sandbox's admin API.
        host: readEnvValue(env, 'SANDBOX_HOST') ?? EXAMPLE_DEFAULTS.host,
        ...(sandboxPublicUrl === undefined ? {} : { publicUrl: sandboxPublicUrl }),
      },
    };
  }
  const missing = REAL_PLATFORM_REQUIRED.filter((key) => readEnvValue(env, key) === undefined);
  if (missing.length > 0) {
    throw new ExampleEnvError(
      missing[0]!,
      `is not set. ${real.join(', ')} ${real.length === 1 ? 'is' : 'are'} set, so the app runs against the real platform, which also needs: ${missing.join(', ')}. Unset every HUBTEL_* credential to run against the embedded sandbox instead.`,
    );
  }
  // One shop per further account of HUBTEL_ACCOUNTS (the modules check the names and read each
  // account's HUBTEL_<NAME>_* variables); SHOP_NAME_<NAME> names its shop.
  const shops = (readEnvValue(env, 'HUBTEL_ACCOUNTS') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((account) => ({
      account,
      name: readEnvValue(env, `SHOP_NAME_${account.toUpperCase().replace(/-/g, '_')}`) ?? account,
    }));
  return {
    port,
    host,
    shopName,
    ...(shops.length > 0 ? { shops } : {}),
    publicUrl,
    ...store,
    ...limits,
    platform: { kind: 'hubtel', env },
  };
}

/**
 * The app's further shops: `shops` when given; else, against a sandbox, one per further account it
 * serves (the embedded sandbox serves EXAMPLE_DEFAULTS.secondShop's; a caller's sandbox, its own).
 */
export function shopsOf(config: ExampleAppConfig): ReadonlyArray<{ account: string; name: string }> {
  if (config.shops) return config.shops;
  if (config.platform.kind !== 'sandbox') return [];
  const { instance } = config.platform;
  if (!instance)
    return [{ account: EXAMPLE_DEFAULTS.secondShop.account, name: EXAMPLE_DEFAULTS.secondShop.name }];
  return instance
    .accounts()
    .slice(1)
    .map((account) => ({ account: account.name, name: account.merchantName }));
}
