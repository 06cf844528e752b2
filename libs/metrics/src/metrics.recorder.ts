import { Counter, Histogram, register, type Metric, type Registry } from 'prom-client';
import { HubtelConfigError, type HubtelSignal, type HubtelTelemetry } from 'nestjs-hubtel';
import { METRICS_DEFAULTS, type HubtelMetricsModuleOptions } from './metrics.options.js';

/**
 * The suite's signals as Prometheus metrics (docs/operations.md lists them). Label values come from
 * code or configuration, never a request, so series stay bounded; same-named metrics are reused.
 */
export class HubtelMetrics implements HubtelTelemetry {
  readonly registry: Registry;
  private readonly received: Counter<'source' | 'account'>;
  private readonly accepted: Counter<'source' | 'account'>;
  private readonly duplicates: Counter<'source' | 'account'>;
  private readonly ignored: Counter<'source' | 'account'>;
  private readonly rejected: Counter<'source' | 'account' | 'reason'>;
  private readonly handlerRuns: Counter<'pipeline' | 'job' | 'handler'>;
  private readonly handlerFailures: Counter<'pipeline' | 'job' | 'handler'>;
  private readonly retries: Counter<'pipeline' | 'job'>;
  private readonly deadLetters: Counter<'pipeline' | 'job'>;
  private readonly jobsDone: Counter<'pipeline' | 'job'>;
  private readonly smsRecipients: Counter<'account' | 'outcome'>;
  private readonly callbacksSent: Counter<'status'>;
  private readonly callbackFailures: Counter<'status'>;
  private readonly callbackRetries: Counter<'status'>;
  private readonly flowSteps: Counter<'request' | 'response'>;
  private readonly flowLatency: Histogram<'request'>;
  private readonly platformRequests: Counter<'api' | 'operation' | 'status'>;
  private readonly platformLatency: Histogram<'api' | 'operation'>;
  private readonly statusChecksRefused: Counter<'operation'>;
  private readonly attention: Counter<'source' | 'account' | 'reason'>;
  private readonly attentionResolved: Counter<'source' | 'account' | 'resolution'>;

