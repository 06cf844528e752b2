import type { SelectOption } from './service-app.types.js';
import type {
  AddToCartReply,
  FlowReply,
  FlowValue,
  InputPrompt,
  SelectPrompt,
} from './service-flow.types.js';

/** Who is in the session, from the platform's request. */
export interface FlowSessionInfo {
  sessionId: string;
  /** Personal data: mask it before logging (`maskMsisdn`). */
  mobile: string;
  serviceCode: string;
  /** `mtn`, `Hubtel-Android`, ..., when the platform said. */
  operator?: string;
  /** `ussd`: the phone shows `Message` only (menus are written into it, paged); `app`: a Hubtel app. */
  channel: 'ussd' | 'app';
  /** The session's account (`default`, or a named account: the path it started on). */
  account: string;
  /** On a `favorite` start: what the request carried, to skip steps already answered. */
  favorite?: FavoriteStart;
}

/** What a `favorite` request (a start with the user's saved choices) carried. */
export interface FavoriteStart {
  /** The request's `Message` (the saved data) and `ClientState` ('' when absent). */
  readonly message: string;
  readonly clientState: string;
}

/**
 * What a step sees, and how it answers (one per step run). `ctx.set()` values are kept only if the
 * step's answer is used (not re-asked, timed out or failed).
 */
export class FlowContext<TData extends Record<string, unknown> = Record<string, unknown>> {
  /** The session's own fields, as `session` has them. */
  declare readonly account: string;
  declare readonly sessionId: string;
  declare readonly mobile: string;
  declare readonly serviceCode: string;
  declare readonly channel: 'ussd' | 'app';
  declare readonly favorite?: FavoriteStart;

  /** @internal Built by the module for each step run. */
  constructor(
    readonly step: string,
    readonly session: Readonly<FlowSessionInfo>,
    private readonly values: Record<string, unknown>,
    private readonly choices: Record<string, SelectOption>,
    /** The entry that answered the previous prompt, validated and normalised; undefined at the start. */
    readonly answer?: FlowValue,
    /** As typed (trimmed), and the field `answer` filled. */
    readonly rawAnswer?: string,
    readonly field?: string,
  ) {
    const { account, sessionId, mobile, serviceCode, channel, favorite } = session;
    Object.assign(this, { account, sessionId, mobile, serviceCode, channel, favorite });
  }

  /** Everything collected so far in this session, by field name (plus what steps `set`). */
  get data(): Readonly<Partial<TData>> & Readonly<Record<string, unknown>> {
    return this.values as Readonly<Partial<TData>>;
  }

  /** The option chosen at the prompt that filled `field` (default: just answered); shared and frozen. */
  selected(field: string | undefined = this.field): Readonly<SelectOption> | undefined {
    return field === undefined ? undefined : this.choices[field];
  }

  /** Keeps a value in the session data (for later steps and the cart). Plain JSON data only. */
  set<K extends string>(key: K, value: K extends keyof TData ? TData[K] : unknown): this {
    this.values[key] = value;
    return this;
  }

  /** Asks for a free entry (`DataType: input`). */
  input(prompt: InputPrompt): FlowReply {
    return { kind: 'input', prompt };
  }

  /** Offers options (`DataType: select`); the chosen `Value` comes back as the answer. */
  select(prompt: SelectPrompt): FlowReply {
    return { kind: 'select', prompt };
  }

  /** Puts the item in the cart and hands the user over to payment (`Type: AddToCart`); ends the flow. */
  addToCart(cart: AddToCartReply): FlowReply {
    return { kind: 'cart', cart };
  }

  /** Shows a final message and ends the session (`Type: release`). */
  end(message: string, options: { label?: string } = {}): FlowReply {
    return { kind: 'end', message, label: options.label };
  }

  /** Runs another step now, with the same answer and data (branching). */
  goTo(step: string): FlowReply {
    return { kind: 'goto', step };
  }

  /** Refuses the answer: the previous prompt is asked again, `reason` shown above it. */
  reject(reason: string): FlowReply {
    return { kind: 'reject', reason };
  }
}

/** A step: reads the context, answers a reply. May be async (bounded by the step budget). */
export type FlowStepHandler<TData extends Record<string, unknown> = Record<string, unknown>> = (
  ctx: FlowContext<TData>,
) => FlowReply | Promise<FlowReply>;

/**
 * Resuming: when the same `Mobile` dials the same ServiceCode within `withinMs` of an unfinished
 * session's last answer (or end), the first screen asks whether to continue.
 */
export interface FlowResumeOptions {
  readonly withinMs: number;
  /** The question. Default `messages.resume`; must fit one USSD screen with its two answers. */
  readonly message?: string;
}

/** One flow, however it was written (decorated class or builder). */
export interface ServiceFlowDefinition {
  /** Unique name (the class name for decorated flows). Stored in sessions: keep it stable. */
  readonly name: string;
  readonly serviceCodes: readonly string[];
  /** Serves every ServiceCode not routed to another flow. */
  readonly isDefault: boolean;
  /** Steps in declaration order (the default `next` of a prompt is the step after it). */
  readonly steps: ReadonlyArray<{ readonly name: string; readonly handler: FlowStepHandler<any> }>;
  readonly start: string;
  /** Offer to continue an unfinished session on the next dial (off when absent). */
  readonly resume?: FlowResumeOptions;
}
