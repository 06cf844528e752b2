import { OnEvent } from '@nestjs/event-emitter';
import { HUBTEL_DEFAULT_ACCOUNT } from '../accounts/hubtel-accounts.resolver.js';
import { HubtelConfigError } from '../errors/hubtel.errors.js';

// Derived from OnEvent itself: @nestjs/event-emitter 3.x (Nest 11) does not export OnEventOptions.
type OnEventOptions = Exclude<Parameters<typeof OnEvent>[1], undefined>;

/**
 * Options of the handler and listener decorators: a listener decorator passes @OnEvent's on; a
 * handler decorator reads `id`, `account` and `prependListener` (called before the others).
 */
export type HubtelHandlerOptions = Omit<OnEventOptions, 'async' | 'suppressErrors'> & {
  /**
   * The handler's stable identity instead of `ClassName.methodName`, which job records remember:
   * keep it across renames (set it when a class is provided twice or the build minifies names).
   */
  id?: string;
  /**
   * Run only for the events of this account or these (`'default'` is the default account's); for
   * other accounts' events the method returns at once and counts as handled.
   */
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
 * Builds the decorator of a pipeline job's handlers (`@OnCheckoutPaid()`): our own metadata, not
 * `@OnEvent`, so the pipeline calls the method itself, retried until it succeeds, and only then
 * emits the event to listeners (docs/architecture.md, "Handlers and events").
 */
export function createHandlerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  HANDLER_EVENTS.add(event);
  return (options: HubtelHandlerOptions = {}) => {
    const { id, account, prependListener } = options;
    const accounts = account === undefined ? undefined : accountSet(account, event);
    const entry: HubtelHandlerMetadata = {
      event,
      ...(id !== undefined ? { id } : {}),
      ...(prependListener ? { prepend: true } : {}),
    };
    return (_target, _key, descriptor) => {
      if (accounts) descriptor = filterByAccount(descriptor, accounts);
      const method = descriptor.value as object;
      const entries = (Reflect.getMetadata(HUBTEL_HANDLER_METADATA, method) as HubtelHandlerMetadata[]) ?? [];
      Reflect.defineMetadata(HUBTEL_HANDLER_METADATA, [...entries, entry], method);
      return descriptor;
    };
  };
}

/**
 * Builds the decorator of an event the modules emit (`@OnCheckoutRejected()`): `@OnEvent` with the
 * `account` filter, synchronous and not suppressing errors, so the module sees a listener fail.
 */
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
