import { InProcessJobRunner } from './job-runner.js';

/** Resolves once `check` holds, polling; fails after `withinMs` (a bound, not a speed claim). */
async function until(check: () => boolean, withinMs = 5_000): Promise<void> {
  const end = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('InProcessJobRunner.repeat (the memory deployment runs repeated tasks too)', () => {
  it('runs the task every interval, never two runs at once, until stop(name) (which waits for a run)', async () => {
    const runner = new InProcessJobRunner();
    let runs = 0;
    let running = 0;
    let overlapped = false;
    let finished = 0;
    await runner.repeat('task', 5, async () => {
      runs++;
      running++;
      overlapped ||= running > 1;
      await pause(20);
      running--;
      finished++;
    });
    await until(() => runs >= 3);
    await runner.stop('task');
    expect(running).toBe(0);
    expect(finished).toBe(runs);
    const stoppedAt = runs;
    await pause(60);
    expect(runs).toBe(stoppedAt);
    expect(overlapped).toBe(false);
  });

  it('keeps one task per name (a second repeat is a no-op) and goes on after a failed run', async () => {
    const runner = new InProcessJobRunner();
    const calls: string[] = [];
    await runner.repeat('task', 5, async () => {
      calls.push('first');
      if (calls.length === 1) throw new Error('a failed run');
    });
    await runner.repeat('task', 5, async () => {
      calls.push('second');
    });
    await until(() => calls.length >= 3);
    await runner.stop('task');
    expect(new Set(calls)).toEqual(new Set(['first']));
  });
});

describe('InProcessJobRunner.drain (tests and shutdown wait on it)', () => {
  const request = (storeKey: string, delayMs?: number) => ({ storeKey, type: 'job', run: 1, delayMs });
  const settled = { kind: 'settled' } as const;

  it("waits for its own pipeline's runs, retries included, not for another pipeline's", async () => {
    const runner = new InProcessJobRunner();
    const attempts = new Map<string, number>();
    await runner.start('a', async (key) => {
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      await pause(5);
      return n < 3 ? { kind: 'retry', delayMs: 5, error: 'again' } : settled;
    });
    // Pipeline b's one run waits for a wake that never comes before the test ends.
    await runner.start('b', async () => ({
      kind: 'defer',
      until: Date.now() + 60_000,
      woken: async () => false,
    }));
    await runner.enqueue('b', request('b1'));
    for (const key of ['a1', 'a2', 'a3']) await runner.enqueue('a', request(key));
    await runner.enqueue('a', request('a1')); // the same run asked twice is held once
    await runner.drain('a');
    expect([...attempts.values()]).toEqual([3, 3, 3]);
    let bDrained = false;
    void runner.drain('b').then(() => (bDrained = true));
    await pause(30);
    expect(bDrained).toBe(false);
    await runner.stop('b'); // drops b's waiting run, so its drain ends
    await until(() => bDrained);
  });

  it('is idle again once a pipeline has run thousands of jobs, and holds a new one after', async () => {
    const runner = new InProcessJobRunner();
    let ran = 0;
    await runner.start('a', async () => {
      ran++;
      return settled;
    });
    for (let i = 0; i < 5_000; i++) await runner.enqueue('a', request(`k${i}`));
    await runner.drain('a');
    expect(ran).toBe(5_000);
    let drained = false;
    await runner.enqueue('a', request('late', 20));
    void runner.drain('a').then(() => (drained = true));
    await pause(5);
    expect(drained).toBe(false);
    await until(() => drained);
    expect(ran).toBe(5_001);
  });
});
