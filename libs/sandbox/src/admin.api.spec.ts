import http from 'node:http';
import { HubtelConfigError } from 'nestjs-hubtel';
import { SANDBOX_DASHBOARD_PATH } from './dashboard/dashboard.stream.js';
import { HubtelSandbox } from './sandbox.server.js';
import { call, checkoutRequest, startReceiver, type Receiver } from './__tests__/sandbox.test-helpers.js';

describe('HubtelSandbox admin API (/_sandbox)', () => {
  let sandbox: HubtelSandbox;
  let merchant: Receiver;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
    merchant = await startReceiver();
  });
  afterEach(() => {
    sandbox.reset();
    merchant.requests.length = 0;
  });
  afterAll(async () => {
    await sandbox.stop();
    await merchant.close();
  });

  it('describes the sandbox: URLs, credentials, POS Sales ID, stats', async () => {
    const res = await call(sandbox, 'GET', '/_sandbox');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      name: 'nestjs-hubtel sandbox',
      url: sandbox.url,
      baseUrls: {
        sms: sandbox.url,
        checkout: sandbox.url,
        status: sandbox.url,
        fulfillmentCallback: sandbox.url,
      },
      credentials: {
        sms: { clientId: 'sandbox-sms', clientSecret: 'sandbox-sms-secret' },
        api: { clientId: 'sandbox-api', clientSecret: 'sandbox-api-secret' },
      },
      posSalesId: '2000000',
      stats: expect.objectContaining({ requests: 1 }),
    });
  });

  it('lists records, pays and cancels invoices, re-sends deliveries and resets', async () => {
    await call(sandbox, 'POST', '/v1/messages/send', {
      body: { From: 'Shop', To: '233241234567', Content: 'x' },
      auth: 'sms',
    });
    await call(sandbox, 'POST', '/v1/messages/send', {
      body: { From: 'Shop', To: '233201234567', Content: 'y' },
      auth: 'sms',
    });
    expect((await call(sandbox, 'GET', '/_sandbox/messages')).json).toHaveLength(2);
    expect(
      (await call(sandbox, 'GET', '/_sandbox/messages?to=0201234567')).json.map((m: any) => m.content),
    ).toEqual(['y']);
    expect(
      (await call(sandbox, 'GET', '/_sandbox/messages?limit=1')).json.map((m: any) => m.content),
    ).toEqual(['y']);

    const a = checkoutRequest(merchant);
    const b = checkoutRequest(merchant);
    await call(sandbox, 'POST', '/items/initiate', { body: a, auth: 'api' });
    await call(sandbox, 'POST', '/items/initiate', { body: b, auth: 'api' });
    expect((await call(sandbox, 'GET', '/_sandbox/invoices')).json).toHaveLength(2);
    expect((await call(sandbox, 'GET', `/_sandbox/invoices/${a.clientReference}`)).json.state).toBe(
      'pending',
    );

    const paid = await call(sandbox, 'POST', `/_sandbox/invoices/${a.clientReference}/pay`, {
      body: { phone: '0241234567' },
    });
    expect(paid.status).toBe(200);
    expect(paid.json).toMatchObject({
      outcome: 'paid',
      invoice: { state: 'paid' },
      deliveries: [{ state: 'delivered' }],
    });
    expect(merchant.requests).toHaveLength(1);
    expect((await call(sandbox, 'POST', `/_sandbox/invoices/${b.clientReference}/cancel`)).json.state).toBe(
      'cancelled',
    );

    const deliveries = (await call(sandbox, 'GET', '/_sandbox/deliveries')).json;
    expect(deliveries).toHaveLength(1);
    const resent = await call(sandbox, 'POST', `/_sandbox/deliveries/${deliveries[0].id}/redeliver`);
    expect(resent.json).toMatchObject({ redeliveryOf: deliveries[0].id, state: 'delivered' });
    expect(merchant.requests).toHaveLength(2);

    expect((await call(sandbox, 'GET', '/_sandbox/stats')).json).toMatchObject({
      messages: 2,
      invoices: 2,
      payments: 1,
      deliveries: 2,
    });
    expect((await call(sandbox, 'POST', '/_sandbox/reset')).json).toEqual({ reset: true });
    expect((await call(sandbox, 'GET', '/_sandbox/invoices')).json).toEqual([]);
  });

  it('answers 404, 409 and 400 with {error, message}', async () => {
    expect(await call(sandbox, 'POST', '/_sandbox/invoices/nope/pay')).toMatchObject({
      status: 404,
      json: { error: 'HUBTEL_NOT_FOUND' },
    });
    const a = checkoutRequest(merchant);
    await call(sandbox, 'POST', '/items/initiate', { body: a, auth: 'api' });
    await call(sandbox, 'POST', `/_sandbox/invoices/${a.clientReference}/cancel`);
    expect((await call(sandbox, 'POST', `/_sandbox/invoices/${a.clientReference}/pay`)).status).toBe(409);
    expect((await call(sandbox, 'POST', `/_sandbox/invoices/${a.clientReference}/cancel`)).status).toBe(409);
    expect((await call(sandbox, 'POST', '/_sandbox/invoices/x/pay', { raw: '[1]' })).status).toBe(400);
    expect((await call(sandbox, 'POST', '/_sandbox/deliveries/nope/redeliver')).status).toBe(404);
    expect((await call(sandbox, 'GET', '/_sandbox/nothing')).json).toMatchObject({
      error: '404',
      message: expect.any(String),
    });
  });

  describe('POST /_sandbox/invoices/{ref}/pay with options', () => {
    async function invoice(): Promise<string> {
      const body = checkoutRequest(merchant);
      expect((await call(sandbox, 'POST', '/items/initiate', { body, auth: 'api' })).status).toBe(200);
      return body.clientReference as string;
    }
    const statusCheck = (ref: string) =>
      call(sandbox, 'GET', `/transactions/${sandbox.posSalesId}/status?clientReference=${ref}`, {
        auth: 'api',
      });

    it('deliver: false marks it paid without its callback; the status check says Paid; redeliver sends it', async () => {
      const ref = await invoice();
      const res = await call(sandbox, 'POST', `/_sandbox/invoices/${ref}/pay`, {
        body: { deliver: false, phone: '0201234567' },
      });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({
        outcome: 'paid',
        invoice: { state: 'paid', customerPhoneNumber: '233201234567' },
        deliveries: [{ state: 'dropped', faults: ['drop'] }],
      });
      expect(merchant.requests).toHaveLength(0);
      expect((await statusCheck(ref)).json.data).toMatchObject({ status: 'Paid', clientReference: ref });
      // The callback that was held back can still be sent.
      const resent = await call(
        sandbox,
        'POST',
        `/_sandbox/deliveries/${res.json.deliveries[0].id}/redeliver`,
      );
      expect(resent.json).toMatchObject({ state: 'delivered' });
      expect(merchant.requests).toHaveLength(1);
      expect(merchant.requests[0]!.body).toMatchObject({
        ResponseCode: '0000',
        Data: { ClientReference: ref, CustomerPhoneNumber: '233201234567' },
      });
    });

    it('applies a one-off callback fault given as JSON (duplicate, wrong amount)', async () => {
      const ref = await invoice();
      const res = await call(sandbox, 'POST', `/_sandbox/invoices/${ref}/pay`, {
        body: { fault: { duplicate: 2, amount: 1 } },
      });
      expect(res.status).toBe(200);
      expect(res.json.deliveries).toHaveLength(2);
      await merchant.waitForCount(2);
      for (const req of merchant.requests) expect((req.body as any).Data.Amount).toBe(1);
      // One-off: the next payment's callback is untouched.
      const next = await invoice();
      await call(sandbox, 'POST', `/_sandbox/invoices/${next}/pay`, { body: { outcome: 'failed' } });
      expect(merchant.requests).toHaveLength(3);
      expect(merchant.requests[2]!.body).toMatchObject({
        ResponseCode: '2001',
        Data: { ClientReference: next, Amount: 12.5 },
      });
    });

    it.each([
      [{ outcome: 'maybe' }, 'outcome'],
      [{ deliver: 'no' }, 'deliver'],
      [{ delivr: false }, 'delivr'],
      [{ phone: 233241234567 }, 'phone'],
      [{ phone: '12' }, 'phone'],
      [{ fault: 'drop' }, 'fault'],
      [{ fault: {} }, 'fault'],
      [{ fault: { duplicate: 0 } }, 'fault.duplicate'],
      [{ fault: { amount: '1' } }, 'fault.amount'],
      [{ fault: { match: { clientReference: 'x' }, drop: true } }, 'fault.match'],
      [{ fault: { body: 'x' } }, 'fault.body'],
      [{ deliver: false, fault: { duplicate: 2 } }, 'fault'],
      [{ fault: { checkoutId: '' } }, 'fault.checkoutId'],
      [{ fault: { checkoutId: 7 } }, 'fault.checkoutId'],
    ])('refuses %j with 400 naming %s, and changes nothing', async (body, field) => {
      const ref = await invoice();
      const res = await call(sandbox, 'POST', `/_sandbox/invoices/${ref}/pay`, { body });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: 'HUBTEL_VALIDATION_FAILED', message: expect.any(String) });
      expect(res.json.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(sandbox.invoice(ref)!.state).toBe('pending');
      expect(sandbox.deliveries()).toHaveLength(0);
      expect(merchant.requests).toHaveLength(0);
    });

    it('refuses a body that is not JSON with 400 or 415', async () => {
      const ref = await invoice();
      const notJson = await call(sandbox, 'POST', `/_sandbox/invoices/${ref}/pay`, { raw: '{deliver:' });
      expect(notJson.status).toBe(400);
      expect(notJson.json).toMatchObject({ error: expect.any(String), message: expect.any(String) });
      const text = await call(sandbox, 'POST', `/_sandbox/invoices/${ref}/pay`, {
        raw: 'deliver=false',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(text.status).toBe(415);
      expect(sandbox.invoice(ref)!.state).toBe('pending');
    });
  });

  describe('POST /_sandbox/sessions/{id}/pay (a service payment told from another process)', () => {
    it('records the payment; the fulfillment callback the app sends is listed and settles the session', async () => {
      const paid = await call(sandbox, 'POST', '/_sandbox/sessions/s-1/pay', {
        body: { amount: 5, orderId: 'o-1', chargeBearer: null },
      });
      expect(paid.status).toBe(200);
      expect(paid.json).toMatchObject({ sessionId: 's-1', account: 'default', order: { orderId: 'o-1' } });
      const callback = { SessionId: 's-1', OrderId: 'o-1', ServiceStatus: 'success' };
      expect((await call(sandbox, 'POST', '/callback', { body: callback })).status).toBe(200);
      expect((await call(sandbox, 'GET', '/_sandbox/fulfillment-callbacks')).json).toEqual([
        expect.objectContaining({
          sessionId: 's-1',
          orderId: 'o-1',
          serviceStatus: 'success',
          matched: true,
        }),
      ]);
      expect((await call(sandbox, 'GET', '/_sandbox/sessions/s-1')).json).toMatchObject({
        state: 'fulfilled',
      });
    });

    it.each([
      [{ amount: 5, orderId: ' ' }, 'orderId'],
      [{ amount: '5' }, 'amount'],
      [{ amount: -1 }, 'amount'],
      [{ amount: 5, currency: 'cedi' }, 'currency'],
      [{ amount: 5, chargeBearer: 'nobody' }, 'chargeBearer'],
      [{ amount: 5, amout: 5 }, 'amout'],
    ])('refuses %j with 400 naming %s, and records nothing', async (body, field) => {
      const res = await call(sandbox, 'POST', '/_sandbox/sessions/s-bad/pay', { body });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: 'HUBTEL_VALIDATION_FAILED', message: expect.any(String) });
      expect(res.json.errors.map((e: { field: string }) => e.field)).toEqual([field]);
      expect(sandbox.sessions()).toEqual([]);
    });
  });

  it('lets extensions add routes (the dashboard) that see the records', async () => {
    const extended = await HubtelSandbox.start();
    try {
      extended.addRoute('GET', '/_sandbox/dashboard/count', () => ({
        status: 200,
        json: { messages: extended.messages().length },
      }));
      extended.addRoute('GET', '/_sandbox/stream', (ctx) => {
        ctx.res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        ctx.res.write('data: hello\n\n');
      });
      expect((await call(extended, 'GET', '/_sandbox/dashboard/count')).json).toEqual({ messages: 0 });
      const stream = await fetch(`${extended.url}/_sandbox/stream`);
      const reader = stream.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: hello\n\n');
      await reader.cancel();
    } finally {
      // stop() must close a response left open (an event stream).
      await extended.stop();
    }
  });

  it('GET / sends a browser to the dashboard (sandbox.dashboardUrl)', async () => {
    expect(sandbox.dashboardUrl).toBe(`${sandbox.url}/_dashboard`);
    const res = await fetch(`${sandbox.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/_dashboard');
    await res.arrayBuffer();
    const followed = await fetch(`${sandbox.url}/`);
    expect(followed.url).toBe(sandbox.dashboardUrl);
    expect(followed.status).toBe(200);
    expect(followed.headers.get('content-type')).toMatch(/^text\/html/);
    await followed.arrayBuffer();
    // A fault on every platform request leaves the sandbox's own pages alone.
    sandbox.faults.add({ status: 503 });
    expect((await fetch(`${sandbox.url}/`, { redirect: 'manual', method: 'HEAD' })).status).toBe(302);
  });

  it('GET / without the dashboard: a small HTML index of the base URLs', async () => {
    expect(() => new HubtelSandbox({ dashboard: 'yes' as never })).toThrow(HubtelConfigError);
    const plain = await HubtelSandbox.start({ dashboard: false, posSalesId: '11684' });
    try {
      expect(plain.dashboardUrl).toBeUndefined();
      expect((await call(plain, 'GET', '/_dashboard')).status).toBe(404);
      const res = await fetch(`${plain.url}/`, { redirect: 'manual' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await res.text();
      const listed = [...html.matchAll(/data-testid="base-url">([^<]+)</g)].map((m) => m[1]);
      expect(listed).toEqual([...Object.values(plain.baseUrls()), `${plain.url}/_sandbox`]);
      expect(html).toContain('/transactions/11684/status');
      expect(html).not.toMatch(/<script|sandbox-api-secret/);
    } finally {
      await plain.stop();
    }
  });

  it('logs inbound requests without bodies or credentials', async () => {
    await call(sandbox, 'POST', '/v1/messages/send', {
      body: { From: 'Shop', To: '233241234567', Content: 'secret text' },
      auth: 'sms',
    });
    const [log] = sandbox.requests();
    expect(log).toMatchObject({ method: 'POST', path: '/v1/messages/send', api: 'sms', statusCode: 200 });
    expect(JSON.stringify(log)).not.toMatch(/secret|sandbox-sms/);
  });

  describe('cross-site requests and DNS rebinding', () => {
    /** A request with any headers, `Host` included (fetch may not set it). */
    function raw(
      base: string,
      method: string,
      path: string,
      headers: Record<string, string>,
      body = '',
    ): Promise<{ status: number; json: any }> {
      return new Promise((resolve, reject) => {
        const req = http.request(`${base}${path}`, { method, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: res.statusCode!, json });
          });
        });
        req.on('error', reject);
        req.end(body);
      });
    }

    async function invoice(): Promise<string> {
      const request = checkoutRequest(merchant);
      expect((await call(sandbox, 'POST', '/items/initiate', { body: request, auth: 'api' })).status).toBe(
        200,
      );
      return request.clientReference as string;
    }

    it('refuses a POST that is not application/json (a form or text/plain page can send one unasked): 415, nothing changes', async () => {
      const ref = await invoice();
      for (const headers of <Record<string, string>[]>[
        { 'Content-Type': 'text/plain' },
        { 'Content-Type': 'text/plain; charset=json' },
        { 'Content-Type': 'multipart/form-data; boundary=x' },
        {},
      ]) {
        for (const path of [
          `/_sandbox/invoices/${ref}/pay`,
          `/_sandbox/invoices/${ref}/cancel`,
          '/_sandbox/reset',
        ]) {
          const res = await raw(sandbox.url, 'POST', path, headers, '{"outcome":"paid"}');
          expect({ path, headers, status: res.status }).toEqual({ path, headers, status: 415 });
          expect(res.json).toMatchObject({ message: expect.stringContaining('application/json') });
        }
      }
      expect(sandbox.invoice(ref)!.state).toBe('pending');
      expect(merchant.requests).toHaveLength(0);
      const json = await raw(sandbox.url, 'POST', `/_sandbox/invoices/${ref}/pay`, {
        'Content-Type': 'application/json; charset=utf-8',
      });
      expect(json.status).toBe(200);
    });

    it('answers loopback names and configured hosts only: 403 for any other Host, nothing changes', async () => {
      const ref = await invoice();
      const port = sandbox.port;
      const json = { 'Content-Type': 'application/json' };
      for (const host of [
        'attacker.example',
        `attacker.example:${port}`,
        '127.0.0.1.attacker.example',
        '10.0.0.5',
      ]) {
        for (const [method, path] of [
          ['GET', '/_sandbox'],
          ['GET', '/_sandbox/invoices'],
          ['GET', SANDBOX_DASHBOARD_PATH],
          ['POST', `/_sandbox/invoices/${ref}/pay`],
          ['POST', '/_sandbox/reset'],
        ] as const) {
          const res = await raw(sandbox.url, method, path, { ...json, Host: host });
          expect({ host, path, status: res.status }).toEqual({ host, path, status: 403 });
        }
      }
      expect(sandbox.invoice(ref)!.state).toBe('pending');
      for (const host of [
        `localhost:${port}`,
        `127.0.0.1:${port}`,
        `[::1]:${port}`,
        `app.localhost:${port}`,
      ]) {
        expect((await raw(sandbox.url, 'GET', '/_sandbox/stats', { Host: host })).status).toBe(200);
      }
      // The platform's own APIs are not the admin API: any Host (a container's name) reaches them.
      expect((await raw(sandbox.url, 'GET', '/_sandbox/stats', { Host: 'sandbox:4010' })).status).toBe(403);
      expect(
        (await raw(sandbox.url, 'POST', '/v1/messages/send', { ...json, Host: 'sandbox:4010' })).status,
      ).toBe(401);

      const configured = await HubtelSandbox.start({
        allowedHosts: ['sandbox'],
        publicUrl: 'https://sandbox.example.test',
      });
      try {
        for (const host of ['sandbox:4010', 'sandbox.example.test', 'SANDBOX.EXAMPLE.TEST:443'])
          expect(
            (await raw(`http://127.0.0.1:${configured.port}`, 'GET', '/_sandbox/stats', { Host: host }))
              .status,
          ).toBe(200);
        expect(
          (await raw(`http://127.0.0.1:${configured.port}`, 'GET', '/_sandbox/stats', { Host: 'other.test' }))
            .status,
        ).toBe(403);
      } finally {
        await configured.stop();
      }
      const any = await HubtelSandbox.start({ allowedHosts: ['*'] });
      try {
        expect((await raw(any.url, 'GET', '/_sandbox/stats', { Host: 'anything.test' })).status).toBe(200);
      } finally {
        await any.stop();
      }
      expect(() => new HubtelSandbox({ allowedHosts: [''] })).toThrow(HubtelConfigError);
    });
  });
});

