import { RecordLog } from './sandbox.record-log.js';

describe('RecordLog', () => {
  it('keeps the newest `capacity` records in order and counts every one', () => {
    const log = new RecordLog<{ n: number }>(3);
    for (let n = 1; n <= 7; n++) log.push({ n }, [`k${n}`]);
    expect(log.values().map((r) => r.n)).toEqual([5, 6, 7]);
    expect(log.size).toBe(3);
    expect(log.total).toBe(7);
  });

  it('forgets the keys of dropped records, including keys added later', () => {
    const log = new RecordLog<{ n: number }>(2);
    const first = { n: 1 };
    log.push(first, ['a']);
    log.addKey(first, 'tx-1');
    expect(log.get('tx-1')).toBe(first);
    log.push({ n: 2 }, ['b']);
    log.push({ n: 3 }, ['c']);
    expect(log.get('a')).toBeUndefined();
    expect(log.get('tx-1')).toBeUndefined();
    expect(log.get('c')).toEqual({ n: 3 });
  });

  it('does not drop a key that a newer record took over', () => {
    const log = new RecordLog<{ n: number }>(2);
    log.push({ n: 1 }, ['same']);
    const newer = { n: 2 };
    log.push(newer, ['same']);
    log.push({ n: 3 });
    expect(log.get('same')).toBe(newer);
  });

  it('finds newest first, filters oldest first, and clears', () => {
    const log = new RecordLog<{ n: number }>(10);
    for (let n = 1; n <= 4; n++) log.push({ n });
    expect(log.findLast((r) => r.n % 2 === 1)).toEqual({ n: 3 });
    expect(log.filter((r) => r.n > 2).map((r) => r.n)).toEqual([3, 4]);
    log.clear();
    expect(log.values()).toEqual([]);
    expect(log.total).toBe(0);
  });

  it('stays bounded under a million records', () => {
    const log = new RecordLog<{ n: number }>(1000);
    for (let n = 0; n < 1_000_000; n++) log.push({ n }, [String(n)]);
    expect(log.size).toBe(1000);
    expect(log.total).toBe(1_000_000);
    expect(log.get('998999')).toBeUndefined();
    expect(log.get('999000')).toEqual({ n: 999_000 });
  });

  it('shift() removes the oldest record and its keys', () => {
    const log = new RecordLog<{ n: number }>(3);
    log.push({ n: 1 }, ['a']);
    log.push({ n: 2 }, ['b']);
    expect(log.shift()).toEqual({ n: 1 });
    expect(log.get('a')).toBeUndefined();
    expect(log.values()).toEqual([{ n: 2 }]);
    log.push({ n: 3 });
    log.push({ n: 4 });
    log.push({ n: 5 });
    expect(log.values().map((r) => r.n)).toEqual([3, 4, 5]);
    expect(log.get('b')).toBeUndefined();
    expect(new RecordLog(1).shift()).toBeUndefined();
  });

  it('refuses a capacity below 1', () => {
    expect(() => new RecordLog(0)).toThrow(RangeError);
  });
});
