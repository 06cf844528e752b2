import { Logger } from '@nestjs/common';
import type { Worker } from 'bullmq';
import { WorkerWatch, type Watched, type WorkerWatchOptions } from './bullmq.worker-watch.js';

/**
 * The watch alone, on workers written here: when it makes a worker again (and when never), and that
 * a worker it replaced is closed only once the jobs it runs have ended. The stuck worker itself, on
 * a real cluster: test/bullmq-worker-recreated.e2e-spec.ts.
 */

const INTERVAL_MS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > giveUp) throw new Error(`Still waiting for ${what}`);
    await sleep(5);
  }
}

class FakeWorker {
  closed?: { force?: boolean };
  paused = false;
  isPaused() {
    return this.paused;
  }
  pause(doNotWaitActive?: boolean) {
    this.paused = doNotWaitActive === true;
    return Promise.resolve();
  }
  close(force?: boolean) {
    this.closed = { force };
    return Promise.resolve();
  }
  disconnect() {
    return Promise.resolve();
  }
}

function setup(options: Partial<WorkerWatchOptions> & { concurrency?: number } = {}) {
  const warnings: string[] = [];
  const logger = new Logger('test');
  logger.warn = (message: unknown) => void warnings.push(String(message));
  const made: Array<Watched & { fake: FakeWorker }> = [];
  const judged = { count: 0 };
  // The job due is j1, and the first worker started none for a takeover.
  const notTakingJobs =
    options.notTakingJobs ?? (async () => (made.length === 1 ? { jobId: 'j1', idleMs: 20_000 } : undefined));
  const watch = new WorkerWatch({
    intervalMs: INTERVAL_MS,
    logger,
    heldBack: async () => false,
    ...options,
    notTakingJobs: (name) => (judged.count++, notTakingJobs(name)),
  });
  const create = (): Watched => {
    const fake = new FakeWorker();
    const entry = {
      worker: fake as unknown as Worker<never>,
      create,
      concurrency: options.concurrency ?? 2,
      running: 0,
      fake,
    };
    made.push(entry);
    watch.add('orders', entry);
    return entry;
  };
  create();
  return { watch, made, warnings, judged };
}

describe('WorkerWatch', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  it('makes a worker again once the same job stayed due across a check, closing the old one', async () => {
    const { watch, made, warnings, judged } = setup();
    close = () => watch.close();
    await until(() => judged.count >= 6, 'six checks');
    expect(made).toHaveLength(2);
    expect(made[0]!.fake.closed).toEqual({ force: true });
    expect(made[1]!.fake.closed).toBeUndefined();
    expect(warnings).toEqual([
      'Worker orders took no job for 20 s while one was due and it had room: closed, and started again on a new connection',
    ]);
    expect(watch.restarted()).toEqual({ orders: expect.stringMatching(/^1 time, last at \d{4}-/) });
  });

  it('never takes a worker running as many jobs as its concurrency for stuck', async () => {
    const { watch, made, warnings } = setup({ concurrency: 1 });
    close = () => watch.close();
    let release!: () => void;
    const running = watch.run(made[0]!, () => new Promise<void>((resolve) => (release = resolve)));
    await sleep(INTERVAL_MS * 8);
    expect(made).toHaveLength(1);
    expect(warnings).toEqual([]);
    expect(watch.restarted()).toBeUndefined();
    release();
    await running;
  });

  it('leaves a worker alone when the job due is a new one at each check (a delayed job come due), or its queue holds jobs back (paused, rate-limited)', async () => {
    let n = 0;
    const changing = setup({ notTakingJobs: async () => ({ jobId: `j${++n}`, idleMs: 20_000 }) });
    const paused = setup({ heldBack: async () => true });
    close = async () => void (await Promise.all([changing.watch.close(), paused.watch.close()]));
    await until(() => changing.judged.count >= 6 && paused.judged.count >= 6, 'six checks of each');
    expect([changing.made.length, paused.made.length]).toEqual([1, 1]);
    expect([...changing.warnings, ...paused.warnings]).toEqual([]);
  });

  it('closes a worker it replaced only once the jobs it runs here have ended', async () => {
    const { watch, made } = setup({ concurrency: 2 });
    close = () => watch.close();
    let release!: () => void;
    const running = watch.run(made[0]!, () => new Promise<void>((resolve) => (release = resolve)));
    await until(() => made.length === 2, 'the worker made again');
    await sleep(INTERVAL_MS * 4);
    // Made again (it had room for one more), the old one still running its job: not closed, but
    // paused at once without waiting for that job (it takes no new one meanwhile).
    expect(made).toHaveLength(2);
    expect(made[0]!.fake.closed).toBeUndefined();
    expect(made[0]!.fake.paused).toBe(true);
    release();
    await running;
    await until(() => made[0]!.fake.closed !== undefined, 'the old worker closed');
    expect(made[0]!.fake.closed).toEqual({ force: true });
  });
});
