import { ConfigurableModuleBuilder, Inject, Injectable } from '@nestjs/common';
import { DiscoveryService, ModuleRef } from '@nestjs/core';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import {
  HUBTEL_DEFAULT_ACCOUNT,
  HUBTEL_JOB_RUNNER,
  HubtelError,
  isHubtelStore,
  type HubtelApi,
  type HubtelStore,
  type HubtelStoreLoss,
  type JobRunner,
} from 'nestjs-hubtel';
import {
  ACCOUNT_TRANSPORTS,
  describeError,
  HttpTransport,
  hasAccountTransports,
  type HasAccountTransports,
  withTimeout,
} from '#internal';

/** `HubtelHealthModule.forRoot(...)` options. */
export interface HubtelHealthModuleOptions {
  /** The stores to check. Default: every HubtelStore the app's providers hold. */
  stores?: HubtelStore[];
  /** The job runner to check. Default: the app's `HUBTEL_JOB_RUNNER` (HubtelBullmqModule), if any. */
  runner?: JobRunner;
  /** A store or runner check that has not answered after this long is down. Default 1000 ms. */
  timeoutMs?: number;
  /**
   * Also probe the platform: one GET per API base URL through its transport, no retry; any HTTP answer
   * means reachable. Off by default: a readiness check on a third party takes every replica out at once.
   */
  platform?: boolean | { timeoutMs?: number };
}

export const HEALTH_DEFAULTS = Object.freeze({
  timeoutMs: 1_000,
  platformTimeoutMs: 2_000,
  keys: Object.freeze({ store: 'hubtel_store', runner: 'hubtel_runner', platform: 'hubtel_platform' }),
});

