import type { CartItem, FieldType, SelectOption } from './service-app.types.js';

/** A value collected by a prompt: the normalised entry (phone → `233…`, number/decimal → number). */
export type FlowValue = string | number;

/** Checks on an input prompt's entry, applied before the next step runs. Serialisable on purpose. */
export interface InputValidation {
  /** Reject an empty entry. Default true. */
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  /** Bounds of `number` and `decimal` fields. */
  min?: number;
  max?: number;
  /** The entry must match (text fields). */
  pattern?: RegExp | string;
  /** Explanation shown when any check fails, instead of the default for that check. */
  message?: string;
}

export interface InputPrompt {
  message: string;
  /** `Label` of the prompt. Default: the message. */
  label?: string;
  /** `FieldType`. Default `text`. `phone` entries are normalised to `233241234567`. */
  fieldType?: FieldType;
  /** `FieldName`, and the key of the entry in `ctx.data`. Default: the step's name. */
  name?: string;
  /** Step that receives the entry. Default: the step declared after this one. */
  next?: string;
  validation?: InputValidation;
}

export interface SelectPrompt {
  message: string;
  /** `Label` of the prompt. Default: the message. */
  label?: string;
  /** The options (`Data`). `Amount` defaults to 0; `Value` must be unique. */
  options: ReadonlyArray<{ Display: string; Value: string | number; Amount?: number }>;
  /** Key of the chosen `Value` in `ctx.data` (`FieldName` is '' on the wire). Default: the step's name. */
  name?: string;
  /** Step that receives the choice. Default: the step declared after this one. */
  next?: string;
  /** `FieldType` sent with the select. Default `text`. */
  fieldType?: FieldType;
}

export interface AddToCartReply {
  message: string;
  /** `Label`. Default: the message. */
  label?: string;
  item: CartItem;
}

/** What a step answers. Build it with the context: `ctx.input()`, `ctx.select()`, ... */
export type FlowReply =
  | { readonly kind: 'input'; readonly prompt: InputPrompt }
  | { readonly kind: 'select'; readonly prompt: SelectPrompt }
  | { readonly kind: 'cart'; readonly cart: AddToCartReply }
  | { readonly kind: 'end'; readonly message: string; readonly label?: string }
  | { readonly kind: 'goto'; readonly step: string }
  | { readonly kind: 'reject'; readonly reason: string };

/** A prompt as stored (a re-ask or "back" never re-runs a step); shared between sessions and frozen. */
export interface StoredScreen {
  readonly step: string;
  readonly kind: 'input' | 'select';
  readonly message: string;
  readonly label: string | null;
  readonly fieldType: string;
  /** Key of the answer in the session data (FieldName for input). */
  readonly field: string;
  readonly next?: string;
  readonly options?: readonly SelectOption[];
  readonly validation?: Readonly<StoredValidation>;
}

/** An input prompt's checks as stored (the pattern as source and flags, so it survives JSON). */
export type StoredValidation = Omit<InputValidation, 'pattern'> & {
  pattern?: { source: string; flags: string };
};

/** What a stored session and its cart both say of it. */
export interface StoredSessionFields {
  sessionId: string;
  flow: string;
  serviceCode: string;
  mobile: string;
  operator?: string;
  data: Record<string, unknown>;
  /** The named account the session started on; absent: the default. */
  account?: string;
}

/** A session as `ServiceFlowService.getSession()` shows it (the store keeps a more compact record). */
export interface StoredSession extends StoredSessionFields {
  /** `ussd` (menus in `Message`, paged) or `app`, decided at the session's start. */
  channel: 'ussd' | 'app';
  /** The page of the USSD menu on screen (0 = first). */
  page: number;
  /** The platform said `timeout`: nothing more runs in this session. */
  timedOut?: true;
  screen: StoredScreen;
  /** Earlier prompts, oldest first, for "back" (always empty when "back" is off). */
  history: StoredScreen[];
  selections: Record<string, SelectOption>;
  /** ISO time the session started. */
  startedAt: string;
}

/** A cart answered to the platform, waiting for its fulfillment request (TTL: `cartTtlMs`). */
export interface StoredCart extends StoredSessionFields {
  item: CartItem;
  createdAt: string;
}
