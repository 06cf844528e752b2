/**
 * The suite's own cost per request without HTTP, in its own process: the module services behind
 * the three endpoints (CheckoutService.handleCallback, ServiceFlowService.handle,
 * FulfillmentService.receive) called with already-parsed bodies, each with a fresh key, and the
 * background work they start (recording, dispatch to the host handler) awaited too. The CPU per
 * call is what our code (and the event emitter it uses) costs on top of any controller.
 */
import { type InboundPipeline } from '#internal';
import { CheckoutService } from 'nestjs-hubtel/checkout';
import { FulfillmentService, ServiceFlowService } from 'nestjs-hubtel/service-app';
import { SERVICE_APP_PIPELINE } from '../../libs/service-app/src/service-app.constants.js';
import { serveChild, signalFailure, signalReady } from '../lib/ipc.js';
import { IdSequence, SHAPES, type ShapeName } from '../lib/shapes.js';
import { createModuleApp } from './module-app.js';

async function main(): Promise<void> {
  const { app, handlers } = await createModuleApp('fastify');
  await app.init();
  const checkout = app.get(CheckoutService);
  const flows = app.get(ServiceFlowService);
  const fulfillment = app.get(FulfillmentService);
  const serviceAppPipeline = app.get<InboundPipeline>(SERVICE_APP_PIPELINE);
  const call: Record<ShapeName, (body: unknown) => Promise<unknown>> = {
    'checkout-callback': (body) => checkout.handleCallback(body),
    'service-flow': (body) => flows.handle(body),
    fulfillment: (body) => fulfillment.receive(body),
  };
  const drain: Record<ShapeName, () => Promise<void>> = {
    'checkout-callback': () => checkout.drain(),
    'service-flow': async () => undefined,
    fulfillment: () => serviceAppPipeline.drain(),
  };
  let serial = 0;

  async function run(
    shape: ShapeName,
    count: number,
  ): Promise<{ cpuUs: number; wallUs: number; startUs: number; endUs: number }> {
    const seq = new IdSequence(SHAPES[shape], `ip${serial++}-`);
    await handlers.prepare!({ type: 'prepare', shape, prefix: seq.prefix, from: 0, count });
    const bodies = Array.from({ length: count }, () => JSON.parse(seq.take().body) as unknown);
    const startUs = Number(process.hrtime.bigint() / 1000n);
    const cpu = process.cpuUsage();
    const started = performance.now();
    // 50 in flight, like the HTTP runs' 50 connections.
    let next = 0;
    const worker = async () => {
      while (next < count) await call[shape](bodies[next++]);
    };
    await Promise.all(Array.from({ length: 50 }, worker));
    await drain[shape]();
    const wallUs = (performance.now() - started) * 1000;
    const used = process.cpuUsage(cpu);
    return {
      cpuUs: (used.user + used.system) / count,
      wallUs: wallUs / count,
      startUs,
      endUs: Number(process.hrtime.bigint() / 1000n),
    };
  }

  serveChild(
    {
      run: async (message) => {
        const shape = message.shape as ShapeName;
        await run(shape, Math.max(1000, Math.round(Number(message.count) / 5))); // warm-up
        return run(shape, Number(message.count));
      },
    },
    () => app.close(),
  );
  signalReady();
}

main().catch(signalFailure);
