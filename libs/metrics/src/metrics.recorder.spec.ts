import { Registry } from 'prom-client';
import { HubtelConfigError } from 'nestjs-hubtel';
import { HubtelMetrics } from './metrics.recorder.js';

/** A metric's value for these labels (0 when the series does not exist yet). */
async function valueOf(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const match = values.find(
    (value) =>
      !('metricName' in value && value.metricName !== undefined && value.metricName !== name) &&
      Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted),
  );
  return match?.value ?? 0;
}

describe('HubtelMetrics', () => {
  it('counts inbound outcomes: every request received, each outcome, rejections by reason', async () => {
    const registry = new Registry();
    const metrics = new HubtelMetrics({ registry });
    metrics.record({ kind: 'inbound', source: 'checkout', outcome: 'accepted' });
    metrics.record({ kind: 'inbound', source: 'checkout', outcome: 'duplicate' });
    metrics.record({
      kind: 'inbound',
      source: 'checkout',
      outcome: 'rejected',
      reason: 'HUBTEL_INVALID_BODY',
    });
    metrics.record({
      kind: 'inbound',
      source: 'fulfillment',
      outcome: 'rejected',
      reason: 'AMOUNT_MISMATCH',
    });
    expect(await valueOf(registry, 'hubtel_callbacks_received_total', { source: 'checkout' })).toBe(3);
    expect(await valueOf(registry, 'hubtel_callbacks_accepted_total', { source: 'checkout' })).toBe(1);
    expect(await valueOf(registry, 'hubtel_callbacks_duplicates_total', { source: 'checkout' })).toBe(1);
    expect(
      await valueOf(registry, 'hubtel_callbacks_rejected_total', {
        source: 'checkout',
        reason: 'HUBTEL_INVALID_BODY',
      }),
    ).toBe(1);
    expect(
      await valueOf(registry, 'hubtel_callbacks_rejected_total', {
        source: 'fulfillment',
        reason: 'AMOUNT_MISMATCH',
      }),
    ).toBe(1);
  });

  it('labels inbound requests with the account they were routed to (none when no account matched)', async () => {
    const registry = new Registry();
    const metrics = new HubtelMetrics({ registry });
    metrics.record({ kind: 'inbound', source: 'checkout', outcome: 'accepted', account: 'north' });
    metrics.record({ kind: 'inbound', source: 'checkout', outcome: 'accepted', account: 'default' });
    metrics.record({
      kind: 'inbound',
      source: 'checkout',
      outcome: 'rejected',
      reason: 'WRONG_ACCOUNT',
      account: 'north',
    });
    metrics.record({ kind: 'inbound', source: 'checkout', outcome: 'rejected', reason: 'HUBTEL_NOT_FOUND' });
    const accepted = (account: string) =>
      valueOf(registry, 'hubtel_callbacks_accepted_total', { source: 'checkout', account });
    expect(await accepted('north')).toBe(1);
    expect(await accepted('default')).toBe(1);
    expect(
      await valueOf(registry, 'hubtel_callbacks_rejected_total', {
        account: 'north',
        reason: 'WRONG_ACCOUNT',
      }),
    ).toBe(1);
    expect(
      await valueOf(registry, 'hubtel_callbacks_received_total', { source: 'checkout', account: 'none' }),
    ).toBe(1);
  });

  it('counts handlers, retries, dead letters, SMS recipients and fulfillment callbacks', async () => {
    const registry = new Registry();
    const metrics = new HubtelMetrics({ registry, prefix: 'shop_' });
    const handler = {
      pipeline: 'checkout',
      job: 'hubtel.checkout.paid',
      handler: 'Shop.onPaid@hubtel.checkout.paid',
    };
    metrics.record({ kind: 'handler', ...handler, ok: false });
    metrics.record({
      kind: 'job',
      pipeline: 'checkout',
      job: 'hubtel.checkout.paid',
      outcome: 'retry',
      attempt: 1,
    });
    metrics.record({ kind: 'handler', ...handler, ok: true });
    metrics.record({
      kind: 'job',
      pipeline: 'checkout',
      job: 'hubtel.checkout.paid',
      outcome: 'dead',
      attempt: 2,
    });
    metrics.record({ kind: 'sms', sent: 3, failed: 2, unknownOutcome: 1 });
    metrics.record({ kind: 'fulfillment-callback', status: 'success', ok: false, attempt: 1 });
    metrics.record({ kind: 'fulfillment-callback', status: 'success', ok: true, attempt: 2 });
    expect(await valueOf(registry, 'shop_handler_runs_total', handler)).toBe(2);
    expect(await valueOf(registry, 'shop_handler_failures_total', handler)).toBe(1);
    expect(await valueOf(registry, 'shop_job_retries_total', { pipeline: 'checkout' })).toBe(1);
    expect(await valueOf(registry, 'shop_dead_letters_total', { pipeline: 'checkout' })).toBe(1);
    expect(await valueOf(registry, 'shop_sms_recipients_total', { outcome: 'sent' })).toBe(3);
    expect(await valueOf(registry, 'shop_sms_recipients_total', { outcome: 'failed' })).toBe(1);
    expect(await valueOf(registry, 'shop_sms_recipients_total', { outcome: 'outcome_unknown' })).toBe(1);
    expect(await valueOf(registry, 'shop_fulfillment_callbacks_sent_total', { status: 'success' })).toBe(1);
    expect(await valueOf(registry, 'shop_fulfillment_callback_failures_total', { status: 'success' })).toBe(
      1,
    );
    expect(await valueOf(registry, 'shop_fulfillment_callback_retries_total', { status: 'success' })).toBe(1);
    expect(registry.getSingleMetric('hubtel_handler_runs_total')).toBeUndefined();
  });

  it('keeps latency in histograms (seconds): platform calls by API and operation, service-flow steps', async () => {
    const registry = new Registry();
    const metrics = new HubtelMetrics({ registry });
    metrics.record({
      kind: 'outbound',
      api: 'checkout',
      operation: 'checkout.initiate',
      status: '200',
      durationMs: 40,
    });
    metrics.record({
      kind: 'outbound',
      api: 'checkout',
      operation: 'checkout.initiate',
      status: '503',
      durationMs: 3000,
    });
    metrics.record({ kind: 'service-flow', request: 'initiation', response: 'response', durationMs: 7 });
    expect(
      await valueOf(registry, 'hubtel_platform_requests_total', { api: 'checkout', status: '503' }),
    ).toBe(1);
    const text = await metrics.metrics();
    expect(text).toContain(
      'hubtel_platform_request_duration_seconds_bucket{le="0.05",api="checkout",operation="checkout.initiate"} 1',
    );
    expect(text).toContain(
      'hubtel_platform_request_duration_seconds_count{api="checkout",operation="checkout.initiate"} 2',
    );
    expect(text).toContain(
      'hubtel_service_flow_step_duration_seconds_bucket{le="0.01",request="initiation"} 1',
    );
    expect(text).toContain('hubtel_service_flow_steps_total{request="initiation",response="response"} 1');
    expect(metrics.contentType).toBe(registry.contentType);
  });

  it('reuses the metrics already in the registry (a second app in the process) instead of failing', async () => {
    const registry = new Registry();
    const first = new HubtelMetrics({ registry });
    const second = new HubtelMetrics({ registry });
    first.record({ kind: 'sms', sent: 1, failed: 0, unknownOutcome: 0 });
    second.record({ kind: 'sms', sent: 1, failed: 0, unknownOutcome: 0 });
    expect(await valueOf(registry, 'hubtel_sms_recipients_total', { outcome: 'sent' })).toBe(2);
  });

  it('labels SMS recipients by account: a named account by its name, the default account as default', async () => {
    const registry = new Registry();
    const metrics = new HubtelMetrics({ registry });
    metrics.record({ kind: 'sms', sent: 2, failed: 0, unknownOutcome: 0 });
    // What a named account's SmsModule reports (nestjs-hubtel/sms adds `account`).
    const north = { kind: 'sms' as const, sent: 1, failed: 1, unknownOutcome: 0, account: 'north' };
    metrics.record(north);
    const sent = (account: string) =>
      valueOf(registry, 'hubtel_sms_recipients_total', { account, outcome: 'sent' });
    expect(await sent('default')).toBe(2);
    expect(await sent('north')).toBe(1);
    expect(
      await valueOf(registry, 'hubtel_sms_recipients_total', { account: 'north', outcome: 'failed' }),
    ).toBe(1);
    expect(
      await valueOf(registry, 'hubtel_sms_recipients_total', { account: 'default', outcome: 'failed' }),
    ).toBe(0);
  });

  it.each(['9starts-with-digit', 'has-dash_', 'spa ce'])(
    'refuses the prefix %j, naming the option',
    (prefix) => {
      expect(() => new HubtelMetrics({ registry: new Registry(), prefix })).toThrow(HubtelConfigError);
      expect(() => new HubtelMetrics({ registry: new Registry(), prefix })).toThrow(/metrics\.prefix/);
    },
  );
});
