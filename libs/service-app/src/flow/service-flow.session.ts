/**
 * How a service-flow session is kept in the store: the compact record, its keys, the check that
 * a stored value is one this version can continue, and the copy-on-write helpers for its data.
 * Apart from the request handling so the storage format (which must stay readable across
 * deploys) is read in one place.
 */
import { SERVICE_APP_KEYS } from '../service-app.constants.js';
import type { SelectOption } from '../service-app.types.js';
import type { StoredScreen, StoredSession } from '../service-flow.types.js';

/** Most distinct Operator / unrouted ServiceCode strings shared between sessions (see SharedStrings). */
const SHARED_STRINGS_LIMIT = 256;

/**
 * What the store keeps per session: as little as a live session needs, since every idle user
 * holds one for `sessionTtlMs` (100,000 of them must fit in well under 100 MB). No SessionId (the
 * key has it), `startedAt` as epoch ms, screens shared with other sessions (ScreenCache), and no
 * history or selections object when there is none. Every record has all the fields (absent ones
 * undefined, dropped by a JSON store), so V8 gives them one shape. `getSession()` shows it as a
 * StoredSession.
 */
export interface SessionRecord {
  flow: string;
  serviceCode: string;
  mobile: string;
  operator: string | undefined;
  /** The prompt awaiting an answer. */
  screen: StoredScreen;
  /** Earlier prompts, oldest first, for "back"; undefined when none or "back" is off. */
  history: StoredScreen[] | undefined;
  data: Record<string, unknown>;
  /** Options chosen in select prompts, by field; undefined when none. */
  selections: Record<string, SelectOption> | undefined;
  /** Epoch ms (an ISO string in sessions written by earlier versions). */
  startedAt: number | string;
  /** True on the USSD channel (decided at the start); undefined on app channels. */
  ussd?: true | undefined;
  /** Page of the USSD menu on screen; undefined for the first. */
  page?: number | undefined;
  /** The unfinished session offered by the resume question on screen (resumable flows). */
  resume?: ResumeRecord | undefined;
  /** The platform sent `timeout`: the session is over. */
  timedOut?: true | undefined;
  /** The named account whose path the session started on; undefined: the default account (and older records). */
  account?: string | undefined;
}

/**
 * What an unfinished session of a resumable flow leaves for the next dial of the same Mobile and
 * ServiceCode: the state at its last answered step (TTL: the flow's `resume.withinMs`).
 */
export interface ResumeRecord {
  /** The session it comes from (a cart of that session means it finished: never offered). */
  sessionId: string;
  flow: string;
  screen: StoredScreen;
  history: StoredScreen[] | undefined;
  data: Record<string, unknown>;
  selections: Record<string, SelectOption> | undefined;
  /** Epoch ms of the last answer, or of the `release` / `timeout` that ended it. */
  at: number;
}

/**
 * One key per ServiceCode and Mobile (and named account: two accounts may use one ServiceCode);
 * the hash tag keeps it one slot on a Redis Cluster.
 */
export function resumeKey(serviceCode: string, mobile: string, account?: string): string {
  return account === undefined
    ? `${SERVICE_APP_KEYS.resume}{${serviceCode}}:${mobile}`
    : `${SERVICE_APP_KEYS.resume}{${serviceCode}}:${account}:${mobile}`;
}

/** The resume record a session leaves at this point (its awaited prompt and what it collected). */
export function resumeRecord(sessionId: string, session: SessionRecord, at: number): ResumeRecord {
  return {
    sessionId,
    flow: session.flow,
    screen: session.screen,
    history: session.history,
    data: session.data,
    selections: session.selections,
    at,
  };
}

/** A stored value as a resume record, or undefined when it is not one (checked, never trusted). */
export function readResume(value: unknown): ResumeRecord | undefined {
  if (!isObject(value)) return undefined;
  const r = value as Partial<Record<keyof ResumeRecord, unknown>>;
  if (
    typeof r.sessionId !== 'string' ||
    typeof r.flow !== 'string' ||
    !isScreen(r.screen) ||
    !isObject(r.data) ||
    (r.selections !== undefined && !isObject(r.selections)) ||
    (r.history !== undefined && !(Array.isArray(r.history) && r.history.every(isScreen))) ||
    typeof r.at !== 'number'
  )
    return undefined;
  return value as ResumeRecord;
}

export function sessionKey(sessionId: string): string {
  return `${SERVICE_APP_KEYS.session}${sessionId}`;
}

/** A session record with all its fields, in one order (one shape for V8). */
export function record(
  session: SessionRecord,
  screen: StoredScreen,
  history: StoredScreen[] | undefined,
  data: Record<string, unknown>,
  selections: Record<string, SelectOption> | undefined,
  page?: number,
): SessionRecord {
  return {
    flow: session.flow,
    serviceCode: session.serviceCode,
    mobile: session.mobile,
    operator: session.operator,
    screen,
    history,
    data,
    selections,
    startedAt: session.startedAt,
    ussd: session.ussd,
    page: page || undefined,
    resume: undefined,
    timedOut: undefined,
    account: session.account,
  };
}

