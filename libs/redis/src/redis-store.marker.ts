import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Cluster, Redis } from 'ioredis';
import { HubtelLogger, type HubtelStore, type HubtelStoreLoss } from 'nestjs-hubtel';
import { describeError, dropUndefined, hashTagOf } from '#internal';

/**
 * A key holding a generation (random id): gone, or of another generation than a process saw, Redis lost
 * its data. Who finds it gone writes a new one recording the loss, so every process sees it.
 */
export interface StoreMarker {
  generation: string;
  /** ISO time the marker was written: the data kept since then is what a loss takes. */
  createdAt: string;
  /** Who wrote it (host and pid), for the operator reading it with redis-cli. */
  writtenBy: string;
  lost?: { detectedAt: string; keptSince?: string; acknowledgedAt?: string };
}

/** A marker key and where its data lives, as an operator names it. */
export interface MarkerPlace {
  key: string;
  where: string;
}

/** The marker's key (under the store's `keyPrefix`); on a cluster, one per master: `...:{n}`. */
export const STORE_MARKER_KEY = 'hubtel:store:marker';

/** Compare-and-set attempts on one marker before a check leaves it to the next one. */
const MAX_TRIES = 5;

type MarkerStore = Pick<HubtelStore, 'get' | 'setIfAbsent' | 'compareAndSet'>;

export class RedisStoreMarkers {
  private readonly logger = new HubtelLogger('HubtelRedisStore');
  private places: MarkerPlace[] = [];
  /** The marker this process last saw at each key. */
  private readonly seen = new Map<string, StoreMarker>();
  private checking?: Promise<void>;
  private timer?: NodeJS.Timeout;
  /** The losses this process has logged, and whether it logged their acknowledgment (each once). */
  private readonly reported = new Map<string, boolean>();

  constructor(
    private readonly store: MarkerStore,
    private readonly intervalMs: number,
  ) {}

