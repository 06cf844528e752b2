/**
 * Command line of `npm run bench [-- --quick] [--only=inbound,sms,sessions,latency] [--out=FILE]
 * [--profile[=S] | --no-profile] [--equal-load[=RATE]] [--keep-servers] [--duration=S] [--rounds=N] [--connections=N] [--shapes=…]
 * [--variants=…] [--adapters=…] [--recipients=N] [--big-recipients=N] [--sessions=N] [--rates=100,300,500] [--replica-warmup=S] [--replica-rounds=N]`.
 * `--rates`: the rates of the latency section's two-replica rows (the suite and the bare BullMQ
 * baseline at each; default 100,300,500).
 */
export interface InboundConfig {
  connections: number;
  durationSec: number;
  warmupSec: number;
  rounds: number;
  /** Equal-load pass: req/s offered to every server, and seconds per cell (0 skips it). */
  fixedRate: number;
  fixedSec: number;
  /** Seconds per shape of the CPU-profile pass; 0 skips it. */
  profileSec: number;
  /** One process per module server for every run (its heap grows run after run). */
  keepServers?: boolean;
  shapes?: string[];
  variants?: string[];
  adapters?: string[];
}

export interface BenchConfig {
  mode: 'full' | 'quick' | 'smoke';
  /** Run the CPU-profile passes (where the time goes). On in full mode. */
  profile: boolean;
  only: Set<string>;
  out: string;
  inbound: InboundConfig;
  sms: {
    recipients: number;
    bigRecipients: number;
    /** Recipients each sender sends first, unmeasured, so its code is compiled (as in a running app). */
    warmupRecipients: number;
    batchSize: number;
    concurrency: number;
    rounds: number;
  };
  sessions: { live: number; concurrent: number; durationSec: number; warmupSec: number; thinkMs: number };
  latency: {
    rate: number;
    durationSec: number;
    warmupSec: number;
    /** Warm-up of the two-replica rows (`--replica-warmup=S`), suite and baseline alike. */
    replicaWarmupSec: number;
    /**
     * Rounds of the two-replica rows at each rate (`--replica-rounds=N`; 3 in full mode): suite
     * and baseline alternate which goes first, and the goals judge the median of the rounds.
     */
    replicaRounds: number;
    connections: number;
    /** The rates of the two-replica rows (suite and bare BullMQ baseline at each), req/s in all. */
    rates: number[];
  };
}

export const SECTIONS = ['inbound', 'sms', 'sessions', 'latency'];
const KNOWN_FLAGS = [
  'quick',
  'smoke',
  'only',
  'out',
  'profile',
  'no-profile',
  'equal-load',
  'keep-servers',
  'connections',
  'duration',
  'rounds',
  'shapes',
  'variants',
  'adapters',
  'recipients',
  'big-recipients',
  'sessions',
  'rates',
  'replica-warmup',
  'replica-rounds',
];

export function parseArgs(argv: string[], defaultOut: string): BenchConfig {
  const flags = new Map<string, string | true>();
  for (const arg of argv) {
    const match = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (!match || !KNOWN_FLAGS.includes(match[1]!)) {
      throw new Error(`unknown argument "${arg}" (known: ${KNOWN_FLAGS.map((f) => `--${f}`).join(' ')})`);
    }
    flags.set(match[1]!, match[2] ?? true);
  }
  const mode = flags.has('smoke') ? 'smoke' : flags.has('quick') ? 'quick' : 'full';
  const text = (name: string) => (typeof flags.get(name) === 'string' ? String(flags.get(name)) : undefined);
  const list = (name: string) => text(name)?.split(',');
  const num = (name: string, fallback: number) => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0)
      throw new Error(`--${name} must be a non-negative number, got "${raw}"`);
    return value;
  };
  const only = new Set(list('only') ?? SECTIONS);
  for (const section of only) {
    if (!SECTIONS.includes(section)) throw new Error(`unknown section "${section}" (${SECTIONS.join(', ')})`);
  }
  const full = mode === 'full';
  const quick = mode === 'quick';
  const inbound: InboundConfig = full
    ? {
        connections: 50,
        durationSec: 4,
        warmupSec: 1,
        rounds: 3,
        profileSec: 2,
        fixedRate: 3000,
        fixedSec: 0,
      }
    : quick
      ? {
          connections: 50,
          durationSec: 0.8,
          warmupSec: 0.3,
          rounds: 1,
          profileSec: 0,
          fixedRate: 3000,
          fixedSec: 0,
        }
      : {
          // Smoke (test/bench-smoke.e2e-spec.ts): proof that every part runs and prints numbers,
          // not a figure; its CPU is the test suite's.
          connections: 10,
          durationSec: 0.5,
          warmupSec: 0,
          rounds: 1,
          profileSec: 0,
          fixedRate: 500,
          fixedSec: 0,
        };
  inbound.connections = num('connections', inbound.connections);
  inbound.durationSec = num('duration', inbound.durationSec);
  inbound.rounds = num('rounds', inbound.rounds);
  if (flags.has('profile')) inbound.profileSec = num('profile', 0) || 2;
  if (flags.has('no-profile')) inbound.profileSec = 0;
  // Off by default: on the suite's servers, whose stores grow with every request, a short
  // fixed-rate window catches or misses a full GC of a large heap, which swings CPU/req a lot.
  if (flags.has('equal-load')) {
    inbound.fixedRate = num('equal-load', 0) || inbound.fixedRate;
    inbound.fixedSec = Math.max(2, inbound.durationSec);
  }
  inbound.keepServers = flags.has('keep-servers');
  inbound.shapes = list('shapes');
  inbound.variants = list('variants');
  inbound.adapters = list('adapters');
  return {
    mode,
    only,
    profile: inbound.profileSec > 0,
    out: text('out') ?? defaultOut,
    inbound,
    sms: {
      recipients: num('recipients', full ? 100_000 : quick ? 10_000 : 1_000),
      bigRecipients: num('big-recipients', full ? 1_000_000 : 0),
      warmupRecipients: full ? 10_000 : quick ? 2_000 : 0,
      batchSize: 100,
      concurrency: 8,
      rounds: full ? 3 : 1,
    },
    sessions: {
      live: num('sessions', full ? 100_000 : quick ? 10_000 : 1_000),
      concurrent: full || quick ? 1_000 : 50,
      durationSec: full ? 10 : quick ? 1.5 : 1,
      warmupSec: full ? 2 : 0.8,
      thinkMs: 1000,
    },
    latency: {
      rate: full ? 500 : 300,
      durationSec: full ? 5 : quick ? 1 : 0.5,
      warmupSec: full ? 1 : 0.5,
      // The 2-replica rows are judged at steady state: the suite's code path (Nest, validation,
      // pipeline, on two processes) takes many seconds of traffic to be optimised by V8; after a
      // 1 s warm-up its p99 still fell third by third (262/111/40 ms at 500 req/s) while the bare
      // baseline's was flat. Both get the same warm-up.
      replicaWarmupSec: num('replica-warmup', full ? 20 : 0.5),
      // One lucky run is no verdict: the spread of one row from run to run was wider than its margin.
      replicaRounds: Math.max(1, Math.round(num('replica-rounds', full ? 3 : 1))),
      connections: 64,
      rates: (list('rates') ?? ['100', '300', '500']).map((raw) => {
        const rate = Number(raw);
        if (!Number.isFinite(rate) || rate <= 0)
          throw new Error(`--rates must be positive numbers, got "${raw}"`);
        return rate;
      }),
    },
  };
}
