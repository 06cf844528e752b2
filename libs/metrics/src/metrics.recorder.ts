import { Counter, Histogram, register, type Metric, type Registry } from 'prom-client';
import { HubtelConfigError, type HubtelSignal, type HubtelTelemetry } from 'nestjs-hubtel';

/** `HubtelMetricsModule.forRoot(...)` options. */
export interface HubtelMetricsModuleOptions {
  /** Where the metrics are registered. Default: prom-client's global registry (`register`). */
  registry?: Registry;
  /** Put in front of every metric name (`[a-zA-Z_:][a-zA-Z0-9_:]*`, or ''). Default `hubtel_`. */
  prefix?: string;
  /** Latency buckets (seconds) of calls to the platform. */
  platformBuckets?: number[];
  /** Latency buckets (seconds) of service-flow steps. */
  serviceFlowBuckets?: number[];
}

export const METRICS_DEFAULTS = Object.freeze({
  prefix: 'hubtel_',
  /** Up to the platform calls' default time-out, 15 s. */
  platformBuckets: Object.freeze([0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15]),
  /** Up to the about 5 s the platform waits for a service-flow answer. */
  serviceFlowBuckets: Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]),
});

/**
 * The suite's signals as Prometheus metrics (docs/operations.md lists them). Label values come from
 * code or configuration, never a request, so series stay bounded; same-named metrics are reused.
 */
export class HubtelMetrics implements HubtelTelemetry {
  readonly registry: Registry;
  private readonly m: ReturnType<typeof buildMetrics>;

  constructor(options: HubtelMetricsModuleOptions = {}) {
    this.registry = options.registry ?? register;
    this.m = buildMetrics(this.registry, options);
  }

  /** The registry's content type, for a `/metrics` answer. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The registry in Prometheus text format (what `/metrics` answers). */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }

  record(signal: HubtelSignal): void {
    switch (signal.kind) {
      case 'inbound': {
        // A known account (configured or resolved), never a name made up in a request.
        const labels = { source: signal.source, account: signal.account ?? 'none' };
        this.m.received.inc(labels);
        if (signal.outcome === 'accepted') this.m.accepted.inc(labels);
        else if (signal.outcome === 'duplicate') this.m.duplicates.inc(labels);
        else if (signal.outcome === 'ignored') this.m.ignored.inc(labels);
        else this.m.rejected.inc({ ...labels, reason: signal.reason ?? 'unknown' });
        return;
      }
      case 'handler': {
        const labels = { pipeline: signal.pipeline, job: signal.job, handler: signal.handler };
        this.m.handlerRuns.inc(labels);
        if (!signal.ok) this.m.handlerFailures.inc(labels);
        return;
      }
      case 'job': {
        const labels = { pipeline: signal.pipeline, job: signal.job };
        if (signal.outcome === 'retry') this.m.retries.inc(labels);
        else if (signal.outcome === 'dead') this.m.deadLetters.inc(labels);
        else this.m.jobsDone.inc(labels);
        return;
      }
      case 'sms': {
        const account = signal.account ?? 'default';
        const failed = signal.failed - signal.unknownOutcome;
        if (signal.sent > 0) this.m.smsRecipients.inc({ account, outcome: 'sent' }, signal.sent);
        if (failed > 0) this.m.smsRecipients.inc({ account, outcome: 'failed' }, failed);
        if (signal.unknownOutcome > 0)
          this.m.smsRecipients.inc({ account, outcome: 'outcome_unknown' }, signal.unknownOutcome);
        return;
      }
      case 'fulfillment-callback': {
        const labels = { status: signal.status };
        if (signal.attempt > 1) this.m.callbackRetries.inc(labels);
        if (signal.ok) this.m.callbacksSent.inc(labels);
        else this.m.callbackFailures.inc(labels);
        return;
      }
      case 'service-flow':
        this.m.flowSteps.inc({ request: signal.request, response: signal.response });
        this.m.flowLatency.observe({ request: signal.request }, signal.durationMs / 1000);
        return;
      case 'outbound':
        this.m.platformRequests.inc({ api: signal.api, operation: signal.operation, status: signal.status });
        this.m.platformLatency.observe(
          { api: signal.api, operation: signal.operation },
          signal.durationMs / 1000,
        );
        return;
      case 'status-check-budget':
        this.m.statusChecksRefused.inc({ operation: signal.operation });
        return;
      case 'payment-attention':
        if (signal.outcome === 'opened')
          this.m.attention.inc({ source: signal.source, account: signal.account, reason: signal.reason });
        else {
          const { source, account, outcome: resolution } = signal;
          this.m.attentionResolved.inc({ source, account, resolution });
        }
        return;
    }
  }
}

