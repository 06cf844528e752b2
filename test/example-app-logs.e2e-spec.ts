/**
 * What the example app (and the modules and sandbox under it) write to the log while they work:
 * a paid order with its receipt, a receipt whose outcome is unknown, a tampered callback, a data
 * bundle, a checkout the platform refused. Phone numbers appear masked (`233******456`) and no
 * credential appears at all, neither as text nor as a Basic auth header.
 */
import { CheckoutService } from 'nestjs-hubtel/checkout';
import { basicAuthHeader } from '../libs/sandbox/src/sandbox.http.js';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { CaptureLogger } from './support/capture-logger.js';
import { getOrder, startExampleInProcess, type InProcessExample } from './support/example-app.harness.js';

/** A whole MSISDN: country code and nine digits, or a national number, not inside a longer digit run. */
/** Ids are not phone numbers: digit runs glued to letters and UUIDs are left out, as core's masking does. */
const WHOLE_PHONE = /(?<![\dA-Za-z])(?:233\d{9}|0[235]\d{8})(?![\dA-Za-z])/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

describe('example app logs: phone numbers masked, credentials never', () => {
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

  async function order(phone: string): Promise<string> {
    const res = await fetch(`${shop.url}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ product: 'kente-mug', phone, name: 'Ama' }),
    });
    const body = (await res.json()) as { orderId: string };
    expect(res.status).toBe(201);
    return body.orderId;
  }

  it('masks every number and names no credential across purchases, faults and a data bundle', async () => {
    const checkout = shop.example.app.get(CheckoutService);

    // Paid, receipt sent.
    const paid = await order('0244123456');
    await sandbox.pay(paid);
    await checkout.drain();
    expect(await getOrder(shop.url, paid)).toMatchObject({ status: 'paid', receipt: { status: 'sent' } });

    // Paid, but the receipt's answer is lost: outcome unknown, logged as a warning.
    const unknown = await order('0201234567');
    sandbox.faults.add({ match: { path: '/v1/messages/send' }, processRequest: true, status: 502, times: 1 });
    await sandbox.pay(unknown, { phone: '0201234567' });
    await checkout.drain();
    expect(await getOrder(shop.url, unknown)).toMatchObject({ receipt: { status: 'unknown' } });

    // A callback with a wrong amount: rejected, logged.
    const tampered = await order('0271234567');
    await sandbox.pay(tampered, { phone: '0271234567', fault: { amount: 1 } });
    await checkout.drain();

    // The platform refuses to create the invoice, quoting the payer's number.
    sandbox.faults.add({
      match: { path: '/items/initiate' },
      status: 400,
      body: {
        responseCode: '4000',
        status: 'Error',
        message: 'PayeeMobileNumber 233559876543 is barred',
        data: null,
      },
      times: 1,
    });
    const refused = await fetch(`${shop.url}/orders`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ product: 'shea-soap', phone: '0559876543' }),
    });
    expect(refused.status).toBe(502);
    await refused.arrayBuffer();

    // A data bundle for another number.
    const session = sandbox.serviceApp(shop.url, { mobile: '233241112222' });
    await session.start();
    await session.reply('0501234567');
    await session.choose('DATA_1GB');
    await session.pay();
    await session.waitForCallback();
    await sandbox.settled();

    const text = logger.text();
    // The paths above did log, numbers included (masked): a silent logger would prove nothing.
    for (const masked of ['233******456', '233******567', '233******543']) expect(text).toContain(masked);
    const leaks = logger.lines
      .filter((l) => WHOLE_PHONE.test(l.message.replace(UUID, '')))
      .map((l) => l.message);
    expect(leaks).toEqual([]);
    for (const pair of Object.values(sandbox.credentials)) {
      expect(text).not.toContain(pair.clientSecret);
      expect(text).not.toContain(basicAuthHeader(pair).slice('Basic '.length));
    }
  });
});
