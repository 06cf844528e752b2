/**
 * Waiting for a pipeline's jobs to be over, on either runner.
 *
 * `pipeline.drain()` waits only for the runs executing (or, in memory, waiting on a timer) in THIS
 * process. On the memory store that is every run there is. On Redis the jobs are BullMQ's: a job
 * acknowledged a moment ago may still wait in its queue when `drain()` is called, a retry waits in
 * the delayed set, and any replica's worker may take it. So on BullMQ this waits until the
 * pipeline's queue holds no job that is waiting, running or delayed (a retry or a deferral), the
 * same "nothing left to run" that `drain()` means in memory, then drains this process.
 */
import type { INestApplication } from '@nestjs/common';
import type { InboundPipeline } from '#internal';
import { BullmqJobRunner } from 'nestjs-hubtel/bullmq';
import { CheckoutService } from 'nestjs-hubtel/checkout';
import { CHECKOUT_PIPELINE } from '../../libs/checkout/src/checkout.constants.js';

/** The queue states of a run that is not over. */
const UNFINISHED = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Resolves once nothing of the pipeline `name` ('checkout', 'service-app') is left to run, on
 * any instance sharing its runner. Rejects after `timeoutMs` (what is still queued is named).
 */
export async function jobsSettled(
  pipeline: InboundPipeline,
  name: 'checkout' | 'service-app',
  timeoutMs = 20_000,
): Promise<void> {
  const runner = pipeline.runner;
  if (!(runner instanceof BullmqJobRunner)) return pipeline.drain();
  const queue = runner.queue(name);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await queue.getJobCounts(...UNFINISHED);
    if (UNFINISHED.every((state) => !counts[state])) break;
    if (Date.now() > deadline)
      throw new Error(
        `jobsSettled(${name}): still unfinished after ${timeoutMs} ms: ${JSON.stringify(counts)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await pipeline.drain();
}

/** Polls `check` until it is true; rejects after `timeoutMs` with `what`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * `jobsSettled` for a checkout app, then its CheckoutService.drain() (which also waits for the
 * settlements this process runs).
 */
export async function checkoutSettled(app: INestApplication, timeoutMs?: number): Promise<void> {
  await jobsSettled(app.get<InboundPipeline>(CHECKOUT_PIPELINE), 'checkout', timeoutMs);
  await app.get(CheckoutService).drain();
}

/**
 * Resolves once the pipeline's runner can take jobs again (after a Redis outage, its queue's
 * connection comes back on its own, a moment after the store's): what a sender's retry needs.
 */
export async function untilRunnerUp(pipeline: InboundPipeline, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!((await pipeline.runner.health?.().catch(() => undefined))?.up ?? true)) {
    if (Date.now() > deadline) throw new Error(`The job runner was not up again within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
