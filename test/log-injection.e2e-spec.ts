/**
 * Forged log lines: values from a request (a ClientReference, a SessionId, an OrderId, a JSON key)
 * carrying newlines, CR, ANSI escapes, NUL, C1 controls, U+2028/2029, bidi overrides, 10 KB of
 * text or a phone number, sent over real HTTP to every inbound endpoint (checkout callback,
 * service-flow request, fulfillment request; Express and Fastify; and the example app). Each log
 * line must hold no raw control character, must not start a new line that is not a stack frame,
 * must show no whole phone number and must be capped.
 */
import type { LoggerService } from '@nestjs/common';
import { LOG_LINE_MAX_LENGTH, type InboundPipeline } from '#internal';
import { CheckoutService } from 'nestjs-hubtel/checkout';
import { SERVICE_APP_PIPELINE } from '../libs/service-app/src/service-app.constants.js';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { CaptureLogger } from './support/capture-logger.js';
import {
  ADAPTERS,
  FakeCheckoutApi,
  baseOptions,
  callbackBody,
  startCheckoutApp,
  type CheckoutTestApp,
} from './support/checkout-harness.js';
import { startExampleInProcess, type InProcessExample } from './support/example-app.harness.js';
import { flowRequest, postJson, startMerchant, type Merchant } from './support/service-app.harness.js';
import { RecordingLogger } from './support/service-app.fixtures.js';

const FORGED = '[Nest] 1  - 01/01/2026, 10:00:00 AM     LOG [Shop] Order ord-1 paid (GHS 10.00, by callback)';
/** Short enough for a ClientReference (32 characters at most), so it reaches the 200 path. */
const SHORT_FORGED = '[Shop] Order 7 paid';
const PHONE = '233241234567';

/** Hostile values, by name. */
const CORPUS: Record<string, string> = {
  newline: `r\n${SHORT_FORGED}`,
  crlf: `r\r\n${SHORT_FORGED}`,
  cr: `r\r${SHORT_FORGED}`,
  newlineLong: `ref\n${FORGED}`,
  ansi: 'ref\x1b[31mRED\x1b[0m\x1b[2K\x1b[1A',
  nul: 'ref\x00after-nul',
  c1: 'ref\x85\x9b31mC1',
  del: 'ref\x7fdel',
  lineSeparator: `r\u2028${SHORT_FORGED}\u2029`,
  bidi: 'ref\u202egnp.exe\u202c\u2066x\u2069\u200f',
  long: `ref${'x'.repeat(10_240)}`,
  phone: PHONE,
  phoneInText: `order for ${PHONE}\n${FORGED}`,
};

/** Keys a hostile body may hold (reach the 400 path's messages and paths). */
const HOSTILE_KEYS = [`k\n${FORGED}`, 'k\x1b[31m', `k\u2028${FORGED}`, `${'k'.repeat(5_000)}\n${FORGED}`];

/** A raw character that must never reach a log line (newline is checked separately). */
const RAW_CONTROL =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f]/;
const WHOLE_PHONE = /(?<![\dA-Za-z])(?:233\d{9}|0[235]\d{8})(?![\dA-Za-z])/;
/** A stack-trace line ("    at fn (file:1:2)"), the only thing allowed after a newline. */
const STACK_FRAME = /^\s+at /;

/** The problems of each logged line (empty when every line is safe). */
function unsafeLines(lines: string[]): string[] {
  const problems: string[] = [];
  for (const line of lines) {
    const [first, ...rest] = line.split('\n');
    const show = JSON.stringify(line.slice(0, 200));
    if (RAW_CONTROL.test(line)) problems.push(`raw control character: ${show}`);
    if (rest.some((next) => !STACK_FRAME.test(next))) problems.push(`forged new line: ${show}`);
    if (WHOLE_PHONE.test(line)) problems.push(`unmasked phone: ${show}`);
    if (first!.length > LOG_LINE_MAX_LENGTH + 40) problems.push(`not capped (${first!.length}): ${show}`);
  }
  return problems;
}

function hostileKeyBodies(base: Record<string, unknown>): Record<string, unknown>[] {
  const bodies: Record<string, unknown>[] = [];
  for (const key of HOSTILE_KEYS) {
    bodies.push({ ...base, [key]: 'v' });
    // A prototype key under a hostile one: refused, with the path of keys in the issue.
    bodies.push({ ...base, [key]: JSON.parse('{"__proto__": {"x": 1}}') });
    // Deeper than the nesting limit, under the hostile key.
    let deep: unknown = 1;
    for (let i = 0; i < 12; i++) deep = { [key]: deep };
    bodies.push({ ...base, Data: deep });
  }
  return bodies;
}

function lineTexts(logger: CaptureLogger | RecordingLogger): string[] {
  return logger instanceof CaptureLogger ? logger.lines.map((l) => l.message) : logger.lines;
}

