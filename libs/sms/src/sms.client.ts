import {
  HubtelUnknownOutcomeError,
  HubtelValidationError,
  tryNormalizeMsisdn,
  type HubtelTelemetry,
  type ValidationIssue,
  HubtelLogger,
} from 'nestjs-hubtel';
import {
  ANSWER_FIELDS,
  accountLoggerContext,
  type HttpTransport,
  echoValue,
  invalidMsisdnsError,
  withFieldNames,
} from '#internal';
import { isIterable, SmsBatchRun, type SmsBatchPlan } from './sms.batch-runner.js';
import { reportedSend } from './sms.telemetry.js';
import { SMS_LIMITS, SMS_LOGGER_CONTEXT, SMS_PATHS } from './sms.constants.js';
import type { ResolvedSmsOptions } from './sms.options.js';
import type {
  SendBatchInput,
  SendBatchResult,
  SendSmsInput,
  SendSmsResult,
  SmsBatchStatus,
  SmsMessageStatus,
} from './sms.types.js';

/** The sending methods of one account (`SmsService`: the default's; `sms.forAccount(name)`). */
export type SmsSender = Pick<
  SmsClient,
  'account' | 'send' | 'sendBatch' | 'getMessageStatus' | 'getBatchStatus'
>;

/** Sends SMS for one account: inputs checked before anything is sent, sends never retried blindly. */
export class SmsClient {
  protected readonly logger: HubtelLogger;

  constructor(
    readonly account: string,
    protected readonly options: ResolvedSmsOptions,
    protected readonly transport: HttpTransport,
    protected readonly telemetry?: HubtelTelemetry,
  ) {
    this.logger = new HubtelLogger(accountLoggerContext(SMS_LOGGER_CONTEXT, account));
  }

  /**
   * Sends one text to many numbers, in batches of `batchSize`, `concurrency` at a time, each number
   * once; every entry is accounted for. Rejects with HubtelValidationError before sending anything,
   * or SmsBatchAbortedError (partial result attached) when sending had to stop.
   */
  async sendBatch(input: SendBatchInput): Promise<SendBatchResult> {
    const issues: ValidationIssue[] = [];
    requireObject(input, 'sendBatch', '{ from, recipients, content }');
    const from = this.checkSender(input.from, issues);
    const content = checkText('content', input.content, issues, this.options.maxContentLength);
    const recipients = input.recipients as unknown;
    const isArray = Array.isArray(recipients);
    const iterable = isIterable(recipients, Symbol.iterator) || isIterable(recipients, Symbol.asyncIterator);
    if (typeof recipients === 'string' || (!isArray && !iterable))
      issues.push({
        field: 'recipients',
        message: 'must be an array or an (async) iterable of phone numbers',
      });
    else if (isArray && recipients.length === 0)
      issues.push({ field: 'recipients', message: 'must not be empty' });
    const batchSize = this.checkCount(input, 'batchSize', SMS_LIMITS.maxBatchSize, issues);
    const concurrency = this.checkCount(input, 'concurrency', SMS_LIMITS.maxConcurrency, issues);
    const mode = input.invalidRecipients ?? 'reject';
    if (mode !== 'reject' && mode !== 'report')
      issues.push({ field: 'invalidRecipients', message: 'must be "reject" or "report"', value: mode });
    for (const field of ['onBatch', 'onProgress'] as const)
      if (input[field] !== undefined && typeof input[field] !== 'function')
        issues.push({ field, message: 'must be a function' });
    if (issues.length > 0) throw this.invalid('sendBatch', issues);

    if (isArray && mode === 'reject') {
      const invalid = invalidMsisdnsError(recipients as unknown[], this.options.http.defaultCountryCode);
      if (invalid) throw invalid;
    }

    const plan: SmsBatchPlan = {
      ...input,
      from: from!,
      content: content!,
      recipients: recipients as Iterable<unknown> | AsyncIterable<unknown>,
      batchSize,
      concurrency,
      defaultCountryCode: this.options.http.defaultCountryCode,
      collectResults: input.collectResults ?? input.onBatch === undefined,
    };
    return new SmsBatchRun(plan, this.transport, this.logger, this.telemetry).run();
  }

  /** Sends one message. Never retried blindly. */
  async send(input: SendSmsInput): Promise<SendSmsResult> {
    const issues: ValidationIssue[] = [];
    requireObject(input, 'send', '{ from, to, content }');
    const from = this.checkSender(input.from, issues);
    const content = checkText('content', input.content, issues, this.options.maxContentLength);
    const to = tryNormalizeMsisdn(input.to, this.options.http.defaultCountryCode);
    if (!to.ok) issues.push({ field: 'to', message: to.reason, value: input.to });
    if (issues.length > 0) throw this.invalid('send', issues);
    const msisdn = (to as { msisdn: string }).msisdn;
    if (this.telemetry) return reportedSend(this.telemetry, () => this.sendOne(from!, msisdn, content!));
    return this.sendOne(from!, msisdn, content!);
  }

