import { HubtelConfigError } from '../errors/hubtel.errors.js';

/**
 * Where settings come from: `process.env`, any string map, a getter (`(key) => config.get(key)`), or an
 * object with a `get(key)` method (a @nestjs/config ConfigService itself).
 */
export type HubtelEnvSource =
  | ((key: string) => string | number | boolean | undefined | null)
  | { get(key: string): unknown }
  | Readonly<Record<string, string | undefined>>;

/** One raw variable from a source, trimmed; blank counts as unset (an empty `.env` line). */
export function readEnvValue(source: HubtelEnvSource, key: string): string | undefined {
  let raw: unknown;
  if (typeof source === 'function') raw = source(key);
  else if (typeof (source as { get?: unknown }).get === 'function')
    raw = (source as { get(key: string): unknown }).get(key);
  else raw = (source as Readonly<Record<string, unknown>>)[key];
  if (raw === undefined || raw === null) return undefined;
  const text = String(raw).trim();
  return text === '' ? undefined : text;
}

/** A numeric variable; a value that is not a plain number fails naming the variable. */
export function readEnvNumber(source: HubtelEnvSource, key: string): number | undefined {
  const text = readEnvValue(source, key);
  if (text === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new HubtelConfigError(key, 'must be a number (environment variable)');
  return Number(text);
}

/** Drops undefined fields (env values kept under overrides, payloads plain JSON); no entries arrays (hot path). */
export function dropUndefined<T extends object>(value: T): T {
  const out = {} as T;
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out;
}

/**
 * Runs a module's check on options read from the environment, so a bad or missing value fails at
 * once naming its variable (`variables`: option path → variable); a value `overrides` gives, or a
 * problem with no variable, is left to bootstrap (the app may still add the option).
 */
export function checkOptionsFromEnv(
  check: () => unknown,
  variables: Readonly<Record<string, string>>,
  overrides: object = {},
): void {
  try {
    check();
  } catch (error) {
    if (!(error instanceof HubtelConfigError)) throw error;
    const variable = Object.hasOwn(variables, error.option) ? variables[error.option] : undefined;
    if (variable === undefined || overridden(overrides, error.option)) return;
    const problem = error.problem.replace(/^is required\b/, 'is not set');
    throw new HubtelConfigError(variable, `${problem} (environment variable of option ${error.option})`);
  }
}

/** Whether `overrides` gives a value at `path` (its first segment, the module prefix, skipped). */
function overridden(overrides: object, path: string): boolean {
  let value: unknown = overrides;
  for (const key of path.split('.').slice(1))
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value !== undefined;
}
