import { busyShare, machineCpu } from './machine.js';

describe('machine CPU share', () => {
  it('is the busy share of the ticks between two readings', () => {
    expect(busyShare({ busy: 100, total: 400 }, { busy: 250, total: 600 })).toBe(0.75);
    expect(busyShare(undefined, { busy: 1, total: 2 })).toBeUndefined();
    expect(busyShare({ busy: 1, total: 2 }, { busy: 1, total: 2 })).toBeUndefined();
  });

  it('reads this machine where /proc/stat exists, and grows with work done', () => {
    const before = machineCpu();
    if (process.platform !== 'linux') return expect(before).toBeUndefined();
    const end = Date.now() + 60;
    while (Date.now() < end); // busy for a few clock ticks
    const after = machineCpu()!;
    expect(after.total).toBeGreaterThan(before!.total);
    expect(after.busy).toBeGreaterThan(before!.busy);
    const share = busyShare(before, after)!;
    expect(share).toBeGreaterThan(0);
    expect(share).toBeLessThanOrEqual(1);
  });
});
