import { HubtelError, HubtelRedisConfigError, type DeadLetter, type HubtelStore } from 'nestjs-hubtel';
import { DEFAULT_JOB_RECORD_TTL_MS, listDeadLetters, requeueDeadLetter, type JobRecord } from '#internal';
import {
  CliUsageError,
  EXIT,
  intOption,
  painter,
  parseCliArgs,
  usageFailure,
  type CliStreams,
} from './cli-support.js';

/*
 * `hubtel-trigger dead-letters list|replay`: an operator's view of the jobs an app gave up on.
 *
 * It works on the app's Redis store (`--redis-url`), not through an HTTP route of the app: the
 * records are there already (every instance's, whether or not one is running), an operator of a
 * Redis-backed app has that URL, and the app needs no admin endpoint (one more thing to
 * authenticate and expose next to the platform's callbacks). A replay puts the record back to
 * pending; the app's next periodic sweep (every `sweepIntervalMs`, half the lease: 15 s by default on Redis, 5 s with BullMQ) runs
 * it, through BullMQ too when the app uses it, so only the handlers that failed run again. An app
 * on the in-memory store cannot be reached from outside: call `listDeadLetters()` /
 * `replayDeadLetter(id)` on CheckoutService or FulfillmentService instead.
 */

export const DEAD_LETTERS_USAGE = `Usage: hubtel-trigger dead-letters list   --redis-url <url> | --redis-cluster-nodes <nodes> [options]
       hubtel-trigger dead-letters replay <id> --redis-url <url> | --redis-cluster-nodes <nodes> [options]

Lists the jobs an app gave up on (dead letters: handlers that kept failing, callbacks never
accepted), or replays one once its cause is fixed: only the handlers that failed run again.
Works on the app's Redis store; a running instance of the app runs a replayed job at its next
sweep (serviceApp.sweepIntervalMs / checkout.handlers.sweepIntervalMs, half the lease: 15 s
by default, 5 s with BullMQ).

Options:
  --redis-url <url>     the Redis the app keeps its records in (redis:// or rediss://)
  --redis-cluster-nodes <host:port,...>
                        or: some nodes of the Redis Cluster it keeps them in (every master is read)
  --key-prefix <p>      the keyPrefix given to HubtelRedisModule / RedisStore (default none)
  --module <name>       checkout (default) or service-app
  --wait                replay: wait until the job is done (exit 0) or dead again (exit 1)
  --timeout <ms>        how long --wait waits (default 60000)
  --json                print JSON (list: an array; replay: the record's outcome)
  --no-color            plain output (also NO_COLOR=1)

Exit codes: 0 done, 1 unknown id / not dead / dead again (with its last error), 2 usage error (or
ioredis not installed), 3 Redis unreachable, 4 --wait ran out with the job still pending or running.
`;

export const DEAD_LETTER_MODULES = ['checkout', 'service-app'] as const;

export interface DeadLettersOptions {
  action: 'list' | 'replay';
  id?: string;
  /** One Redis; or `redisClusterNodes`. */
  redisUrl?: string;
  redisClusterNodes?: Array<{ host: string; port: number }>;
  keyPrefix?: string;
  module: (typeof DEAD_LETTER_MODULES)[number];
  wait: boolean;
  timeoutMs: number;
  json: boolean;
  noColor: boolean;
}