describe.each(ADAPTERS)('forged log lines: checkout callback (%s)', (adapter) => {
  const logger = new CaptureLogger();
  let api: FakeCheckoutApi;
  let t: CheckoutTestApp;

  beforeAll(async () => {
    api = await FakeCheckoutApi.start();
    t = await startCheckoutApp(adapter, baseOptions(api), {}, undefined, logger as LoggerService);
  });
  afterAll(async () => {
    await t.close();
    await api.close();
  });

  it('escapes, masks and caps every value of a callback in every log line (200 and 400 paths)', async () => {
    for (const value of Object.values(CORPUS)) {
      for (const body of [
        callbackBody({ ref: value, checkoutId: 'chk-x', amount: 10 }),
        callbackBody({ ref: 'ref-1', checkoutId: value, amount: 10 }),
        callbackBody({ ref: 'ref-1', checkoutId: 'chk-x', status: value }),
      ]) {
        const res = await t.post(body);
        expect([200, 400]).toContain(res.status);
      }
    }
    for (const body of hostileKeyBodies(callbackBody({ ref: 'ref-1', checkoutId: 'chk-x', amount: 10 }))) {
      const res = await t.post(body);
      expect([200, 400]).toContain(res.status);
    }
    await t.service.drain();
    const lines = lineTexts(logger);
    expect(unsafeLines(lines)).toEqual([]);
    // The values did reach the log (escaped): a silent logger would prove nothing.
    expect(lines.join('\n')).toContain(`r\\n${SHORT_FORGED}`);
    expect(lines.join('\n')).toContain('233******567');
  });
});

describe.each(ADAPTERS)('forged log lines: service flow and fulfillment (%s)', (adapter) => {
  let merchant: Merchant;

  beforeAll(async () => {
    merchant = await startMerchant(adapter, {
      callbackUrl: 'http://127.0.0.1:9/callback',
      callbackRetry: { baseDelayMs: 5, maxDelayMs: 10, deadlineMs: 200 },
    });
  });
  afterAll(async () => {
    await merchant?.close();
  });

  it('escapes, masks and caps every value of a request in every log line', async () => {
    const flowUrl = `${merchant.url}/api/service-flow`;
    const fulfillmentUrl = `${merchant.url}/api/fulfillment`;
    for (const value of Object.values(CORPUS)) {
      const answers = [
        await postJson(flowUrl, flowRequest('Initiation', value, { Message: value, ServiceCode: value })),
        await postJson(flowUrl, flowRequest('Response', value, { Message: value })),
        await postJson(flowUrl, flowRequest('Timeout', value)),
        await postJson(flowUrl, { ...flowRequest('Response', 'abc'), Type: value }),
        await postJson(fulfillmentUrl, { OrderId: value, SessionId: value, ExtraData: {}, OrderInfo: null }),
      ];
      for (const res of answers) expect(res.status).toBeLessThan(500);
    }
    for (const body of [
      ...hostileKeyBodies(flowRequest('Initiation', 'abc')),
      ...hostileKeyBodies({ OrderId: 'o1', SessionId: 's1', ExtraData: {}, OrderInfo: null }),
    ]) {
      expect((await postJson(flowUrl, body)).status).toBeLessThan(500);
      expect((await postJson(fulfillmentUrl, body)).status).toBeLessThan(500);
    }
    const lines = lineTexts(merchant.logger);
    expect(unsafeLines(lines)).toEqual([]);
    expect(lines.join('\n')).toContain(`r\\n${SHORT_FORGED}`);
  });
});

describe('forged log lines: the example app (its own lines and the modules under it)', () => {
  const logger = new CaptureLogger();
  let sandbox: HubtelSandbox;
  let shop: InProcessExample;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start({ logger });
    shop = await startExampleInProcess({ sandbox, logger });
  });
  afterAll(async () => {
    await shop?.close();
    await sandbox?.stop();
  });

  it('a hostile ClientReference or OrderId cannot write a line of its own', async () => {
    const callbackUrl = shop.example.addresses.checkoutCallback;
    for (const [name, value] of Object.entries(CORPUS)) {
      const res = await postJson(callbackUrl, callbackBody({ ref: value, checkoutId: 'chk-x', amount: 10 }));
      expect([200, 400]).toContain(res.status);
      // A real cart, then a fulfillment request whose OrderId is the hostile value: the shop's
      // own "Order …" lines quote it.
      const session = sandbox.serviceApp(shop.url, { mobile: '233241112222' });
      await session.start();
      await session.reply('0241234567');
      await session.choose('DATA_1GB');
      // Paid, as the platform records it: the module verifies the payment before the shop's handler runs.
      sandbox.recordServicePayment(session.sessionId);
      const answer = await postJson(shop.example.addresses.fulfillment, {
        OrderId: value,
        SessionId: session.sessionId,
        ExtraData: {},
        OrderInfo: null,
      });
      expect({ name, status: answer.status < 500 }).toEqual({ name, status: true });
    }
    for (const body of hostileKeyBodies(callbackBody({ ref: 'ref-1', checkoutId: 'chk-x', amount: 10 })))
      expect((await postJson(callbackUrl, body)).status).toBeLessThan(500);
    await sandbox.settled();
    await shop.example.app.get<InboundPipeline>(SERVICE_APP_PIPELINE).drain();
    await shop.example.app.get(CheckoutService).drain();
    const lines = lineTexts(logger);
    // The shop's own lines quoted the hostile OrderId (escaped), the checkout module's the reference.
    const quoted = (context: string) =>
      logger.lines.some((l) => l.context === context && l.message.includes(`r\\n${SHORT_FORGED}`));
    expect({ bundles: quoted('Bundles'), checkout: quoted('HubtelCheckout') }).toEqual({
      bundles: true,
      checkout: true,
    });
    expect(unsafeLines(lines)).toEqual([]);
  });
});