  /** Checks the markers now, then every `intervalMs`. */
  async start(places: MarkerPlace[]): Promise<void> {
    this.places = places;
    await this.check().catch((error: unknown) =>
      this.logger.warn(`Could not check the store's marker: ${describeError(error)}; trying again later`),
    );
    if (this.intervalMs > 0 && !this.timer) {
      this.timer = setInterval(() => void this.check().catch(() => undefined), this.intervalMs);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check of every marker (a call while one runs shares it). Rejects when Redis does not answer. */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  /** The last loss seen (acknowledged or not), from the last check; undefined when none. */
  loss(): HubtelStoreLoss | undefined {
    const lost = this.places.flatMap(({ key, where }) => {
      const loss = this.seen.get(key)?.lost;
      return loss ? [{ ...loss, where }] : [];
    });
    if (lost.length === 0) return undefined;
    const open = lost.filter((one) => one.acknowledgedAt === undefined);
    const shown = open.length > 0 ? open : lost;
    const detectedAt = latest(shown.map((one) => one.detectedAt))!;
    const [keptSince] = shown.flatMap((one) => one.keptSince ?? []).sort();
    const where = shown.map((one) => one.where);
    const acknowledgedAt = open.length > 0 ? undefined : latest(lost.map((one) => one.acknowledgedAt!));
    const message = lossMessage(where, detectedAt, keptSince, acknowledgedAt);
    return dropUndefined({ detectedAt, keptSince, where, acknowledgedAt, message });
  }

  /** Records the acknowledgment in every marker that reports an open loss; resolves to that loss. */
  async acknowledge(): Promise<HubtelStoreLoss | undefined> {
    await this.check();
    const open = this.loss();
    if (!open || open.acknowledgedAt !== undefined) return undefined;
    const at = new Date().toISOString();
    for (const { key } of this.places)
      for (let tries = 0; tries < MAX_TRIES; tries++) {
        const entry = await this.store.get<StoreMarker>(key);
        if (!entry?.value.lost || entry.value.lost.acknowledgedAt !== undefined) break;
        const acknowledged = { ...entry.value, lost: { ...entry.value.lost, acknowledgedAt: at } };
        if (await this.store.compareAndSet(key, entry.version, acknowledged)) break;
      }
    await this.check();
    return this.loss() ?? open;
  }

  private async checkAll(): Promise<void> {
    for (const place of this.places) await this.checkOne(place.key);
    this.report();
  }

  private async checkOne(key: string): Promise<void> {
    const before = this.seen.get(key);
    for (let tries = 0; tries < MAX_TRIES; tries++) {
      const at = new Date().toISOString();
      const entry = await this.store.get<StoreMarker>(key);
      const marker = entry?.value;
      if (marker && !(before && marker.generation !== before.generation && !marker.lost)) {
        this.seen.set(key, marker);
        return;
      }
      // Gone: the first process to see it writes the next. Written again by a process that started after
      // the loss: recorded in it. Either way, a loss this process can tell is recorded, so all report it.
      const lost = before ? { lost: { detectedAt: at, keptSince: before.createdAt } } : {};
      const next: StoreMarker = marker
        ? { ...marker, ...lost }
        : { generation: randomUUID(), createdAt: at, writtenBy: `${hostname()}:${process.pid}`, ...lost };
      const written = entry
        ? await this.store.compareAndSet(key, entry.version, next)
        : await this.store.setIfAbsent(key, next);
      if (!written) continue; // another process wrote it first: read theirs
      this.seen.set(key, next);
      return;
    }
  }

  private report(): void {
    const loss = this.loss();
    if (!loss) return;
    const id = `${loss.where.join(',')}@${loss.detectedAt}`;
    const logged = this.reported.get(id);
    if (loss.acknowledgedAt === undefined && logged === undefined) this.logger.error(loss.message);
    else if (loss.acknowledgedAt !== undefined && logged === false)
      this.logger.log(
        `The loss of the Redis store's data on ${loss.where.join(', ')} (noticed at ${loss.detectedAt}) was acknowledged at ${loss.acknowledgedAt}`,
      );
    else return;
    this.reported.set(id, loss.acknowledgedAt !== undefined);
  }
}

function latest(times: string[]): string | undefined {
  return times.sort().at(-1);
}

function lossMessage(
  where: string[],
  detectedAt: string,
  keptSince: string | undefined,
  acknowledgedAt: string | undefined,
): string {
  const what =
    `The Redis store LOST ITS DATA on ${where.join(', ')}: its marker${keptSince ? ` (written ${keptSince})` : ''} was gone at ${detectedAt} ` +
    '(a restart without persistence, a failover to an empty replica, a flush). Lost: checkout invoices and their reconciliation watch list, ' +
    'callback records and dead letters, service-app sessions and orders, and whatever your app kept in this store. ' +
    'A callback for an invoice created before is logged as FORGOTTEN_REFERENCE, not as a forgery: reconcile those orders from your own records ' +
    '(CheckoutService.reconcile(clientReference, { amount })).';
  return acknowledgedAt === undefined
    ? `${what} Health checks report the store down until acknowledged (RedisStore.acknowledgeLoss()).`
    : `${what} Acknowledged at ${acknowledgedAt}.`;
}

/** The marker of one Redis: where is its address. */
export function singleMarker(client: Redis): MarkerPlace[] {
  const { host, port, path } = client.options;
  return [{ key: STORE_MARKER_KEY, where: path ? path : `${host ?? '127.0.0.1'}:${port ?? 6379}` }];
}

/** One marker per master (a hash tag in its slots), so a master that comes back empty is named. */
export async function clusterMarkers(client: Cluster, keyPrefix: string): Promise<MarkerPlace[]> {
  const reply = (await client.cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
  const ranges = new Map<string, Array<[number, number]>>();
  for (const [start, end, [host, port]] of reply) {
    const node = `${host}:${port}`;
    ranges.set(node, [...(ranges.get(node) ?? []), [start, end]]);
  }
  const places: MarkerPlace[] = [];
  for (const [node, owned] of [...ranges].sort(([a], [b]) => a.localeCompare(b))) {
    owned.sort((a, b) => a[0] - b[0]);
    const slots = owned.map(([start, end]) => (start === end ? `${start}` : `${start}-${end}`)).join(',');
    // Tags are tried in order; about one in (number of masters) lands on this one's slots.
    for (let candidate = 0; candidate < 16_384; candidate++) {
      const key = `${STORE_MARKER_KEY}:{${candidate}}`;
      const slot = keySlot(keyPrefix + key);
      if (owned.some(([start, end]) => slot >= start && slot <= end)) {
        places.push({ key, where: `${node} (slots ${slots})` });
        break;
      }
    }
  }
  return places;
}

/** The Redis Cluster slot of a key: CRC16 (XMODEM) of its hash tag, or of the key, mod 16384. */
export function keySlot(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(hashTagOf(key) ?? key)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++)
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}
