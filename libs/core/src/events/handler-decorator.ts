import { OnEvent } from '@nestjs/event-emitter';
import { HUBTEL_DEFAULT_ACCOUNT } from '../accounts/hubtel-accounts.js';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { HUBTEL_HANDLER_ID_METADATA } from './handler-registry.js';

// Derived from OnEvent itself: @nestjs/event-emitter 3.x (Nest 11) does not export OnEventOptions.
type OnEventOptions = Exclude<Parameters<typeof OnEvent>[1], undefined>;

export type HubtelHandlerOptions = Omit<OnEventOptions, 'async' | 'suppressErrors'> & {
  /**
   * The handler's stable identity for this event, instead of `ClassName.methodName`: a job record
   * remembers which handlers succeeded by it, so keep it when renaming the class or method (and
   * set it when one class is provided twice, or the build minifies class names).
   */
  id?: string;
  /**
   * Run only for the events of this account, or these accounts (`'north'`, `['north', 'south']`;
   * `'default'` is the default account's). Other accounts' events pass the method by: it returns
   * at once and counts as handled. It filters the method, whichever events it handles.
   */
  account?: string | readonly string[];
};

/**
 * Builds a handler decorator (`@OnCheckoutPaid()`) as a thin wrapper over `@OnEvent`.
 * It forces `suppressErrors: false` and `async: false`: the inbound pipeline must see a handler
 * fail in order to retry it and, in the end, dead-letter it. (The pipeline calls discovered
 * `@OnEvent` methods directly, so it sees plain `@OnEvent` handlers fail too; `suppressErrors`
 * matters for other `emit()` callers and request-scoped providers.)
 */
export function createHandlerDecorator(event: string): (options?: HubtelHandlerOptions) => MethodDecorator {
  return (options: HubtelHandlerOptions = {}) => {
    const { id, account, ...rest } = options;
    const onEvent = OnEvent(event, { ...rest, async: false, suppressErrors: false });
    if (id === undefined && account === undefined) return onEvent;
    const accounts = account === undefined ? undefined : accountSet(account, event);
    return (target, key, descriptor) => {
      if (accounts) descriptor = filterByAccount(descriptor, accounts);
      if (id !== undefined) {
        const method = descriptor.value as object;
        const ids = (Reflect.getMetadata(HUBTEL_HANDLER_ID_METADATA, method) as Record<string, string>) ?? {};
        Reflect.defineMetadata(HUBTEL_HANDLER_ID_METADATA, { ...ids, [event]: id }, method);
      }
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

/**
 * The method, wrapped to return at once for an event (its first argument) of another account; an
 * event without `account` is the default account's. The metadata of decorators applied before
 * moves to the wrapper, which keeps the method's name (handler identities use it).
 */
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
