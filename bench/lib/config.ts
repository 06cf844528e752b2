/** Command line of `npm run bench [-- --quick] [--only=inbound,sms,sessions,latency] [--out=FILE] [--profile]`. */
export interface BenchConfig {
  mode: 'full' | 'quick' | 'smoke';
  only: Set<string>;
  out: string;
  profile: boolean;
  inbound: {
    connections: number;
    durationSec: number;
    warmupSec: number;
    rounds: number;
    shapes?: string[];
    variants?: string[];
    adapters?: string[];
  };
  sms: { recipients: number; bigRecipients: number; batchSize: number; concurrency: number };
  sessions: { live: number; concurrent: number; durationSec: number; thinkMs: [number, number] };
  latency: { rate: number; durationSec: number; connections: number };
}

export const SECTIONS = ['inbound', 'sms', 'sessions', 'latency'];
const KNOWN_FLAGS = [
  'quick',
  'smoke',
  'only',
  'out',
  'profile',
  'connections',
  'duration',
  'rounds',
  'shapes',
  'variants',
  'adapters',
  'recipients',
  'big-recipients',
];

export function parseArgs(argv: string[], defaultOut: string): BenchConfig {
  const flags = new Map<string, string | true>();
  for (const arg of argv) {
    const match = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (!match || !KNOWN_FLAGS.includes(match[1]!))
      throw new Error(`unknown argument "${arg}" (known: ${KNOWN_FLAGS.map((f) => `--${f}`).join(' ')})`);
    flags.set(match[1]!, match[2] ?? true);
  }
  const mode = flags.has('smoke') ? 'smoke' : flags.has('quick') ? 'quick' : 'full';
  const only = new Set(
    typeof flags.get('only') === 'string' ? String(flags.get('only')).split(',') : SECTIONS,
  );
  for (const section of only)
    if (!SECTIONS.includes(section)) throw new Error(`unknown section "${section}" (${SECTIONS.join(', ')})`);
  const list = (name: string) =>
    typeof flags.get(name) === 'string' ? String(flags.get(name)).split(',') : undefined;
  const num = (name: string, fallback: number) =>
    typeof flags.get(name) === 'string' ? Number(flags.get(name)) : fallback;
  const config: BenchConfig = {
    mode,
    only,
    out: typeof flags.get('out') === 'string' ? String(flags.get('out')) : defaultOut,
    profile: flags.has('profile'),
    inbound:
      mode === 'full'
        ? { connections: 50, durationSec: 5, warmupSec: 1, rounds: 3 }
        : mode === 'quick'
          ? { connections: 50, durationSec: 1, warmupSec: 0.3, rounds: 1 }
          : { connections: 10, durationSec: 1, warmupSec: 0, rounds: 1 },
    sms:
      mode === 'full'
        ? { recipients: 100_000, bigRecipients: 1_000_000, batchSize: 100, concurrency: 8 }
        : { recipients: mode === 'quick' ? 10_000 : 1_000, bigRecipients: 0, batchSize: 100, concurrency: 8 },
    sessions:
      mode === 'full'
        ? { live: 100_000, concurrent: 1_000, durationSec: 10, thinkMs: [200, 800] }
        : {
            live: mode === 'quick' ? 10_000 : 1_000,
            concurrent: mode === 'quick' ? 1_000 : 50,
            durationSec: mode === 'quick' ? 3 : 1,
            thinkMs: [200, 800],
          },
    latency:
      mode === 'full'
        ? { rate: 500, durationSec: 5, connections: 10 }
        : { rate: 300, durationSec: mode === 'quick' ? 2 : 1, connections: 10 },
  };
  config.inbound.connections = num('connections', config.inbound.connections);
  config.inbound.durationSec = num('duration', config.inbound.durationSec);
  config.inbound.rounds = num('rounds', config.inbound.rounds);
  config.inbound.shapes = list('shapes');
  config.inbound.variants = list('variants');
  config.inbound.adapters = list('adapters');
  config.sms.recipients = num('recipients', config.sms.recipients);
  config.sms.bigRecipients = num('big-recipients', config.sms.bigRecipients);
  return config;
}