export const HEALTH_MODULE = new ConfigurableModuleBuilder<HubtelHealthModuleOptions>({
  moduleName: 'HubtelHealth',
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createHubtelHealthOptions')
  .build();

/** `HubtelHealthModule.forRoot(...)` argument. */
export type HubtelHealthModuleForRootOptions = typeof HEALTH_MODULE.OPTIONS_TYPE;
/** `HubtelHealthModule.forRootAsync(...)` argument. */
export type HubtelHealthModuleAsyncOptions = typeof HEALTH_MODULE.ASYNC_OPTIONS_TYPE;

/**
 * Terminus checks: `store()` (pings; down while a data loss is unacknowledged), `runner()` (its own
 * `health()`), opt-in `platform()` (one GET per API base URL, down only when nothing answers).
 */
@Injectable()
export class HubtelHealthIndicator {
  private found?: ReturnType<HubtelHealthIndicator['discover']>;

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly discovery: DiscoveryService,
    private readonly moduleRef: ModuleRef,
    @Inject(HEALTH_MODULE.MODULE_OPTIONS_TOKEN) private readonly options: HubtelHealthModuleOptions,
  ) {}

  /** For `HealthCheckService.check`: store and runner, and the platform when enabled (or call each). */
  checks(): Array<() => Promise<HealthIndicatorResult>> {
    const checks = [() => this.store(), () => this.runner()];
    if (this.options.platform) checks.push(() => this.platform());
    return checks;
  }

  async store(key: string = HEALTH_DEFAULTS.keys.store): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    const stores = this.dependencies().stores;
    const kinds = [...new Set(stores.map(kindOf))];
    try {
      await Promise.all(
        stores.map((store) => (store.ping ? this.bounded(store.ping(), `${kindOf(store)} ping`) : undefined)),
      );
    } catch (error) {
      return indicator.down({ stores: kinds, message: describeError(error) });
    }
    // The losses of data the stores noticed and no operator acknowledged yet.
    const losses: Array<HubtelStoreLoss | undefined> = await Promise.all(
      stores.map((store) => store.lostData && this.bounded(store.lostData(), `${kindOf(store)} loss check`)),
    ).catch(() => []);
    const lost = losses.filter(
      (loss): loss is HubtelStoreLoss => loss !== undefined && loss.acknowledgedAt === undefined,
    );
    if (lost.length > 0)
      return indicator.down({
        stores: kinds,
        lost: lost.map(({ message: _message, ...loss }) => loss),
        message: lost.map((loss) => loss.message).join(' '),
      });
    return indicator.up({ stores: kinds.length > 0 ? kinds : ['none'] });
  }

  async runner(key: string = HEALTH_DEFAULTS.keys.runner): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    const runner = this.dependencies().runner;
    if (!runner) return indicator.up({ runner: 'in-process' });
    const kind = kindOf(runner);
    if (!runner.health) return indicator.up({ runner: kind });
    try {
      const health = await this.bounded(runner.health(), `${kind} health`);
      const details = { runner: kind, ...health.details };
      return health.up ? indicator.up(details) : indicator.down(details);
    } catch (error) {
      return indicator.down({ runner: kind, message: describeError(error) });
    }
  }

  async platform(key: string = HEALTH_DEFAULTS.keys.platform): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    const setting = this.options.platform;
    const timeoutMs =
      (typeof setting === 'object' ? setting.timeoutMs : undefined) ?? HEALTH_DEFAULTS.platformTimeoutMs;
    const apis: Record<string, string> = {};
    const accounts: Record<string, Record<string, string>> = {};
    const probes = new Map<string, Promise<string>>();
    const worst = (states: Record<string, string>, api: string, state: string) => {
      states[api] = states[api] === 'unreachable' ? 'unreachable' : state;
    };
    const checks: Promise<void>[] = [];
    for (const [transport, owners] of await this.transportsByAccount())
      for (const api of ['sms', 'checkout', 'status', 'fulfillment'] as HubtelApi[]) {
        const base = transport.baseUrl(api);
        if (!base) continue;
        // One request per API and base URL, whichever accounts share it.
        const probeKey = `${api} ${base}`;
        if (!probes.has(probeKey)) probes.set(probeKey, probe(transport, api, timeoutMs));
        checks.push(
          probes.get(probeKey)!.then((state) => {
            worst(apis, api, state);
            for (const account of owners) worst((accounts[account] ??= {}), api, state);
          }),
        );
      }
    await Promise.all(checks);
    const down = Object.values(apis).includes('unreachable');
    // Per account only when there are several: a single-account app's answer stays as it was.
    const details: Record<string, unknown> = Object.keys(accounts).length > 1 ? { apis, accounts } : { apis };
    return down ? indicator.down(details) : indicator.up(details);
  }

  /** Every transport and the accounts it serves (the default accounts' and named ones built so far). */
  private async transportsByAccount(): Promise<Map<HttpTransport, Set<string>>> {
    const byTransport = new Map<HttpTransport, Set<string>>();
    const add = (transport: HttpTransport, account: string) =>
      byTransport.set(transport, (byTransport.get(transport) ?? new Set()).add(account));
    const { transports, accountSources } = this.dependencies();
    for (const source of accountSources)
      for (const { account, transport } of await source[ACCOUNT_TRANSPORTS]())
        if (transport instanceof HttpTransport) add(transport, account);
    for (const transport of transports)
      if (!byTransport.has(transport)) add(transport, HUBTEL_DEFAULT_ACCOUNT);
    return byTransport;
  }

  /** What the app holds, found once (providers do not change after bootstrap). */
  private dependencies(): NonNullable<HubtelHealthIndicator['found']> {
    return (this.found ??= this.discover());
  }

  private discover() {
    const stores = new Set<HubtelStore>(this.options.stores ?? []);
    const transports = new Set<HttpTransport>();
    const accountSources = new Set<HasAccountTransports>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.isDependencyTreeStatic() ? wrapper.instance : undefined;
      if (!instance || typeof instance !== 'object') continue;
      if (instance instanceof HttpTransport) transports.add(instance);
      else if (hasAccountTransports(instance)) accountSources.add(instance);
      else if (!this.options.stores && isHubtelStore(instance)) stores.add(instance);
    }
    let runner = this.options.runner;
    try {
      runner ??= this.moduleRef.get<JobRunner>(HUBTEL_JOB_RUNNER, { strict: false });
    } catch {
      // None provided: jobs run in this process.
    }
    return { stores: [...stores], runner, transports: [...transports], accountSources: [...accountSources] };
  }

  private bounded<T>(check: Promise<T>, what: string): Promise<T> {
    return withTimeout(check, this.options.timeoutMs ?? HEALTH_DEFAULTS.timeoutMs, what);
  }
}

const PROBE = { method: 'GET', path: '/', idempotent: true, operation: 'health.probe' } as const;

/** `reachable` on any HTTP answer, `unreachable` when none came (refused, DNS, time-out). */
async function probe(transport: HttpTransport, api: HubtelApi, timeoutMs: number): Promise<string> {
  try {
    await transport.request({ ...PROBE, api, timeoutMs, maxAttempts: 1 });
    return 'reachable';
  } catch (error) {
    const status = error instanceof HubtelError ? error.httpStatus : undefined;
    return status === undefined ? 'unreachable' : 'reachable';
  }
}

function kindOf(value: object): string {
  return value.constructor?.name || 'custom';
}