  constructor(options: HubtelMetricsModuleOptions = {}) {
    this.registry = options.registry ?? register;
    const prefix = options.prefix ?? METRICS_DEFAULTS.prefix;
    if (typeof prefix !== 'string' || !/^([a-zA-Z_:][a-zA-Z0-9_:]*)?$/.test(prefix)) {
      throw new HubtelConfigError('metrics.prefix', 'must be empty or match [a-zA-Z_:][a-zA-Z0-9_:]*');
    }
    const counter = <L extends string>(name: string, help: string, ...labelNames: L[]): Counter<L> =>
      this.reuse(
        prefix + name,
        () => new Counter<L>({ name: prefix + name, help, labelNames, registers: [] }),
      );
    const histogram = <L extends string>(
      name: string,
      help: string,
      buckets: readonly number[],
      ...labelNames: L[]
    ): Histogram<L> =>
      this.reuse(
        prefix + name,
        () =>
          new Histogram<L>({ name: prefix + name, help, labelNames, buckets: [...buckets], registers: [] }),
      );

    const inbound = ['source', 'account'] as const;
    this.received = counter('callbacks_received_total', 'Requests to the inbound endpoints', ...inbound);
    this.accepted = counter('callbacks_accepted_total', 'Inbound requests recorded for work', ...inbound);
    this.duplicates = counter('callbacks_duplicates_total', 'Inbound requests already recorded', ...inbound);
    this.ignored = counter('callbacks_ignored_total', 'Inbound requests with nothing to do', ...inbound);
    const rejected = 'Inbound requests refused, by reason';
    this.rejected = counter('callbacks_rejected_total', rejected, ...inbound, 'reason');
    const handler = ['pipeline', 'job', 'handler'] as const;
    this.handlerRuns = counter('handler_runs_total', 'Handler calls', ...handler);
    this.handlerFailures = counter('handler_failures_total', 'Handler calls that threw', ...handler);
    const job = ['pipeline', 'job'] as const;
    this.retries = counter('job_retries_total', 'Job attempts that failed and will run again', ...job);
    this.deadLetters = counter('dead_letters_total', 'Jobs that gave up (dead-lettered)', ...job);
    this.jobsDone = counter('jobs_done_total', 'Jobs done', ...job);
    const sms = 'SMS recipients by account and outcome';
    this.smsRecipients = counter('sms_recipients_total', sms, 'account', 'outcome');
    const fulfillment = 'Fulfillment callback';
    this.callbacksSent = counter('fulfillment_callbacks_sent_total', `${fulfillment}s accepted`, 'status');
    const failures = `${fulfillment} attempts not accepted`;
    this.callbackFailures = counter('fulfillment_callback_failures_total', failures, 'status');
    this.callbackRetries = counter('fulfillment_callback_retries_total', `${fulfillment} retries`, 'status');
    this.flowSteps = counter('service_flow_steps_total', 'Service-flow steps', 'request', 'response');
    this.flowLatency = histogram(
      'service_flow_step_duration_seconds',
      'Time to answer a service-flow step',
      options.serviceFlowBuckets ?? METRICS_DEFAULTS.serviceFlowBuckets,
      'request',
    );
    const platform = 'HTTP exchanges with the platform';
    this.platformRequests = counter('platform_requests_total', platform, 'api', 'operation', 'status');
    this.platformLatency = histogram(
      'platform_request_duration_seconds',
      `Latency of ${platform}`,
      options.platformBuckets ?? METRICS_DEFAULTS.platformBuckets,
      'api',
      'operation',
    );
    this.statusChecksRefused = counter(
      'status_checks_refused_total',
      "Transaction status checks refused by the instance's budget (statusCheckBudget.perMinute), not sent",
      'operation',
    );
    this.attention = counter(
      'payments_attention_total',
      'Verified payments that match their invoice or cart on neither count (amount, currency): kept for a person',
      'source',
      'account',
      'reason',
    );
    this.attentionResolved = counter(
      'payments_attention_resolved_total',
      'Payments needing attention resolved from code (delivered anyway, or refunded)',
      'source',
      'account',
      'resolution',
    );
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
        this.received.inc(labels);
        if (signal.outcome === 'accepted') this.accepted.inc(labels);
        else if (signal.outcome === 'duplicate') this.duplicates.inc(labels);
        else if (signal.outcome === 'ignored') this.ignored.inc(labels);
        else this.rejected.inc({ ...labels, reason: signal.reason ?? 'unknown' });
        return;
      }
      case 'handler': {
        const labels = { pipeline: signal.pipeline, job: signal.job, handler: signal.handler };
        this.handlerRuns.inc(labels);
        if (!signal.ok) this.handlerFailures.inc(labels);
        return;
      }
      case 'job': {
        const labels = { pipeline: signal.pipeline, job: signal.job };
        if (signal.outcome === 'retry') this.retries.inc(labels);
        else if (signal.outcome === 'dead') this.deadLetters.inc(labels);
        else this.jobsDone.inc(labels);
        return;
      }
      case 'sms': {
        const account = signal.account ?? 'default';
        const failed = signal.failed - signal.unknownOutcome;
        if (signal.sent > 0) this.smsRecipients.inc({ account, outcome: 'sent' }, signal.sent);
        if (failed > 0) this.smsRecipients.inc({ account, outcome: 'failed' }, failed);
        if (signal.unknownOutcome > 0)
          this.smsRecipients.inc({ account, outcome: 'outcome_unknown' }, signal.unknownOutcome);
        return;
      }
      case 'fulfillment-callback': {
        const labels = { status: signal.status };
        if (signal.attempt > 1) this.callbackRetries.inc(labels);
        if (signal.ok) this.callbacksSent.inc(labels);
        else this.callbackFailures.inc(labels);
        return;
      }
      case 'service-flow':
        this.flowSteps.inc({ request: signal.request, response: signal.response });
        this.flowLatency.observe({ request: signal.request }, signal.durationMs / 1000);
        return;
      case 'outbound':
        this.platformRequests.inc({ api: signal.api, operation: signal.operation, status: signal.status });
        this.platformLatency.observe(
          { api: signal.api, operation: signal.operation },
          signal.durationMs / 1000,
        );
        return;
      case 'status-check-budget':
        this.statusChecksRefused.inc({ operation: signal.operation });
        return;
      case 'payment-attention':
        if (signal.outcome === 'opened')
          this.attention.inc({ source: signal.source, account: signal.account, reason: signal.reason });
        else {
          const { source, account, outcome: resolution } = signal;
          this.attentionResolved.inc({ source, account, resolution });
        }
        return;
    }
  }

  /** The registry's metric of that name if there is one (same type), else `create()`'s, registered. */
  private reuse<M extends Metric>(name: string, create: () => M): M {
    const existing = this.registry.getSingleMetric(name);
    const metric = create();
    if (existing) {
      if (existing.constructor !== metric.constructor)
        throw new HubtelConfigError(
          'metrics.prefix',
          `the registry already has a different metric named ${name}`,
        );
      return existing as M;
    }
    this.registry.registerMetric(metric);
    return metric;
  }
}
