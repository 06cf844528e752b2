import { OnEvent } from '@nestjs/event-emitter';
import { HUBTEL_DEFAULT_ACCOUNT } from '../hubtel.constants.js';
import { HubtelConfigError } from '../errors/hubtel.errors.js';

// Derived from OnEvent itself: @nestjs/event-emitter 3.x (Nest 11) does not export OnEventOptions.
type OnEventOptions = Exclude<Parameters<typeof OnEvent>[1], undefined>;

/** Options of the handler and listener decorators (a listener passes @OnEvent's on). */
export type HubtelHandlerOptions = Omit<OnEventOptions, 'async' | 'suppressErrors'> & {
  /** The handler's stable identity (job records remember it), instead of `ClassName.methodName`. */
  id?: string;
  /** Run only for these accounts' events (`'default'`); for others it returns at once, handled. */
  account?: string | readonly string[];
};

export const HUBTEL_HANDLER_METADATA = 'hubtel:handler';

export interface HubtelHandlerMetadata {
  event: string;
  id?: string;
  prepend?: boolean;
}

/** Events a handler decorator handles: a plain `@OnEvent` on one is warned about (a 0.2.0 handler). */
export const HANDLER_EVENTS = new Set<string>();

/**
 * The decorator of a pipeline job's handlers (`@OnCheckoutPaid()`): not `@OnEvent`, so the pipeline
 * calls the method itself, retried until it succeeds, then emits the event to listeners.
 */
export function createHandlerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  HANDLER_EVENTS.add(event);
  return (options: HubtelHandlerOptions = {}) => {
    const { id, account, prependListener } = options;
    const accounts = account === undefined ? undefined : accountSet(account, event);
    const entry: HubtelHandlerMetadata = { event, id, prepend: prependListener };
    return (_target, _key, descriptor) => {
      if (accounts) descriptor = filterByAccount(descriptor, accounts);
      const method = descriptor.value as object;
      const entries = (Reflect.getMetadata(HUBTEL_HANDLER_METADATA, method) as HubtelHandlerMetadata[]) ?? [];
      Reflect.defineMetadata(HUBTEL_HANDLER_METADATA, [...entries, entry], method);
      return descriptor;
    };
  };
}

/** The decorator of an emitted event (`@OnCheckoutRejected()`): `@OnEvent`, sync, errors not suppressed. */
export function createListenerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  return (options: HubtelHandlerOptions = {}) => {
    const { id: _id, account, ...rest } = options;
    const onEvent = OnEvent(event, { ...rest, async: false, suppressErrors: false });
    if (account === undefined) return onEvent;
    const accounts = accountSet(account, event);
    return (target, key, descriptor) => {
      descriptor = filterByAccount(descriptor, accounts);
      onEvent(target, key, descriptor);
      return descriptor;
    };
  };
}

function accountSet(account: string | readonly string[], event: string): ReadonlySet<string> {
  const names = typeof account === 'string' ? [account] : account;
  if (!Array.isArray(names) || names.length === 0 || names.some((name) => typeof name !== 'string'))
    throw new HubtelConfigError(
      `${event} handler account`,
      'must be an account name or a non-empty array of them',
    );
  return new Set(names);
}

/** Returns at once for another account's event; keeps earlier metadata and the name (ids use it). */
function filterByAccount<T>(
  descriptor: TypedPropertyDescriptor<T>,
  accounts: ReadonlySet<string>,
): TypedPropertyDescriptor<T> {
  const method = descriptor.value as unknown as (...args: unknown[]) => unknown;
  if (typeof method !== 'function') return descriptor;
  const filtered = function (this: unknown, ...args: unknown[]): unknown {
    const account = (args[0] as { account?: unknown } | null | undefined)?.account ?? HUBTEL_DEFAULT_ACCOUNT;
    return typeof account === 'string' && accounts.has(account) ? method.apply(this, args) : undefined;
  };
  Object.defineProperty(filtered, 'name', { value: method.name });
  for (const key of Reflect.getMetadataKeys(method) as unknown[])
    Reflect.defineMetadata(key, Reflect.getMetadata(key, method), filtered);
  return { ...descriptor, value: filtered as unknown as T };
}
