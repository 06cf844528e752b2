import type { DynamicModule, INestApplication, Provider } from '@nestjs/common';
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

/**
 * Starts the test merchant app on a real port, on Express or Fastify; `how.async` configures the
 * module with forRootAsync, `how.logger` shares another merchant's logger, `how.providers` adds
 * providers (e.g. an @OnServiceQuery() handler), `how.overrides` replaces providers by token (a
 * StatusCheckBudget on a test clock under HUBTEL_STATUS_CHECK_BUDGET), `how.imports` adds modules
 * of the host app (the job runner of a Redis store: `stores.jobRunnerImports()`).
 */
export async function startMerchant(
  adapter: Adapter,
  options: ServiceAppModuleOptions,
  extras: ServiceAppModuleExtras = {},
  how: {
    async?: boolean;
    logger?: RecordingLogger;
    providers?: Provider[];
    overrides?: Array<[token: unknown, value: unknown]>;
    imports?: DynamicModule[];
  } = {},
): Promise<Merchant> {
  const builder = Test.createTestingModule({ imports: [merchantModule(options, extras, how)] });
  for (const [token, value] of how.overrides ?? []) builder.overrideProvider(token).useValue(value);
  const moduleRef = await builder.compile();
  // Nest's Logger is process-wide: the app started last receives every app's lines.
  const logger = how.logger ?? new RecordingLogger();
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
      app.get(Fulfiller).releaseHeld();
      await app.close();
    },
  };
}

export interface JsonAnswer {
  status: number;
  /** The parsed JSON body (undefined when it is not JSON). */
  body: any;
  text: string;
  type: string;
}

/** POSTs a body as the platform would (a string is sent as it is: broken JSON, other types). */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, type: res.headers.get('content-type') ?? '' };
}

/**
 * The `Operator` of an app channel (the Hubtel app): a telco operator such as `mtn` is the USSD
 * channel (issue 22), whose answers differ (menus in `Message`, the cart a `Release`). Tests of the
 * app's answers use this one.
 */
export const APP_OPERATOR = 'Hubtel-Android';

/**
 * Makes the sandbox's service-app driver default to the app channel (`APP_OPERATOR`; its own
 * default, `mtn`, is the USSD channel). An `operator` given to `serviceApp()` still wins.
 */
export function onAppChannel<T extends { serviceApp: (url: string, options?: any) => unknown }>(
  sandbox: T,
): T {
  const serviceApp = sandbox.serviceApp.bind(sandbox);
  sandbox.serviceApp = ((url: string, options: Record<string, unknown> = {}) =>
    serviceApp(url, { operator: APP_OPERATOR, ...options })) as T['serviceApp'];
  return sandbox;
}

/**
 * A service-flow request as the platform sends it: every field the contract says is always there
 * (`Operator` of an app channel unless given, `ClientState` '', the test MSISDN), no `Sequence`.
 */
export function flowRequest(
  Type: string,
  SessionId: string,
  fields: { Message?: string; ServiceCode?: string; Operator?: string } = {},
): Record<string, string> {
  return {
    Type,
    Message: fields.Message ?? '',
    ServiceCode: fields.ServiceCode ?? 'x',
    Operator: fields.Operator ?? APP_OPERATOR,
    ClientState: '',
    Mobile: '233241234567',
    SessionId,
  };
}
