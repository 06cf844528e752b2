/**
 * One server under test, in its own process: `server.ts <variant> <adapter>`.
 *   bare       node:http + JSON.parse (adapter ignored)
 *   plain      Nest controller, no validation                       — baseline (b)
 *   validated  Nest controller + global ValidationPipe + DTOs       — baseline (c)
 *   module     the suite's own endpoints, full validation + pipeline — (d)
 *   redis      (d) on the Redis store and the BullMQ runner, the only Redis deployment (issue 23):
 *              `server.ts redis <adapter> <redis url>` (its Redis round trips can be counted)
 * With BENCH_CHECKOUT_STATUS_URL in its environment, the module's checkout has a `posSalesId`
 * (status check on) and that URL as its API base URLs (see module-app.ts).
 * It serves all three inbound shapes, listens on 127.0.0.1:0 and reports `ready` with its port.
 */
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { serveChild, signalFailure, signalReady, type Message } from '../lib/ipc.js';
import type { AdapterName } from './adapters.js';

export type Variant = 'bare' | 'plain' | 'validated' | 'module' | 'redis';

const [variant, adapter, redisUrl] = process.argv.slice(2) as [Variant, AdapterName, string | undefined];

interface Extras {
  /** Extra IPC handlers (module app: handler latency samples). */
  handlers?: Record<
    string,
    (message: Message) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void
  >;
}

async function main(): Promise<void> {
  let close: () => Promise<void>;
  let port: number;
  let extras: Extras = {};
  let shapes: string[] = ['checkout-callback', 'service-flow', 'fulfillment'];
  if (variant === 'bare') {
    const { createBareServer } = await import('./baseline-bare.js');
    const server = createBareServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  } else {
    let app: INestApplication;
    if (variant === 'module' || variant === 'redis') {
      const { createModuleApp } = await import('./module-app.js');
      const created = await createModuleApp(
        adapter,
        variant === 'module' ? undefined : redisUrl,
        process.env.BENCH_CHECKOUT_STATUS_URL || undefined,
      );
      app = created.app;
      extras = created;
      shapes = created.shapes;
    } else {
      const { createBaselineApp } = await import('./baseline-nest.js');
      app = await createBaselineApp(adapter, variant === 'validated');
    }
    await app.listen(0, '127.0.0.1');
    port = ((app.getHttpServer() as Server).address() as { port: number }).port;
    close = () => app.close();
  }
  serveChild(extras.handlers ?? {}, close);
  signalReady({ port, shapes });
}

main().catch(signalFailure);
