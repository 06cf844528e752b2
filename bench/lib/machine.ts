import { readFileSync } from 'node:fs';

/** All CPUs' time so far (Linux `/proc/stat`, clock ticks): busy and in all; undefined elsewhere. */
export interface MachineCpu {
  busy: number;
  total: number;
}

export function machineCpu(): MachineCpu | undefined {
  try {
    // cpu  user nice system idle iowait irq softirq steal ...: idle and iowait are the idle ones.
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9);
    const ticks = fields.map(Number);
    if (ticks.length < 5 || ticks.some((t) => !Number.isFinite(t))) return undefined;
    const total = ticks.reduce((sum, t) => sum + t, 0);
    return { busy: total - ticks[3]! - ticks[4]!, total };
  } catch {
    return undefined;
  }
}

/**
 * The share of the whole machine (every core) busy between two readings, 0 to 1: whoever used it
 * (the servers measured, Redis, the load generator, the kernel's network work). Undefined when
 * either reading is missing.
 */
export function busyShare(before: MachineCpu | undefined, after: MachineCpu | undefined): number | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  return (after.busy - before.busy) / (after.total - before.total);
}
