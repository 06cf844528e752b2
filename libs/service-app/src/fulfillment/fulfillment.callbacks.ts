// The fulfillment callback to the platform: recorded once per OrderId (the first outcome wins), retried
// until accepted or the deadline (then a dead letter); `callbackSent` emitted once accepted.
import { HUBTEL_DEFAULT_ACCOUNT, HubtelError, type HubtelTelemetry, type HubtelLogger } from 'nestjs-hubtel';
import type { HttpTransport, InboundPipeline, JobFollowUps, JobRecord } from '#internal';
import {
  callbackOf,
  namedAccount,
  type CallbackJob,
  type CallbackSummary,
  type StoredCallback,
} from './fulfillment.records.js';
import { SERVICE_APP_JOBS } from '../service-app.constants.js';
import { FulfillmentCallbackSentEvent, ServiceAppEvents } from '../service-app.events.js';
import type { ResolvedServiceAppOptions } from '../service-app.options.js';
import type { FulfillmentCallback, FulfillmentServiceStatus } from '../service-app.types.js';

/** The order a callback is for, and whose account sends it. */
export interface OrderRef {
  orderId: string;
  sessionId: string;
  account?: string;
}

export class FulfillmentCallbacks {
  constructor(
    private readonly pipeline: InboundPipeline,
    options: ResolvedServiceAppOptions,
    // The job's account: its credentials send it, whichever replica runs the job.
    private readonly accountOf: (job: CallbackJob) => Promise<{ readonly transport: HttpTransport }>,
    private readonly logger: HubtelLogger,
    private readonly telemetry?: HubtelTelemetry,
  ) {
    pipeline.define<CallbackJob>(SERVICE_APP_JOBS.callback, {
      run: async (job, { attempt }) => {
        const { transport } = await this.accountOf(job);
        const { ServiceStatus } = job.callback;
        // Validated as `success` or `failed`: anything else is kept out of the telemetry's labels.
        const status = ServiceStatus === 'success' || ServiceStatus === 'failed' ? ServiceStatus : 'other';
        const record = (ok: boolean) =>
          this.telemetry?.record({ kind: 'fulfillment-callback', status, ok, attempt });
        await sendCallback(transport, job.callback).catch((error: unknown) => {
          record(false);
          throw error;
        });
        record(true);
      },
      retry: { maxAttempts: Infinity, ...options.callbackRetry },
      compactWhenDone: ({ callback: { ServiceStatus, MetaData }, account }): CallbackSummary =>
        account === undefined ? { ServiceStatus, MetaData } : { ServiceStatus, MetaData, account },
      onSettled: (record, outcome) => this.afterCallback(record, outcome),
    });
  }

  /** Records the callback job (set-if-absent on OrderId: the first outcome wins). */
  async report(
    { orderId, sessionId, account }: OrderRef,
    status: FulfillmentServiceStatus,
    metaData: unknown,
    reportedBy: 'handler' | 'app',
    followUps?: JobFollowUps, // in `beforeSettled`: sent right after the order is settled
  ): Promise<{ ok: true } | { ok: false; existing: CallbackSummary }> {
    const job: CallbackJob = {
      callback: { SessionId: sessionId, OrderId: orderId, ServiceStatus: status, MetaData: metaData ?? null },
      reportedBy,
    };
    const named = namedAccount(account);
    if (named !== undefined) job.account = named;
    const to = followUps ?? this.pipeline;
    const result = await to.submit<StoredCallback>(SERVICE_APP_JOBS.callback, orderId, job);
    if (result.duplicate) {
      const existing = callbackOf(result.record);
      if (reportedBy === 'handler')
        this.logger.log(
          `Order ${orderId} was already reported as "${existing.ServiceStatus}"; the handler's "${status}" is not sent`,
        );
      return { ok: false, existing };
    }
    if (this.logger.isLevelEnabled('log'))
      this.logger.log(`Order ${orderId}: fulfillment callback "${status}" queued`);
    return { ok: true };
  }

  private async afterCallback(record: JobRecord<CallbackJob>, outcome: 'done' | 'dead'): Promise<void> {
    const { callback, reportedBy, account } = record.payload;
    if (outcome === 'dead') {
      this.logger.error(
        `Fulfillment callback "${callback.ServiceStatus}" of order ${callback.OrderId} was not accepted by the platform before the deadline (${record.attempts} attempt(s)): report it by hand`,
      );
      return;
    }
    if (this.logger.isLevelEnabled('log'))
      this.logger.log(
        `Fulfillment callback "${callback.ServiceStatus}" of order ${callback.OrderId} accepted after ${record.attempts} attempt(s)`,
      );
    const event = new FulfillmentCallbackSentEvent({
      orderId: callback.OrderId,
      sessionId: callback.SessionId,
      serviceStatus: callback.ServiceStatus,
      metaData: callback.MetaData,
      reportedBy,
      attempts: record.attempts,
      sentAt: new Date(record.updatedAt).toISOString(),
      account: account ?? HUBTEL_DEFAULT_ACCOUNT,
    });
    await this.pipeline.alert(ServiceAppEvents.CallbackSent, event);
  }
}

/** Posts one callback, one attempt (the pipeline retries; idempotent: the same fact again). */
async function sendCallback(transport: HttpTransport, callback: FulfillmentCallback): Promise<void> {
  const { SessionId, OrderId, ServiceStatus, MetaData } = callback;
  try {
    await transport.request({
      api: 'fulfillment',
      method: 'POST',
      path: '/callback',
      body: { SessionId, OrderId, ServiceStatus, MetaData: MetaData ?? null },
      idempotent: true,
      operation: 'serviceApp.fulfillmentCallback',
    });
  } catch (error) {
    // The contract shows no response body: a 2xx whose body is not JSON is still accepted.
    const status = error instanceof HubtelError ? (error.httpStatus ?? 0) : 0;
    if (status < 200 || status >= 300) throw error;
  }
}