export function parseDeadLettersArgs(
  argv: string[],
): { help: true } | { help: false; options: DeadLettersOptions } {
  const parsed = parseCliArgs(argv, {
    'redis-url': { type: 'string' },
    'redis-cluster-nodes': { type: 'string' },
    'key-prefix': { type: 'string' },
    module: { type: 'string' },
    wait: { type: 'boolean' },
    timeout: { type: 'string' },
    json: { type: 'boolean' },
    'no-color': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const [action, id, ...rest] = positionals;
  if (action !== 'list' && action !== 'replay')
    throw new CliUsageError(
      `expected "list" or "replay" after dead-letters, got ${JSON.stringify(action ?? '')}`,
    );
  if (action === 'list' && id !== undefined) throw new CliUsageError('list takes no argument');
  if (action === 'replay' && (id === undefined || id === ''))
    throw new CliUsageError('replay needs the <id> of a dead letter');
  if (rest.length > 0) throw new CliUsageError(`unexpected argument "${rest[0]}"`);
  const redisUrl = values['redis-url'];
  const clusterNodes = values['redis-cluster-nodes'];
  if ((redisUrl === undefined) === (clusterNodes === undefined))
    throw new CliUsageError(
      '--redis-url or --redis-cluster-nodes is required, not both (the Redis the app keeps its records in)',
    );
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl))
    throw new CliUsageError('--redis-url must be a redis:// or rediss:// URL');
  const module = (values.module ?? 'checkout') as DeadLettersOptions['module'];
  if (!DEAD_LETTER_MODULES.includes(module))
    throw new CliUsageError(
      `--module must be one of ${DEAD_LETTER_MODULES.join(', ')}, got "${values.module}"`,
    );
  const options: DeadLettersOptions = {
    action,
    ...(redisUrl !== undefined ? { redisUrl } : { redisClusterNodes: parseNodes(clusterNodes!) }),
    module,
    wait: values.wait ?? false,
    timeoutMs: intOption('timeout', values.timeout, 1, 3_600_000) ?? 60_000,
    json: values.json ?? false,
    noColor: values['no-color'] ?? false,
  };
  if (id !== undefined) options.id = id;
  if (values['key-prefix'] !== undefined) options.keyPrefix = values['key-prefix'];
  return { help: false, options };
}

