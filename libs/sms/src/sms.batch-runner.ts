import type { LoggerService } from '@nestjs/common';
import {
  HubtelAuthenticationError,
  HubtelError,
  HubtelInsufficientCreditError,
  HubtelIpNotAllowedError,
  HubtelUnknownOutcomeError,
  maskPhoneNumbers,
  type HubtelTelemetry,
  tryNormalizeMsisdn,
  type HubtelErrorCode,
} from 'nestjs-hubtel';
import { ANSWER_FIELDS, type HttpTransport, withFieldNames } from '#internal';
import { MsisdnSet } from './sms.msisdn-set.js';
import { countSmsSegments } from './sms.segments.js';
import { SMS_PATHS } from './sms.constants.js';
import { SmsBatchAbortedError } from './sms.errors.js';
import type {
  SendBatchCounts,
  SendBatchInput,
  SendBatchResult,
  SmsBatchReport,
  SmsBatchSummary,
  SmsFailedRecipient,
  SmsSentRecipient,
} from './sms.types.js';

/** A validated `sendBatch` call, ready to run. */
export type SmsBatchPlan = Required<
  Pick<SendBatchInput, 'from' | 'content' | 'batchSize' | 'concurrency' | 'collectResults'>
> &
  Pick<SendBatchInput, 'onBatch' | 'onProgress'> & {
    recipients: Iterable<unknown> | AsyncIterable<unknown>;
    defaultCountryCode: string;
  };

/** The platform's batch send answer (contract: batch simple message response). */
interface SmsBatchApiResponse {
  batchId: string;
  status: number;
  data: { recipient: string; content: string; messageId: string }[];
}

interface PreparedBatch {
  index: number;
  recipients: string[];
  /** Invalid entries met while this batch was being filled. */
  invalid: SmsFailedRecipient[];
}

interface Stop {
  reason: string;
  code: HubtelErrorCode;
  cause: unknown;
}

/** Platform answers after which every further batch would fail the same way. */
const FATAL = [HubtelAuthenticationError, HubtelInsufficientCreditError, HubtelIpNotAllowedError];

/** An object with a `symbol` method (`Symbol.iterator` or `Symbol.asyncIterator`). */
export function isIterable(value: unknown, symbol: symbol): boolean {
  return value !== null && typeof value === 'object' && typeof Reflect.get(value, symbol) === 'function';
}

/** One `sendBatch` run: recipients are pulled only as fast as batches are sent, so memory stays flat. */
export class SmsBatchRun {
  private readonly counts: SendBatchCounts = {
    total: 0,
    sent: 0,
    failed: 0,
    invalid: 0,
    duplicates: 0,
    unknownOutcome: 0,
    batches: 0,
  };
  private readonly seen = new MsisdnSet();
  private readonly data: SmsSentRecipient[] = [];
  private readonly failed: SmsFailedRecipient[] = [];
  private readonly summaries: SmsBatchSummary[] = [];
  private inFlight = 0;
  private stop?: Stop;
  private first?: { batchId?: string; status?: number };

  constructor(
    private readonly plan: SmsBatchPlan,
    private readonly transport: HttpTransport,
    private readonly logger: LoggerService,
    private readonly telemetry?: HubtelTelemetry,
  ) {}

  async run(): Promise<SendBatchResult> {
    const batches = this.prepare();
    const worker = async () => {
      while (!this.stop) {
        let next: IteratorResult<PreparedBatch>;
        try {
          // Async generators queue concurrent next() calls, so workers share it safely.
          next = await batches.next();
        } catch (error) {
          this.halt(`the recipient source failed: ${errorMessage(error)}`, error);
          return;
        }
        if (next.done) return;
        await this.process(next.value);
      }
    };
    try {
      await Promise.all(Array.from({ length: this.plan.concurrency }, worker));
    } finally {
      // Closes the source (e.g. a database cursor) when we stopped early.
      await batches.return(undefined).catch(() => undefined);
    }

    const result = this.result();
    if (this.stop) {
      const { reason, code, cause } = this.stop;
      const message = `sendBatch stopped: ${reason}. ${this.counts.sent} recipient(s) were sent and ${this.counts.failed} failed before the stop; entries after the first ${this.counts.total} were not processed.`;
      this.logger.warn(maskPhoneNumbers(message));
      throw new SmsBatchAbortedError(message, code, result, cause);
    }
    this.logger.log(
      `sendBatch done: ${this.counts.total} recipient(s), ${this.counts.sent} sent, ${this.counts.failed} failed ` +
        `(${this.counts.invalid} invalid, ${this.counts.unknownOutcome} outcome unknown), ${this.counts.duplicates} duplicate(s), ${this.counts.batches} batch(es)`,
    );
    return result;
  }