  private async sendOne(from: string, msisdn: string, content: string): Promise<SendSmsResult> {
    const res = await this.transport.request<Partial<SendSmsResult>>({
      api: 'sms',
      method: 'POST',
      path: SMS_PATHS.send,
      body: { From: from, To: msisdn, Content: content },
      idempotent: false,
      operation: 'sms.send',
    });
    // Field names read without regard to case: an older host answers `MessageId`, `Status`, ...
    const body = withFieldNames(res.data ?? {}, ANSWER_FIELDS.smsMessage);
    if (body.messageId === undefined || body.messageId === null || body.messageId === '')
      throw new HubtelUnknownOutcomeError(
        `sms.send: the platform answered ${res.status} without a messageId; the message may have been sent, so its outcome is unknown: check before sending it again`,
        { httpStatus: res.status, body },
      );
    return {
      ...body,
      to: msisdn,
      messageId: String(body.messageId),
      status: typeof body.status === 'number' ? body.status : Number(body.status ?? 0),
    };
  }

  /** Delivery state of one message. */
  async getMessageStatus(messageId: string): Promise<SmsMessageStatus> {
    this.checkId(messageId, 'messageId');
    const data = await this.get<SmsMessageStatus>(SMS_PATHS.message(messageId), 'getMessageStatus');
    return withFieldNames(data, ANSWER_FIELDS.smsMessage);
  }

  /** State of a batch. */
  async getBatchStatus(batchId: string): Promise<SmsBatchStatus> {
    this.checkId(batchId, 'batchId');
    return this.get<SmsBatchStatus>(SMS_PATHS.batch(batchId), 'getBatchStatus');
  }

  private async get<T extends object>(path: string, operation: string): Promise<T> {
    const res = await this.transport.request<T>({
      api: 'sms',
      method: 'GET',
      path,
      idempotent: true,
      operation: `sms.${operation}`,
    });
    return res.data ?? ({} as T);
  }

  private checkSender(value: unknown, issues: ValidationIssue[]): string | undefined {
    const missing = 'is required (no default senderId is configured)';
    return checkText('from', value ?? this.options.senderId, issues, this.options.maxSenderLength, missing);
  }

  /** `input[field]`, else the configured default (also when bad: the issue is what counts). */
  private checkCount(
    input: SendBatchInput,
    field: 'batchSize' | 'concurrency',
    max: number,
    issues: ValidationIssue[],
  ): number {
    const value: unknown = input[field];
    if (value === undefined) return this.options[field];
    if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max) return value;
    issues.push({ field, message: `must be a whole number from 1 to ${max}`, value });
    return this.options[field];
  }

  private checkId(value: unknown, field: 'messageId' | 'batchId'): void {
    const issues: ValidationIssue[] = [];
    if (checkText(field, value, issues) === undefined)
      throw this.invalid(field === 'messageId' ? 'getMessageStatus' : 'getBatchStatus', issues);
  }

  private invalid(method: string, issues: ValidationIssue[]): HubtelValidationError {
    // Name the rejected value too (a phone number, a sender id): "to "12-ab" contains ...".
    const summary = issues
      .map((i) => `${i.field}${i.value === undefined ? '' : ` ${echoValue(i.value)}`} ${i.message}`)
      .join('; ');
    return new HubtelValidationError(`${method}: invalid input: ${summary}`, issues);
  }
}

function requireObject(input: unknown, method: string, shape: string): void {
  if (input === null || typeof input !== 'object')
    throw new HubtelValidationError(`${method} expects an object ${shape}`, [
      { field: 'input', message: 'must be an object' },
    ]);
}

/** A text input: a string, not blank, at most `max` characters; else an issue (the content's value unsaid). */
function checkText(
  field: string,
  value: unknown,
  issues: ValidationIssue[],
  max?: number,
  missing = 'is required',
): string | undefined {
  let message: string;
  if (value === undefined) message = missing;
  else if (typeof value !== 'string') message = 'must be a string';
  else if (value.trim() === '') message = 'must not be empty';
  else if (max !== undefined && value.length > max)
    message = `must be at most ${max} characters long, got ${value.length}`;
  else return value;
  issues.push(field === 'content' || value === undefined ? { field, message } : { field, message, value });
  return undefined;
}
