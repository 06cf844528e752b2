/** Field names read in any case, as Hubtel's C# SDK does (an older SMS host answers `Status`). */

/** The value of field `name` of `source`, its exact spelling first, else any spelling of it. */
export function fieldOf(source: unknown, name: string): unknown {
  if (!source || typeof source !== 'object' || Array.isArray(source)) return undefined;
  const record = source as Record<string, unknown>;
  if (Object.hasOwn(record, name)) return record[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(record)) if (key.toLowerCase() === lower) return record[key];
  return undefined;
}

/** A copy of `source` with its fields named in `names` (in any case) under those spellings. */
export function withFieldNames<T>(source: T, names: readonly string[]): T {
  if (!source || typeof source !== 'object' || Array.isArray(source)) return source;
  const record = source as Record<string, unknown>;
  const wanted = new Map(names.map((name) => [name.toLowerCase(), name]));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    const canonical = wanted.get(key.toLowerCase());
    // The exact spelling wins over another one of the same name.
    if (canonical !== undefined && canonical !== key && Object.hasOwn(record, canonical)) continue;
    out[canonical ?? key] = value;
  }
  return out as T;
}

/** Field names of the platform's answers, as documented (the one list the readers use). */
export const ANSWER_FIELDS = Object.freeze({
  /** SMS single send and message status (`GET /v1/messages/{id}`). */
  smsMessage: [
    'rate',
    'messageId',
    'status',
    'networkId',
    'clientReference',
    'statusDescription',
    'updateTime',
    'units',
    'time',
    'to',
    'from',
    'content',
  ],
  /** SMS batch send answer, and each of its `data` entries. */
  smsBatch: ['batchId', 'status', 'data'],
  smsBatchEntry: ['recipient', 'content', 'messageId'],
  /** Checkout and status-check envelopes. */
  envelope: ['responseCode', 'status', 'message', 'data'],
  checkoutCreated: ['checkoutUrl', 'checkoutId', 'clientReference', 'checkoutDirectUrl', 'message'],
  transactionStatus: [
    'date',
    'status',
    'transactionId',
    'externalTransactionId',
    'paymentMethod',
    'clientReference',
    'currencyCode',
    'amount',
    'charges',
    'amountAfterCharges',
    'isFulfilled',
  ],
} as const);
