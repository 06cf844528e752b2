import { parseArgs, type ParseArgsConfig } from 'node:util';

// The commands' argument parsing (hubtel-sandbox's, and the testing kit's with its cli.usage.ts):
// all a bin loads to answer --help and malformed arguments (no Nest, no package).
export type CliIO = { stdout: { write(text: string): unknown }; stderr: { write(text: string): unknown } };

/** Bad command-line arguments: the command prints the message and its usage, and exits 2. */
export class CliUsageError extends Error {
  override readonly name = 'CliUsageError';
}

/** Exit codes: 1 the other side refused, 3 it could not be reached, 4 a wait ran out. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2, network: 3, timedOut: 4, interrupted: 130 });

/** node:util's parseArgs as every command uses it (strict, positionals allowed); its errors as usage errors. */
type CliArgsConfig<T> = { args: string[]; strict: true; allowPositionals: true; options: T };
export function parseCliArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
): ReturnType<typeof parseArgs<CliArgsConfig<T>>> {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals: true, options });
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
}

/** `'a b c'` → `'a' | 'b' | 'c'`. */
type Words<S extends string> = S extends `${infer H} ${infer T}` ? H | Words<T> : S;
type CliOptions<S extends string, B extends string> = { [K in Words<S>]: { type: 'string' } } & {
  [K in Words<B>]: { type: 'boolean' };
} & { help: { type: 'boolean'; short: 'h' } };

/** parseArgs options from space-separated names: `strings` take a value, `flags` do not; plus -h. */
export function cliOptions<const S extends string, const B extends string>(
  strings: readonly S[],
  flags: readonly B[],
): CliOptions<S, B> {
  const names = (list: readonly string[]) => list.flatMap((words) => words.split(' '));
  const entries = [
    ...names(strings).map((name) => [name, { type: 'string' }]),
    ...names(flags).map((name) => [name, { type: 'boolean' }]),
  ];
  return { ...Object.fromEntries(entries), help: { type: 'boolean', short: 'h' } } as CliOptions<S, B>;
}

/** The options `parse` reads, or the exit code once `--help` (0) or a usage error (2) was printed. */
export function parseOrExit<O>(
  command: string,
  usage: string,
  io: CliIO,
  parse: () => { help: true } | { help: false; options: O },
): O | number {
  try {
    const parsed = parse();
    if (!parsed.help) return parsed.options;
    io.stdout.write(usage);
    return EXIT.ok;
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    io.stderr.write(`${command}: ${err.message}\n\n${usage}`);
    return EXIT.usage;
  }
}

/** A positive integer option, or a usage error naming it. */
export function intOption(
  name: string,
  value: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new CliUsageError(`--${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  return Number(value);
}

/** An absolute http(s) URL option, or a usage error naming it. */
export function urlOption(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliUsageError(`${name} must be an absolute http(s) URL, got "${value.slice(0, 200)}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CliUsageError(`${name} must be an http(s) URL, got ${url.protocol}`);
  return url;
}

/** A bin's first step: --help and what parseArgs refuses, answered; undefined: load the command and run it. */
export function answeredUsage(
  command: string,
  usage: string,
  options: NonNullable<ParseArgsConfig['options']>,
  argv: string[],
  io: CliIO,
): number | undefined {
  return parseOrExit(command, usage, io, () =>
    parseCliArgs(argv, options).values.help ? { help: true } : { help: false, options: undefined },
  );
}
