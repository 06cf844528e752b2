import { type HubtelStore, type JobRunner } from 'nestjs-hubtel';

/** `HubtelHealthModule.forRoot(...)` options. */
export interface HubtelHealthModuleOptions {
  /**
   * The stores to check. Default: every HubtelStore the app's providers hold (the app-wide one of
   * HubtelRedisModule, a module's own `store` option, the in-memory defaults).
   */
  stores?: HubtelStore[];
  /** The job runner to check. Default: the app's `HUBTEL_JOB_RUNNER` (HubtelBullmqModule), if any. */
  runner?: JobRunner;
  /** A store or runner check that has not answered after this long is down. Default 1000 ms. */
  timeoutMs?: number;
  /**
   * Also probe the platform: one GET to the base URL of every API the modules call, through their
   * own transport (credentials, proxy, time-out), with no retry. Down on a connection error or a
   * time-out; any HTTP answer (a 404 or 401 included) means it is reachable. Off by default: a
   * readiness check that depends on a third party takes every replica out at once when it blips.
   */
  platform?: boolean | { timeoutMs?: number };
}