/**
 * A stored value as a session record, or undefined when it is not one this version can continue
 * (written by an earlier or later format, or damaged): checked field by field, never trusted.
 */
export function readRecord(value: unknown): SessionRecord | undefined {
  if (!isObject(value)) return undefined;
  const r = value as Partial<Record<keyof SessionRecord, unknown>>;
  if (
    typeof r.flow !== 'string' ||
    typeof r.serviceCode !== 'string' ||
    typeof r.mobile !== 'string' ||
    (r.operator !== undefined && typeof r.operator !== 'string') ||
    !isScreen(r.screen) ||
    !isObject(r.data) ||
    (r.selections !== undefined && !isObject(r.selections)) ||
    (r.history !== undefined && !(Array.isArray(r.history) && r.history.every(isScreen))) ||
    (typeof r.startedAt !== 'number' && typeof r.startedAt !== 'string') ||
    (r.ussd !== undefined && r.ussd !== true) ||
    (r.page !== undefined && (typeof r.page !== 'number' || !Number.isInteger(r.page) || r.page < 0)) ||
    (r.resume !== undefined && !readResume(r.resume)) ||
    (r.account !== undefined && typeof r.account !== 'string')
  )
    return undefined;
  return value as SessionRecord;
}

function isScreen(value: unknown): value is StoredScreen {
  if (!isObject(value)) return false;
  const s = value as Partial<Record<keyof StoredScreen, unknown>>;
  return (
    typeof s.step === 'string' &&
    typeof s.message === 'string' &&
    typeof s.field === 'string' &&
    typeof s.fieldType === 'string' &&
    (s.kind === 'input' || (s.kind === 'select' && Array.isArray(s.options))) &&
    (s.next === undefined || typeof s.next === 'string') &&
    (s.validation === undefined || isObject(s.validation))
  );
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A stored record as the StoredSession `getSession()` shows (copies, all fields present). */
export function storedSession(sessionId: string, record: SessionRecord): StoredSession {
  const session: StoredSession = {
    sessionId,
    flow: record.flow,
    serviceCode: record.serviceCode,
    mobile: record.mobile,
    screen: record.screen,
    history: record.history ? [...record.history] : [],
    data: record.data,
    selections: record.selections ?? {},
    startedAt: isoTime(record.startedAt),
    channel: record.ussd ? 'ussd' : 'app',
    page: record.page ?? 0,
  };
  if (record.operator !== undefined) session.operator = record.operator;
  if (record.timedOut) session.timedOut = true;
  if (record.account !== undefined) session.account = record.account;
  return session;
}

/**
 * One string for all the sessions that carry the same value: each request's parsed body has its
 * own copy of `Operator` ("mtn") and of the ServiceCode, which a session would otherwise keep.
 * Bounded, so odd values cannot grow it.
 */
export class SharedStrings {
  private readonly strings = new Map<string, string>();

  get(value: string): string {
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    if (this.strings.size < SHARED_STRINGS_LIMIT) this.strings.set(value, value);
    return value;
  }
}

/**
 * `values` without one key: a copy when it has it (stored objects are shared by the versions of a
 * session, so never changed in place; `delete` would also slow the object down).
 */
export function without<T>(values: Record<string, T>, field: string): Record<string, T> {
  if (!Object.hasOwn(values, field)) return values;
  const out: Record<string, T> = {};
  for (const key of Object.keys(values)) if (key !== field) out[key] = values[key]!;
  return out;
}

/**
 * A copy of `values` (none: an empty object) with `field` set to `value` when a field is given,
 * built key by key. The data of a session has the keys its flow chose (entry fields, `ctx.set()`).
 */
export function copyWith<T>(
  values: Record<string, T> | undefined,
  field: string | undefined,
  value: T | undefined,
): Record<string, T> {
  const out: Record<string, T> = {};
  if (values) for (const key of Object.keys(values)) out[key] = values[key]!;
  if (field !== undefined) out[field] = value as T;
  return out;
}

/** Selections without one field; undefined when none is left (nothing is stored then). */
export function selectionsWithout(
  selections: Record<string, SelectOption> | undefined,
  field: string,
): Record<string, SelectOption> | undefined {
  if (!selections) return undefined;
  const rest = without(selections, field);
  return rest === selections || Object.keys(rest).length > 0 ? rest : undefined;
}

/** `list` plus `last`, keeping the newest `limit` entries (a new array: stored ones are shared). */
export function withLast<T>(list: readonly T[] | undefined, last: T, limit: number): T[] {
  if (!list || list.length === 0) return [last];
  const out = list.length >= limit ? list.slice(list.length - limit + 1) : list.slice();
  out.push(last);
  return out;
}

/** An epoch-ms or ISO time as ISO ('' when it is not a valid time). */
function isoTime(value: number | string): string {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
