import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import type { ServiceAppModuleExtras, ServiceAppModuleOptions } from 'nestjs-hubtel/service-app';
import { FulfillmentService, ServiceFlowService } from 'nestjs-hubtel/service-app';
import { Fulfiller, Gate, RecordingLogger, merchantModule } from './service-app.fixtures.js';

export type Adapter = 'express' | 'fastify';

export interface Merchant {
  app: INestApplication;
  /** `http://127.0.0.1:<port>` */
  url: string;
  fulfiller: Fulfiller;
  gate: Gate;
  fulfillment: FulfillmentService;
  flows: ServiceFlowService;
  logger: RecordingLogger;
  close(): Promise<void>;
}

/** Starts the test merchant app on a real port, on Express or Fastify. */
export async function startMerchant(
  adapter: Adapter,
  options: ServiceAppModuleOptions,
  extras: ServiceAppModuleExtras = {},
): Promise<Merchant> {
  const moduleRef = await Test.createTestingModule({ imports: [merchantModule(options, extras)] }).compile();
  const logger = new RecordingLogger();
  const app =
    adapter === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger })
      : moduleRef.createNestApplication({ logger });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    fulfiller: app.get(Fulfiller),
    gate: app.get(Gate),
    fulfillment: app.get(FulfillmentService),
    flows: app.get(ServiceFlowService),
    logger,
    close: async () => {
      app.get(Gate).open();
      await app.close();
    },
  };
}