  private async *prepare(): AsyncGenerator<PreparedBatch> {
    const { batchSize, defaultCountryCode } = this.plan;
    let index = 0;
    let position = 0;
    let current: string[] = [];
    let invalid: SmsFailedRecipient[] = [];
    // Counted when the chunk is handed out, so an early stop leaves no entry half-counted.
    let read = 0;
    let duplicates = 0;
    const handOut = (): PreparedBatch => {
      this.counts.total += read;
      this.counts.duplicates += duplicates;
      this.counts.invalid += invalid.length;
      const batch = { index: index++, recipients: current, invalid };
      current = [];
      invalid = [];
      read = 0;
      duplicates = 0;
      return batch;
    };
    const take = (value: unknown): boolean => {
      read++;
      const normalized = tryNormalizeMsisdn(value, defaultCountryCode);
      if (!normalized.ok)
        invalid.push({
          recipient: typeof value === 'string' ? value : String(value),
          index: position,
          reason: `invalid phone number: ${normalized.reason}`,
          code: 'HUBTEL_VALIDATION_FAILED',
          outcomeUnknown: false,
        });
      else if (!this.seen.add(normalized.msisdn)) duplicates++;
      else current.push(normalized.msisdn);
      position++;
      // Invalid entries also close a batch, so a stream of bad numbers cannot pile up either.
      return current.length >= batchSize || invalid.length >= batchSize;
    };
    const source = this.plan.recipients;
    if (isIterable(source, Symbol.iterator)) {
      // A plain loop: an await per entry would cost more than checking the number.
      for (const value of source as Iterable<unknown>) {
        if (this.stop) return;
        if (take(value)) yield handOut();
      }
    } else {
      for await (const value of source) {
        if (this.stop) return;
        if (take(value)) yield handOut();
      }
    }
    if (read > 0) yield handOut();
  }

  private async process(batch: PreparedBatch): Promise<void> {
    this.inFlight++;
    const report: SmsBatchReport = { index: batch.index, sent: [], failed: [...batch.invalid] };
    let errorCode: HubtelErrorCode | undefined;
    try {
      if (batch.recipients.length > 0) {
        if (this.stop) {
          // Pulled before the stop: accounted as not sent, never sent.
          const { reason, code } = this.stop;
          for (const recipient of batch.recipients)
            report.failed.push({ recipient, reason: `not sent: ${reason}`, code, outcomeUnknown: false });
        } else errorCode = await this.send(batch, report);
      }
    } finally {
      this.inFlight--;
    }
    this.record(report, errorCode);
    if (this.plan.onBatch) {
      try {
        await this.plan.onBatch(report);
      } catch (error) {
        this.halt(`the onBatch callback failed: ${errorMessage(error)}`, error);
      }
    }
    try {
      this.plan.onProgress?.({ ...this.counts, inFlight: this.inFlight });
    } catch (error) {
      this.logger.warn(
        `sendBatch onProgress callback failed (ignored): ${maskPhoneNumbers(errorMessage(error))}`,
      );
    }
  }

