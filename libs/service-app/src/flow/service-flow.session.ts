/** The stored session's format, in one place: it must stay readable across deploys. */
import { SERVICE_APP_KEYS } from '../service-app.constants.js';
import type { SelectOption } from '../service-app.types.js';
import type { StoredScreen, StoredSession } from '../service-flow.types.js';

const SHARED_STRINGS_LIMIT = 256;

/** A session in the store: minimal, every field present (absent ones undefined) so V8 gives all one shape. */
export interface SessionRecord {
  flow: string;
  serviceCode: string;
  mobile: string;
  operator: string | undefined;
  screen: StoredScreen;
  /** Earlier prompts, oldest first, for "back"; undefined when none or "back" is off. */
  history: StoredScreen[] | undefined;
  data: Record<string, unknown>;
  selections: Record<string, SelectOption> | undefined;
  /** Epoch ms (an ISO string in sessions written by earlier versions). */
  startedAt: number | string;
  /** True on the USSD channel (decided at the start); undefined on app channels. */
  ussd?: true | undefined;
  page?: number | undefined;
  /** The unfinished session the resume question on screen offers. */
  resume?: ResumeRecord | undefined;
  timedOut?: true | undefined;
  /** The named account the session started on; undefined: the default. */
  account?: string | undefined;
}

/** An unfinished session's state at its last answered step, for the next dial (TTL `resume.withinMs`). */
export interface ResumeRecord extends Pick<
  SessionRecord,
  'flow' | 'screen' | 'history' | 'data' | 'selections'
> {
  /** The session it comes from (a cart of that session means it finished: never offered). */
  sessionId: string;
  /** Epoch ms of the last answer, or of the `release` / `timeout` that ended it. */
  at: number;
}

/** Per ServiceCode, Mobile and named account; the hash tag keeps it one Redis Cluster slot. */
export function resumeKey(session: Pick<SessionRecord, 'serviceCode' | 'mobile' | 'account'>): string {
  const { serviceCode, mobile, account } = session;
  return `${SERVICE_APP_KEYS.resume}{${serviceCode}}:${account === undefined ? '' : `${account}:`}${mobile}`;
}

/** The resume record a session leaves at this point (its awaited prompt and what it collected). */
export function resumeRecord(sessionId: string, session: SessionRecord, at: number): ResumeRecord {
  const { flow, screen, history, data, selections } = session;
  return { sessionId, flow, screen, history, data, selections, at };
}

/** A stored value as a resume record, or undefined when it is not one (checked, never trusted). */
export function readResume(value: unknown): ResumeRecord | undefined {
  const r = value as Partial<Record<keyof ResumeRecord, unknown>>;
  return hasState(r) && typeof r.sessionId === 'string' && typeof r.at === 'number'
    ? (value as ResumeRecord)
    : undefined;
}

/** The fields a session and a resume record share, checked. */
function hasState(r: Partial<Record<keyof ResumeRecord, unknown>>): boolean {
  return (
    isObject(r) &&
    typeof r.flow === 'string' &&
    isScreen(r.screen) &&
    isObject(r.data) &&
    (r.selections === undefined || isObject(r.selections)) &&
    (r.history === undefined || (Array.isArray(r.history) && r.history.every(isScreen)))
  );
}

export function sessionKey(sessionId: string): string {
  return `${SERVICE_APP_KEYS.session}${sessionId}`;
}

/** A session record with all its fields, in one order (one shape for V8). */
export function record(
  session: Pick<
    SessionRecord,
    'flow' | 'serviceCode' | 'mobile' | 'operator' | 'startedAt' | 'ussd' | 'account'
  >,
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

/** A stored value as a session record this version can continue, else undefined (never trusted). */
export function readRecord(value: unknown): SessionRecord | undefined {
  const r = value as Partial<Record<keyof SessionRecord, unknown>>;
  if (
    !hasState(r) ||
    typeof r.serviceCode !== 'string' ||
    typeof r.mobile !== 'string' ||
    (r.operator !== undefined && typeof r.operator !== 'string') ||
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

/** One copy of each `Operator` / ServiceCode string for all sessions (bounded against odd values). */
export class SharedStrings {
  private readonly strings = new Map<string, string>();

  get(value: string): string {
    const known = this.strings.get(value);
    if (known !== undefined) return known;
    if (this.strings.size < SHARED_STRINGS_LIMIT) this.strings.set(value, value);
    return value;
  }
}

/** `values` without one key: a copy when it has it (stored objects are shared, never changed). */
export function without<T>(values: Record<string, T>, field: string): Record<string, T> {
  if (!Object.hasOwn(values, field)) return values;
  const { [field]: _dropped, ...rest } = values;
  return rest;
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

/** An epoch-ms or ISO time as ISO ('' when it is not a valid time). */
function isoTime(value: number | string): string {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? '' : date.toISOString();
}
