import { jest } from '@jest/globals';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import type { InboundPipeline } from '#internal';
import { CheckoutReconciler, RECONCILE_TASK } from './invoice.reconciler.js';
import { CHECKOUT_PIPELINE } from '../checkout.constants.js';
import { CheckoutModule } from '../checkout.module.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, withinMs = 5_000): Promise<void> {
  const end = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await pause(5);
  }
}

describe('CheckoutReconciler on the memory deployment', () => {
  it("runs its passes as the job runner's repeated task (one mechanism for both engines)", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        CheckoutModule.forRoot({
          clientId: 'id',
          clientSecret: 'secret',
          posSalesId: '11684',
          reconciliation: { intervalMs: 5 },
        }),
      ],
    }).compile();
    const reconciler = moduleRef.get(CheckoutReconciler);
    const passes = jest.spyOn(reconciler, 'runOnce');
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      await until(() => passes.mock.calls.length >= 2);
      // The runner owns the schedule: when it stops the task, no pass follows.
      await moduleRef.get<InboundPipeline>(CHECKOUT_PIPELINE).runner.stop(RECONCILE_TASK);
      const stoppedAt = passes.mock.calls.length;
      await pause(60);
      expect(passes.mock.calls.length).toBe(stoppedAt);
      expect(reconciler.running).toBe(true);
    } finally {
      await app.close();
    }
  });
});