  /** Sends one batch; fills the report. Returns the error code when the whole batch failed. */
  private async send(batch: PreparedBatch, report: SmsBatchReport): Promise<HubtelErrorCode | undefined> {
    const { from, content, defaultCountryCode } = this.plan;
    this.counts.batches++;
    try {
      const res = await this.transport.request<SmsBatchApiResponse>({
        api: 'sms',
        method: 'POST',
        path: SMS_PATHS.batchSend,
        body: { From: from, Recipients: batch.recipients, Content: content },
        idempotent: false,
        operation: 'sms.sendBatch',
      });
      const body = withFieldNames((res.data ?? {}) as Partial<SmsBatchApiResponse>, ANSWER_FIELDS.smsBatch);
      const batchId = body.batchId === undefined || body.batchId === null ? '' : String(body.batchId);
      report.batchId = batchId || undefined;
      if (typeof body.status === 'number') report.status = body.status;
      type Answer = { recipient: string; messageId: string; content?: string };
      const answers = (Array.isArray(body.data) ? body.data : []).map((raw): Answer | undefined => {
        const entry = withFieldNames(raw, ANSWER_FIELDS.smsBatchEntry) as
          Partial<SmsBatchApiResponse['data'][number]> | undefined;
        if (!entry || typeof entry !== 'object' || entry.messageId === undefined || entry.messageId === null)
          return undefined;
        const content = typeof entry.content === 'string' ? entry.content : undefined;
        return { recipient: String(entry.recipient), messageId: String(entry.messageId), content };
      });
      // Matched by position (the usual order), else by number, else normalised (`+233…`), once.
      let byRecipient: Map<string, Answer> | undefined;
      let normalised: Map<string, Answer> | undefined;
      const answerFor = (recipient: string, position: number): Answer | undefined => {
        if (answers[position]?.recipient === recipient) return answers[position];
        byRecipient ??= new Map(answers.flatMap((found) => (found ? [[found.recipient, found]] : [])));
        const exact = byRecipient.get(recipient);
        if (exact) return exact;
        normalised ??= new Map(
          [...byRecipient].map(([raw, found]) => {
            const parsed = tryNormalizeMsisdn(raw, defaultCountryCode);
            return [parsed.ok ? parsed.msisdn : raw, found];
          }),
        );
        return normalised.get(recipient);
      };
      for (let position = 0; position < batch.recipients.length; position++) {
        const recipient = batch.recipients[position]!;
        const entry = answerFor(recipient, position);
        if (entry) {
          report.sent.push({
            recipient,
            content: entry.content ?? content,
            messageId: entry.messageId,
            batchId,
          });
        } else {
          report.failed.push({
            recipient,
            reason: `the platform accepted batch ${batchId || '(no id)'} but returned no message id for this recipient; check getBatchStatus before re-sending`,
            code: 'HUBTEL_UNKNOWN_OUTCOME',
            outcomeUnknown: true,
          });
        }
      }
      this.logger.debug?.(
        `sendBatch batch ${batch.index}: ${report.sent.length}/${batch.recipients.length} accepted (batchId ${batchId || '-'})`,
      );
      return undefined;
    } catch (error) {
      const platform = error instanceof HubtelError ? error : undefined;
      const code: HubtelErrorCode = platform?.code ?? 'HUBTEL_UNKNOWN_OUTCOME';
      // Anything but a typed platform error is unexpected: we cannot say whether it went out.
      const outcomeUnknown = !platform || error instanceof HubtelUnknownOutcomeError;
      const reason = errorMessage(error);
      const { httpStatus, responseCode } = platform ?? {};
      for (const recipient of batch.recipients)
        report.failed.push({ recipient, reason, code, httpStatus, responseCode, outcomeUnknown });
      this.logger.warn(
        `sendBatch batch ${batch.index} (${batch.recipients.length} recipients) failed: ${maskPhoneNumbers(reason)}`,
      );
      if (FATAL.some((type) => error instanceof type)) this.halt(`${code}: ${reason}`, error, code);
      return code;
    }
  }

  private record(report: SmsBatchReport, errorCode: HubtelErrorCode | undefined): void {
    const unknownBefore = this.counts.unknownOutcome;
    this.counts.sent += report.sent.length;
    this.counts.failed += report.failed.length;
    for (const f of report.failed) if (f.outcomeUnknown) this.counts.unknownOutcome++;
    this.telemetry?.record({
      kind: 'sms',
      sent: report.sent.length,
      failed: report.failed.length,
      unknownOutcome: this.counts.unknownOutcome - unknownBefore,
    });
    const sentAnything = report.sent.length > 0 || report.batchId !== undefined || errorCode !== undefined;
    if (sentAnything && this.first === undefined)
      this.first = { batchId: report.batchId, status: report.status };
    if (this.plan.collectResults) {
      for (const s of report.sent) this.data.push(s);
      for (const f of report.failed) this.failed.push(f);
      this.summaries.push({
        index: report.index,
        batchId: report.batchId,
        status: report.status,
        sent: report.sent.length,
        failed: report.failed.length,
        errorCode,
      });
    }
  }

  private halt(reason: string, cause: unknown, code: HubtelErrorCode = 'HUBTEL_SEND_ABORTED'): void {
    this.stop ??= { reason, code, cause };
  }

  private result(): SendBatchResult {
    const single = this.counts.batches === 1 ? this.first : undefined;
    const { encoding, segments } = countSmsSegments(this.plan.content);
    return {
      batchId: single?.batchId,
      status: single?.status,
      data: this.data,
      failed: this.failed,
      batches: this.summaries.sort((a, b) => a.index - b.index),
      counts: { ...this.counts },
      encoding,
      segmentsPerMessage: segments,
    };
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
