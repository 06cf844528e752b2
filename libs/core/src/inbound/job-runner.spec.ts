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