describe('HubtelSandbox admin API: the filters docs/dev-tools.md lists', () => {
  let sandbox: HubtelSandbox;
  beforeAll(async () => {
    sandbox = await HubtelSandbox.start({ accounts: [{ name: 'north' }] });
    for (const [keys, to] of [
      ['sandbox-north-sms&clientsecret=sandbox-north-sms-secret', '0241234567'],
      ['sandbox-sms&clientsecret=sandbox-sms-secret', '0241234567'],
      ['sandbox-sms&clientsecret=sandbox-sms-secret', '0201234567'],
    ] as const)
      expect(
        (await call(sandbox, 'GET', `/v1/messages/send?clientid=${keys}&from=Shop&to=${to}&content=hi`))
          .status,
      ).toBe(200);
    sandbox.recordServicePayment('s-north', { amount: 5, account: 'north' });
    sandbox.recordServicePayment('s-default', { amount: 7 });
  });
  afterAll(() => sandbox.stop());
  const get = async (path: string) => {
    const res = await call(sandbox, 'GET', path);
    return { status: res.status, json: res.json as any };
  };

  it('?to= (any way the number is written) and ?account= together, ?limit=', async () => {
    const to = await get('/_sandbox/messages?to=233241234567');
    expect(to.json.map((m: any) => m.account)).toEqual(['north', 'default']);
    const both = await get('/_sandbox/messages?to=0241234567&account=north');
    expect(both.json.map((m: any) => [m.account, m.to])).toEqual([['north', '0241234567']]); // as sent
    expect((await get('/_sandbox/messages?limit=1')).json.map((m: any) => m.to)).toEqual(['0201234567']);
  });

  it('?account= on sessions; an unknown account is a 404 naming it, not an empty list', async () => {
    expect((await get('/_sandbox/sessions?account=north')).json.map((s: any) => s.sessionId)).toEqual([
      's-north',
    ]);
    expect((await get('/_sandbox/sessions')).json.map((s: any) => s.sessionId)).toEqual([
      's-north',
      's-default',
    ]);
    const unknown = await get('/_sandbox/sessions?account=nowhere');
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(unknown.json)).toContain('nowhere');
  });

  it('GET /_sandbox/sessions/{id} answers the session the list shows; an unknown id is a 404', async () => {
    const [listed] = (await get('/_sandbox/sessions?account=north')).json;
    const one = await get(`/_sandbox/sessions/${listed.sessionId}`);
    expect(one).toEqual({ status: 200, json: listed });
    expect((await get('/_sandbox/sessions/never-seen')).status).toBe(404);
  });

  it('GET /_sandbox/requests lists every request received (itself too), newest last', async () => {
    const requests = (await get('/_sandbox/requests')).json as Array<{ id: number; path: string }>;
    expect(requests.filter((r) => r.path.startsWith('/v1/messages/send'))).toHaveLength(3);
    const [last] = (await get('/_sandbox/requests?limit=1')).json;
    expect(last).toEqual(
      expect.objectContaining({ id: requests.at(-1)!.id + 1, path: '/_sandbox/requests' }),
    );
  });
});
