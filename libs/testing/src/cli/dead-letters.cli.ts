import { Logger } from '@nestjs/common';
import { HubtelError, HubtelRedisConfigError, type DeadLetter, type HubtelStore } from 'nestjs-hubtel';
import type { BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import type { RedisStore } from 'nestjs-hubtel/redis';
import { DEFAULT_JOB_RECORD_TTL_MS, listDeadLetters, requeueDeadLetter, type JobRecord } from '#internal';
import { CliUsageError, EXIT, intOption, parseCliArgs, parseOrExit } from '#light/sandbox';
import { painter, type CliStreams } from './cli.support.js';
import { DEAD_LETTERS_OPTIONS, DEAD_LETTERS_USAGE } from './cli.usage.js';

// `hubtel-trigger dead-letters list|replay` works on the app's Redis store, not an HTTP route: every
// replica's records are there, and the app needs no admin endpoint to secure. A replay puts the record
// back to `pending` only once BullMQ answers: a record is never left pending with no run to take it.

export const DEAD_LETTER_MODULES = ['checkout', 'service-app'] as const;
type RedisNodes = Array<{ host: string; port: number }>;

export interface DeadLettersOptions {
  action: 'list' | 'replay';
  id?: string;
  /** One Redis; or `redisClusterNodes`. */
  redisUrl?: string;
  redisClusterNodes?: RedisNodes;
  keyPrefix?: string;
  /** The app's BullMQ prefix (HubtelBullmqModule's `prefix`); undefined: the runner's default. */
  bullmqPrefix?: string;
  module: (typeof DEAD_LETTER_MODULES)[number];
  wait: boolean;
  timeoutMs: number;
  json: boolean;
  noColor: boolean;
}

export function parseDeadLettersArgs(
  argv: string[],
): { help: true } | { help: false; options: DeadLettersOptions } {
  const { values, positionals } = parseCliArgs(argv, DEAD_LETTERS_OPTIONS);
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
    id,
    ...(redisUrl !== undefined ? { redisUrl } : { redisClusterNodes: parseNodes(clusterNodes!) }),
    keyPrefix: values['key-prefix'],
    bullmqPrefix: values['bullmq-prefix'],
    module,
    wait: values.wait ?? false,
    timeoutMs: intOption('timeout', values.timeout, 1, 3_600_000) ?? 60_000,
    json: values.json ?? false,
    noColor: values['no-color'] ?? false,
  };
  if (options.bullmqPrefix?.trim() === '') throw new CliUsageError('--bullmq-prefix must not be empty');
  return { help: false, options };
}

function parseNodes(text: string): RedisNodes {
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

/** nestjs-hubtel/redis and /bullmq need the optional peers ioredis and bullmq: loaded only when used. */
async function optionalPeer<T>(load: () => Promise<T>, command: string, peer: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const message = (error as Error).message;
    throw new CliUsageError(
      `${command} needs the optional dependency ${peer} (npm install ${peer}): ${message}`,
    );
  }
}

/** The Redis the options name, as the store and the runner take it. */
function connection(options: DeadLettersOptions): { cluster: { nodes: RedisNodes } } | { url: string } {
  return options.redisClusterNodes !== undefined
    ? { cluster: { nodes: options.redisClusterNodes } }
    : { url: options.redisUrl! };
}

