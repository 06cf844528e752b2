/**
 * Normalised MSISDNs in a flat Float64Array (open addressing): 8-16 bytes a number, not a Set's ~80.
 * A double holds an MSISDN's at most 15 digits exactly.
 */
export class MsisdnSet {
  private table = new Float64Array(1 << 10);
  private count = 0;

  /** Adds a normalised MSISDN (digits only); true when it was not there yet. */
  add(msisdn: string): boolean {
    const key = Number(msisdn);
    if (!Number.isSafeInteger(key) || key <= 0)
      throw new RangeError('MsisdnSet holds digit strings of up to 15 digits');
    if ((this.count + 1) * 2 > this.table.length) this.grow();
    return this.insert(this.table, key);
  }

  private insert(table: Float64Array, key: number): boolean {
    const mask = table.length - 1;
    for (let i = hash(key) & mask; ; i = (i + 1) & mask) {
      if (table[i] === key) return false;
      if (table[i] === 0) {
        table[i] = key;
        if (table === this.table) this.count++;
        return true;
      }
    }
  }

  private grow(): void {
    const old = this.table;
    const next = new Float64Array(old.length * 2);
    for (const key of old) if (key !== 0) this.insert(next, key);
    this.table = next;
  }
}

function hash(key: number): number {
  const lo = key % 0x1_0000_0000;
  const hi = Math.floor(key / 0x1_0000_0000);
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
