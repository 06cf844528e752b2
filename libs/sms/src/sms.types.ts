import { type HubtelErrorCode } from 'nestjs-hubtel';
import type { SmsEncoding } from './sms.segments.js';

/** Recipients of `sendBatch`: an array, or any (async) iterable such as a database cursor. */
export type SmsRecipients = readonly string[] | Iterable<string> | AsyncIterable<string>;

/** `SmsService.send` input: one message to one number. */
export interface SendSmsInput {
  /** Sender id; defaults to the module's `senderId`. */
  from?: string;
  /** Phone number in any accepted form (`0241234567`, `+233 24 123 4567`, `233241234567`). */
  to: string;
  content: string;
}

/** The platform's answer to a single send. */
export interface SendSmsResult {
  /** The number it was sent to, normalised. */
  to: string;
  messageId: string;
  /** 0 = accepted. */
  status: number;
  rate?: number;
  networkId?: string;
  clientReference?: string | null;
  statusDescription?: string;
}

export interface SendBatchInput {
  /** Sender id; defaults to the module's `senderId`. */
  from?: string;
  /** An array is checked whole before anything is sent; an iterable is streamed (invalid: failed). */
  recipients: SmsRecipients;
  content: string;
  /** Default: the module's `batchSize` and `concurrency`. */
  batchSize?: number;
  concurrency?: number;
  /** Invalid numbers in an ARRAY: `reject` (default: nothing sent) or `report`. Streams `report`. */
  invalidRecipients?: 'reject' | 'report';
  /** Keep per-recipient results in the returned value. Default: true, unless `onBatch` is given. */
  collectResults?: boolean;
  /** Called, awaited, once per batch; if it throws, sendBatch stops (SmsBatchAbortedError). */
  onBatch?: (report: SmsBatchReport) => void | Promise<void>;
  /** Called after every batch with running totals. Its errors are logged and ignored. */
  onProgress?: (progress: SendBatchProgress) => void;
}

export interface SmsSentRecipient {
  recipient: string;
  content: string;
  messageId: string;
  batchId: string;
}

/** One recipient that was not sent (or whose send cannot be confirmed). */
export interface SmsFailedRecipient {
  /** Normalised; for an invalid entry, as given with its position. */
  recipient: string;
  index?: number;
  reason: string;
  /** HUBTEL_VALIDATION_FAILED, HUBTEL_API_ERROR, HUBTEL_UNKNOWN_OUTCOME... */
  code: HubtelErrorCode;
  httpStatus?: number;
  responseCode?: string;
  /** The message may have gone out: check `getBatchStatus` / `getMessageStatus` before re-sending. */
  outcomeUnknown: boolean;
}

/** Everything about one batch, as given to `onBatch`. */
export interface SmsBatchReport {
  index: number;
  batchId?: string;
  status?: number;
  sent: SmsSentRecipient[];
  failed: SmsFailedRecipient[];
}

/** Summary of one batch, kept in the result when results are collected. */
export interface SmsBatchSummary extends Pick<SmsBatchReport, 'index' | 'batchId' | 'status'> {
  sent: number;
  failed: number;
  /** When the whole batch failed. */
  errorCode?: HubtelErrorCode;
}

export interface SendBatchCounts {
  /** Entries read from the input. Always `sent + failed + duplicates`. */
  total: number;
  sent: number;
  /** Not sent, or not confirmed (includes `invalid` and `unknownOutcome`). */
  failed: number;
  /** Entries that were not valid phone numbers (part of `failed`). */
  invalid: number;
  /** Repeats of a number already in the list: each number is sent once. */
  duplicates: number;
  /** Failed entries whose message may nonetheless have gone out (part of `failed`). */
  unknownOutcome: number;
  batches: number;
}

export interface SendBatchProgress extends SendBatchCounts {
  inFlight: number;
}

/** `sendBatch` result: every input entry is accounted for in `counts`. */
export interface SendBatchResult {
  /** The batch id and status when the send went out as exactly one batch (else see `batches`). */
  batchId?: string;
  status?: number;
  /** Per recipient sent / not sent, and per batch: empty when results are not collected. */
  data: SmsSentRecipient[];
  failed: SmsFailedRecipient[];
  batches: SmsBatchSummary[];
  counts: SendBatchCounts;
  /** What each message costs: GSM-7 / UCS-2 and the number of SMS parts. */
  encoding: SmsEncoding;
  segmentsPerMessage: number;
}

/** A message's delivery state, as `GET /v1/messages/{messageId}` reports it. */
export interface SmsMessageStatus {
  messageId?: string;
  /** The telco's delivery report, e.g. `Delivered`. */
  status?: string | number;
  updateTime?: string;
  rate?: number;
  [field: string]: unknown;
}

/** A batch's state, as `GET /v1/messages/batch/{batchId}` reports it. */
export interface SmsBatchStatus {
  batchId?: string;
  status?: string | number;
  updateTime?: string;
  [field: string]: unknown;
}