async function openRedis(options: DeadLettersOptions): Promise<RedisStore> {
  const redis = await optionalPeer(() => import('nestjs-hubtel/redis'), 'dead-letters', 'ioredis');
  const store = new redis.RedisStore({
    ...connection(options),
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

async function openRunner(options: DeadLettersOptions, io: CliStreams): Promise<BullmqJobRunner> {
  const bullmq = await optionalPeer(() => import('nestjs-hubtel/bullmq'), 'dead-letters replay', 'bullmq');
  let runner: BullmqJobRunner;
  try {
    runner = new bullmq.BullmqJobRunner({
      ...connection(options),
      ...(options.bullmqPrefix === undefined ? {} : { prefix: options.bullmqPrefix }),
      work: false, // only queues the run: the app's workers take it
      logger: new StderrLogger(io),
    });
  } catch (error) {
    if (error instanceof HubtelRedisConfigError && error.reason === 'PREFIX_WITHOUT_HASH_TAG')
      throw new CliUsageError(
        `--bullmq-prefix "${options.bullmqPrefix}" has no {hash tag}, which BullMQ needs on a Redis Cluster (the app could not use it either): give the app's prefix`,
      );
    if (error instanceof HubtelError) throw new CliUsageError(error.message);
    throw error;
  }
  try {
    await runner.connect(options.module);
  } catch (error) {
    await runner.close().catch(() => undefined);
    if (error instanceof HubtelRedisConfigError) throw new CliUsageError(error.message);
    throw error;
  }
  return runner;
}

/** The runner's log lines (queue errors), on stderr: stdout is the command's answer (--json). */
class StderrLogger extends Logger {
  constructor(private readonly io: CliStreams) {
    super('Hubtel:BullMQ');
  }
  override log(message: unknown, level = 'log'): void {
    this.io.stderr.write(`hubtel-trigger: bullmq ${level}: ${String(message)}\n`);
  }
  override warn(message: unknown): void {
    this.log(message, 'warn');
  }
  override error(message: unknown): void {
    this.log(message, 'error');
  }
  override debug(): void {}
  override verbose(): void {}
}

export async function runDeadLettersCli(argv: string[], io: CliStreams): Promise<number> {
  const options = parseOrExit('hubtel-trigger', DEAD_LETTERS_USAGE, io, () => parseDeadLettersArgs(argv));
  if (typeof options === 'number') return options;
  const p = painter(io.stdout, io.env, options.noColor || options.json);
  const out = (line: string) => io.stdout.write(`${line}\n`);
  const fail = (error: unknown): number => {
    io.stderr.write(`hubtel-trigger: ${(error as Error).message}\n`);
    return error instanceof CliUsageError ? EXIT.usage : EXIT.network;
  };
  const store = await openRedis(options).catch(fail);
  if (typeof store === 'number') return store;
  let runner: BullmqJobRunner | undefined;
  try {
    if (options.action === 'list') {
      const letters = await listDeadLetters(store, options.module);
      out(options.json ? JSON.stringify(letters) : describeList(letters, options.module, p));
      return EXIT.ok;
    }
    const id = options.id!;
    const opened = await openRunner(options, io).catch(fail);
    if (typeof opened === 'number') return opened;
    runner = opened;
    await requeueDeadLetter(store, options.module, id, { ttlMs: DEFAULT_JOB_RECORD_TTL_MS, runner });
    if (!options.wait) {
      out(
        options.json
          ? JSON.stringify({ id, status: 'pending' })
          : `${p('Requeued', 'green')} ${id}: queued on BullMQ, a running replica of the app runs it now (add --wait to see the outcome).`,
      );
      return EXIT.ok;
    }
    const record = await waitForOutcome(store, options.module, id, options.timeoutMs);
    const status = record?.status ?? 'gone';
    const outcome: Record<string, unknown> = { id, status };
    if (record?.lastError !== undefined && status === 'dead') outcome.lastError = record.lastError;
    if (options.json) out(JSON.stringify(outcome));
    else if (status === 'done') out(`${p('Done', 'green')} ${id}: replayed, its failed handlers succeeded.`);
    else if (status === 'dead')
      out(`${p('Dead again', 'red')} ${id}: ${record?.lastError ?? 'it failed again'}`);
    else if (status === 'pending')
      out(
        `${p('Still', 'yellow')} pending after ${options.timeoutMs} ms: is a replica of the app running, with its BullMQ workers on this Redis (prefix ${options.bullmqPrefix ?? DEFAULT_BULLMQ_PREFIX})?`,
      );
    else out(`${p('Gone', 'red')} ${id}: its record was removed (expired?) before it ended.`);
    // Still pending is not "dead again": its own code, so a script can wait longer.
    return status === 'done' ? EXIT.ok : status === 'pending' ? EXIT.timedOut : EXIT.failed;
  } catch (error) {
    // The store or BullMQ unreachable (a run not queued is dead again: replay it later): exit 3.
    if (error instanceof HubtelError && error.code !== 'HUBTEL_STORE_UNAVAILABLE') {
      io.stderr.write(
        options.json
          ? `${JSON.stringify({ code: error.code, message: error.message })}\n`
          : `hubtel-trigger: ${error.code}: ${error.message}\n`,
      );
      return EXIT.failed;
    }
    return fail(error);
  } finally {
    await runner?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
  }
}

/** BullmqJobRunner's default prefix (said in messages; the runner applies it itself). */
const DEFAULT_BULLMQ_PREFIX = '{hubtel}:bull';

function describeList(letters: DeadLetter[], module: string, p: ReturnType<typeof painter>): string {
  if (letters.length === 0) return `No dead letters in the ${module} module.`;
  const lines = [`${letters.length} dead letter${letters.length === 1 ? '' : 's'} in the ${module} module:`];
  for (const letter of letters)
    lines.push(
      `${p(letter.id, 'bold')}  ${letter.attempts} attempt(s), dead since ${letter.deadAt.toISOString()}`,
      `    last error: ${letter.lastError ?? '(none recorded)'}`,
      `    succeeded (not run again): ${letter.succeededHandlers.join(', ') || 'none'}`,
    );
  lines.push('', `Replay one: hubtel-trigger dead-letters replay <id> --redis-url <url> --module ${module}`);
  return lines.join('\n');
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