function parseNodes(text: string): Array<{ host: string; port: number }> {
  return text.split(',').map((part) => {
    const match = /^\s*(\[[^\]]+\]|[^:\s]+):(\d{1,5})\s*$/.exec(part);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65_535)
      throw new CliUsageError(
        '--redis-cluster-nodes must be host:port,host:port,... (some nodes of the cluster)',
      );
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

/** The store the CLI talks to: a RedisStore (optional peer `ioredis`), loaded only when used. */
interface ClosableStore extends HubtelStore {
  connect(): Promise<void>;
  close(): Promise<void>;
}

async function openRedis(options: DeadLettersOptions): Promise<ClosableStore> {
  let redis: typeof import('nestjs-hubtel/redis');
  try {
    redis = await import('nestjs-hubtel/redis');
  } catch (error) {
    throw new CliUsageError(
      `dead-letters needs the optional dependency ioredis (npm install ioredis): ${(error as Error).message}`,
    );
  }
  const store = new redis.RedisStore({
    ...(options.redisClusterNodes !== undefined
      ? { cluster: { nodes: options.redisClusterNodes } }
      : { url: options.redisUrl! }),
    ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
  });
  try {
    await store.connect();
  } catch (error) {
    // Said in the CLI's own terms: the flag to use, not the store's option.
    if (error instanceof HubtelRedisConfigError && error.reason === 'CLUSTER_NODE_WITHOUT_CLUSTER_CLIENT')
      throw new CliUsageError(
        '--redis-url points at one node of a Redis Cluster: give --redis-cluster-nodes host:port,... instead',
      );
    if (error instanceof HubtelRedisConfigError) throw new CliUsageError(error.message);
    throw error;
  }
  return store;
}

export async function runDeadLettersCli(argv: string[], io: CliStreams): Promise<number> {
  let parsed;
  try {
    parsed = parseDeadLettersArgs(argv);
  } catch (err) {
    return usageFailure('hubtel-trigger', DEAD_LETTERS_USAGE, io, err);
  }
  if (parsed.help) {
    io.stdout.write(DEAD_LETTERS_USAGE);
    return EXIT.ok;
  }
  const options = parsed.options;
  const p = painter(io.stdout, io.env, options.noColor || options.json);
  let store: ClosableStore;
  try {
    store = await openRedis(options);
  } catch (error) {
    io.stderr.write(`hubtel-trigger: ${(error as Error).message}\n`);
    return error instanceof CliUsageError ? EXIT.usage : EXIT.network;
  }
  try {
    if (options.action === 'list') {
      const letters = await listDeadLetters(store, options.module);
      io.stdout.write(
        options.json ? `${JSON.stringify(letters)}\n` : describeList(letters, options.module, p),
      );
      return EXIT.ok;
    }
    const id = options.id!;
    await requeueDeadLetter(store, options.module, id, DEFAULT_JOB_RECORD_TTL_MS);
    if (!options.wait) {
      io.stdout.write(
        options.json
          ? `${JSON.stringify({ id, status: 'pending' })}\n`
          : `${p('Requeued', 'green')} ${id}: a running instance of the app runs it at its next sweep (add --wait to see the outcome).\n`,
      );
      return EXIT.ok;
    }
    const record = await waitForOutcome(store, options.module, id, options.timeoutMs);
    const status = record?.status ?? 'gone';
    const outcome: Record<string, unknown> = { id, status };
    if (record?.lastError !== undefined && status === 'dead') outcome.lastError = record.lastError;
    if (options.json) io.stdout.write(`${JSON.stringify(outcome)}\n`);
    else if (status === 'done')
      io.stdout.write(`${p('Done', 'green')} ${id}: replayed, its failed handlers succeeded.\n`);
    else if (status === 'dead')
      io.stdout.write(`${p('Dead again', 'red')} ${id}: ${record?.lastError ?? 'it failed again'}\n`);
    else
      io.stdout.write(
        `${p('Still', 'yellow')} ${status} after ${options.timeoutMs} ms: is an instance of the app running (with its sweep on)?\n`,
      );
    // Still pending or running is not "dead again": its own code, so a script can wait longer.
    return status === 'done'
      ? EXIT.ok
      : status === 'pending' || status === 'running'
        ? EXIT.timedOut
        : EXIT.failed;
  } catch (error) {
    if (error instanceof HubtelError && error.code !== 'HUBTEL_STORE_UNAVAILABLE') {
      io.stderr.write(
        options.json
          ? `${JSON.stringify({ code: error.code, message: error.message })}\n`
          : `hubtel-trigger: ${error.code}: ${error.message}\n`,
      );
      return EXIT.failed;
    }
    io.stderr.write(`hubtel-trigger: ${(error as Error).message}\n`);
    return EXIT.network;
  } finally {
    await store.close().catch(() => undefined);
  }
}

function describeList(letters: DeadLetter[], module: string, p: ReturnType<typeof painter>): string {
  if (letters.length === 0) return `No dead letters in the ${module} module.\n`;
  const lines = [`${letters.length} dead letter${letters.length === 1 ? '' : 's'} in the ${module} module:`];
  for (const letter of letters) {
    lines.push(
      `${p(letter.id, 'bold')}  ${letter.attempts} attempt(s), dead since ${letter.deadAt.toISOString()}`,
      `    last error: ${letter.lastError ?? '(none recorded)'}`,
      `    succeeded (not run again): ${letter.succeededHandlers.join(', ') || 'none'}`,
    );
  }
  lines.push('', `Replay one: hubtel-trigger dead-letters replay <id> --redis-url <url> --module ${module}`);
  return `${lines.join('\n')}\n`;
}

async function waitForOutcome(
  store: HubtelStore,
  module: string,
  id: string,
  timeoutMs: number,
): Promise<JobRecord | undefined> {
  const key = `hubtel:${module}:job:${id}`;
  const giveUp = Date.now() + timeoutMs;
  for (;;) {
    const record = (await store.get<JobRecord>(key))?.value;
    if (!record || record.status === 'done' || record.status === 'dead' || Date.now() >= giveUp)
      return record;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