/** The suite's metrics, created on `registry` (or the ones already there under the same names). */
function buildMetrics(registry: Registry, options: HubtelMetricsModuleOptions) {
  const prefix = options.prefix ?? METRICS_DEFAULTS.prefix;
  if (typeof prefix !== 'string' || !/^([a-zA-Z_:][a-zA-Z0-9_:]*)?$/.test(prefix))
    throw new HubtelConfigError('metrics.prefix', 'must be empty or match [a-zA-Z_:][a-zA-Z0-9_:]*');
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> =>
    reuse(registry, prefix + name, (full) => new Counter<L>({ name: full, help, labelNames, registers: [] }));
  const histogram = <L extends string>(
    name: string,
    help: string,
    buckets: readonly number[],
    labelNames: readonly L[],
  ) =>
    reuse(
      registry,
      prefix + name,
      (full) => new Histogram<L>({ name: full, help, labelNames, buckets: [...buckets], registers: [] }),
    );

  const inbound = ['source', 'account'] as const;
  const handler = ['pipeline', 'job', 'handler'] as const;
  const job = ['pipeline', 'job'] as const;
  const fulfillment = 'Fulfillment callback';
  const platform = 'HTTP exchanges with the platform';
  return {
    received: counter('callbacks_received_total', 'Requests to the inbound endpoints', inbound),
    accepted: counter('callbacks_accepted_total', 'Inbound requests recorded for work', inbound),
    duplicates: counter('callbacks_duplicates_total', 'Inbound requests already recorded', inbound),
    ignored: counter('callbacks_ignored_total', 'Inbound requests with nothing to do', inbound),
    rejected: counter('callbacks_rejected_total', 'Inbound requests refused, by reason', [
      ...inbound,
      'reason',
    ]),
    handlerRuns: counter('handler_runs_total', 'Handler calls', handler),
    handlerFailures: counter('handler_failures_total', 'Handler calls that threw', handler),
    retries: counter('job_retries_total', 'Job attempts that failed and will run again', job),
    deadLetters: counter('dead_letters_total', 'Jobs that gave up (dead-lettered)', job),
    jobsDone: counter('jobs_done_total', 'Jobs done', job),
    smsRecipients: counter('sms_recipients_total', 'SMS recipients by account and outcome', [
      'account',
      'outcome',
    ]),
    callbacksSent: counter('fulfillment_callbacks_sent_total', `${fulfillment}s accepted`, ['status']),
    callbackFailures: counter('fulfillment_callback_failures_total', `${fulfillment} attempts not accepted`, [
      'status',
    ]),
    callbackRetries: counter('fulfillment_callback_retries_total', `${fulfillment} retries`, ['status']),
    flowSteps: counter('service_flow_steps_total', 'Service-flow steps', ['request', 'response']),
    flowLatency: histogram(
      'service_flow_step_duration_seconds',
      'Time to answer a service-flow step',
      options.serviceFlowBuckets ?? METRICS_DEFAULTS.serviceFlowBuckets,
      ['request'],
    ),
    platformRequests: counter('platform_requests_total', platform, ['api', 'operation', 'status']),
    platformLatency: histogram(
      'platform_request_duration_seconds',
      `Latency of ${platform}`,
      options.platformBuckets ?? METRICS_DEFAULTS.platformBuckets,
      ['api', 'operation'],
    ),
    statusChecksRefused: counter(
      'status_checks_refused_total',
      "Transaction status checks refused by the instance's budget (statusCheckBudget.perMinute), not sent",
      ['operation'],
    ),
    attention: counter(
      'payments_attention_total',
      'Verified payments that match their invoice or cart on neither count (amount, currency): kept for a person',
      ['source', 'account', 'reason'],
    ),
    attentionResolved: counter(
      'payments_attention_resolved_total',
      'Payments needing attention resolved from code (delivered anyway, or refunded)',
      ['source', 'account', 'resolution'],
    ),
  };
}

/** The registry's metric of that name if there is one (same type), else `create(name)`'s, registered. */
function reuse<M extends Metric>(registry: Registry, name: string, create: (name: string) => M): M {
  const existing = registry.getSingleMetric(name);
  const metric = create(name);
  if (existing) {
    if (existing.constructor !== metric.constructor)
      throw new HubtelConfigError(
        'metrics.prefix',
        `the registry already has a different metric named ${name}`,
      );
    return existing as M;
  }
  registry.registerMetric(metric);
  return metric;
}
