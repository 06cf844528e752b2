import { HubtelSandbox } from './sandbox.server.js';
import { call } from './__tests__/sandbox.test-helpers.js';
import { basicAuthHeader } from './sandbox.http.js';

describe('HubtelSandbox SMS API (over HTTP)', () => {
  let sandbox: HubtelSandbox;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
  });
  afterEach(() => sandbox.reset());
  afterAll(() => sandbox.stop());

  const batch = (body: unknown, auth: 'sms' | 'api' | 'none' = 'sms') =>
    call(sandbox, 'POST', '/v1/messages/batch/simple/send', { body, auth });

  describe('POST /v1/messages/batch/simple/send', () => {
    it('answers the contract body: batchId, status 0, one {recipient, content, messageId} per recipient', async () => {
      const res = await batch({
        From: 'Shop',
        Recipients: ['233241234567', '233501234567'],
        Content: 'Your order is paid',
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Object.keys(res.json).sort()).toEqual(['batchId', 'data', 'status']);
      expect(res.json.status).toBe(0);
      expect(res.json.batchId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.json.data).toHaveLength(2);
      res.json.data.forEach((entry: any, i: number) => {
        expect(Object.keys(entry).sort()).toEqual(['content', 'messageId', 'recipient']);
        expect(entry.recipient).toBe(['233241234567', '233501234567'][i]);
        expect(entry.content).toBe('Your order is paid');
        expect(typeof entry.messageId).toBe('string');
      });
      expect(new Set(res.json.data.map((d: any) => d.messageId)).size).toBe(2);
    });

    it('records every message, listable and searchable by number in any form', async () => {
      await batch({ From: 'Shop', Recipients: ['233241234567', '+233 50 123 4567'], Content: 'hello' });
      const all = sandbox.messages();
      expect(all.map((m) => m.to)).toEqual(['233241234567', '+233 50 123 4567']);
      expect(all.every((m) => m.from === 'Shop' && m.content === 'hello' && m.kind === 'batch')).toBe(true);
      expect(sandbox.messagesTo('0501234567')).toHaveLength(1);
      expect(sandbox.messagesTo('233501234567')[0]!.to).toBe('+233 50 123 4567');
      expect(sandbox.messagesTo('233209999999')).toEqual([]);
      expect(sandbox.stats()).toMatchObject({ messages: 2, batches: 1 });
    });

    it('rejects wrong, missing and other-API credentials with 401 and records nothing', async () => {
      for (const auth of ['none', 'api', { clientId: 'sandbox-sms', clientSecret: 'nope' }] as const) {
        const res = await call(sandbox, 'POST', '/v1/messages/batch/simple/send', {
          body: { From: 'Shop', Recipients: ['233241234567'], Content: 'x' },
          auth,
        });
        expect(res.status).toBe(401);
        expect(res.json).toEqual({ status: 401, message: 'The request authorization failed.' });
      }
      expect(sandbox.messages()).toEqual([]);
    });

    it.each([
      [
        'a bad destination',
        { From: 'Shop', Recipients: ['233241234567', 'not-a-number'], Content: 'x' },
        1,
        'Recipients[1]',
      ],
      ['a missing sender', { Recipients: ['233241234567'], Content: 'x' }, 2, 'From'],
      [
        'a sender over 11 characters',
        { From: 'AVeryLongSender', Recipients: ['233241234567'], Content: 'x' },
        2,
        'From',
      ],
      [
        'content too long',
        { From: 'Shop', Recipients: ['233241234567'], Content: 'x'.repeat(1531) },
        3,
        'Content',
      ],
      ['empty content', { From: 'Shop', Recipients: ['233241234567'], Content: '' }, 6, 'Content'],
      ['no recipients', { From: 'Shop', Recipients: [], Content: 'x' }, 8, 'Recipients'],
      [
        'recipients not an array',
        { From: 'Shop', Recipients: '233241234567', Content: 'x' },
        8,
        'Recipients',
      ],
      ['content not a string', { From: 'Shop', Recipients: ['233241234567'], Content: 42 }, 8, 'Content'],
    ])('answers 400 with sub-code for %s', async (_name, body, subCode, field) => {
      const res = await batch(body);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ status: subCode, message: expect.any(String) });
      expect(res.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(sandbox.messages()).toEqual([]);
    });

    it('answers 400 (sub-code 100) to invalid JSON and a non-object body, 415 to a non-JSON content type', async () => {
      const bad = await call(sandbox, 'POST', '/v1/messages/batch/simple/send', {
        raw: '{"From": ',
        auth: 'sms',
      });
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ status: 100, message: 'Request body is not valid JSON' });
      const array = await batch([1, 2]);
      expect(array.status).toBe(400);
      expect(array.json.status).toBe(100);
      const text = await call(sandbox, 'POST', '/v1/messages/batch/simple/send', {
        raw: 'From=Shop',
        auth: 'sms',
        headers: { 'Content-Type': 'text/plain' },
      });
      expect(text.status).toBe(415);
      expect(text.json.status).toBe(415);
    });

    it('answers 400 (sub-code 100) to a body that is not valid UTF-8, and sends nothing', async () => {
      const json = Buffer.from('{"From":"Shop","To":"233241234567","Content":"hi @"}', 'utf8');
      const body = Buffer.concat([json.subarray(0, json.length - 3), Buffer.from([0xff]), json.subarray(-2)]);
      const res = await fetch(`${sandbox.url}/v1/messages/send`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: basicAuthHeader(sandbox.credentials.sms),
        },
        body,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ status: 100, message: 'Request body is not valid UTF-8' });
      expect(sandbox.messages()).toEqual([]);
    });

    it('answers 413 to a body over the size limit', async () => {
      const small = await HubtelSandbox.start({ maxBodyBytes: 100 });
      try {
        const res = await call(small, 'POST', '/v1/messages/batch/simple/send', {
          body: { From: 'Shop', Recipients: ['233241234567'], Content: 'x'.repeat(200) },
          auth: 'sms',
        });
        expect(res.status).toBe(413);
        expect(res.json.status).toBe(413);
      } finally {
        await small.stop();
      }
    });
  });

  describe('POST /v1/messages/send', () => {
    it('answers {rate, messageId, status: 0, networkId, clientReference: null, statusDescription}', async () => {
      const res = await call(sandbox, 'POST', '/v1/messages/send', {
        body: { From: 'Shop', To: '233241234567', Content: 'hi' },
        auth: 'sms',
      });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        rate: 0.0309,
        messageId: expect.any(String),
        status: 0,
        networkId: '62001',
        clientReference: null,
        statusDescription: 'request submitted successfully',
      });
      expect(sandbox.message(res.json.messageId)).toMatchObject({
        kind: 'single',
        batchId: null,
        to: '233241234567',
        content: 'hi',
      });
    });

    it('validates To like the batch recipients', async () => {
      const res = await call(sandbox, 'POST', '/v1/messages/send', {
        body: { From: 'Shop', To: '12', Content: 'hi' },
        auth: 'sms',
      });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({
        status: 1,
        errors: [{ field: 'To', message: 'Invalid destination address' }],
      });
    });

    it('also serves the GET variant authenticated by query parameters', async () => {
      const ok = await call(
        sandbox,
        'GET',
        '/v1/messages/send?clientid=sandbox-sms&clientsecret=sandbox-sms-secret&from=Shop&to=0241234567&content=Hello',
      );
      expect(ok.status).toBe(200);
      expect(ok.json.status).toBe(0);
      expect(sandbox.messagesTo('233241234567')).toHaveLength(1);
      const bad = await call(
        sandbox,
        'GET',
        '/v1/messages/send?clientid=sandbox-sms&clientsecret=x&from=Shop&to=0241234567&content=Hello',
      );
      expect(bad.status).toBe(401);
    });
  });

  describe('status look-ups', () => {
    it('GET /v1/messages/{id} answers the message with Delivered and updateTime', async () => {
      const sent = await call(sandbox, 'POST', '/v1/messages/send', {
        body: { From: 'Shop', To: '233241234567', Content: 'hi' },
        auth: 'sms',
      });
      const res = await call(sandbox, 'GET', `/v1/messages/${sent.json.messageId}`, { auth: 'sms' });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        rate: 0.0309,
        batchId: null,
        messageId: sent.json.messageId,
        content: 'hi',
        status: 'Delivered',
        updateTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
        time: expect.stringMatching(/Z$/),
        to: '233241234567',
        from: 'Shop',
      });
    });

    it('GET /v1/messages/batch/{id} lists the batch messages', async () => {
      const sent = await call(sandbox, 'POST', '/v1/messages/batch/simple/send', {
        body: { From: 'Shop', Recipients: ['233241234567', '233201234567'], Content: 'b' },
        auth: 'sms',
      });
      const res = await call(sandbox, 'GET', `/v1/messages/batch/${sent.json.batchId}`, { auth: 'sms' });
      expect(res.status).toBe(200);
      expect(res.json.batchId).toBe(sent.json.batchId);
      expect(res.json.rate).toBeCloseTo(0.0618, 4);
      expect(res.json.data.map((m: any) => [m.to, m.status, m.batchId])).toEqual([
        ['233241234567', 'Delivered', sent.json.batchId],
        ['233201234567', 'Delivered', sent.json.batchId],
      ]);
    });

    it('reflects a status set by the test and 404s unknown ids; look-ups need credentials', async () => {
      const sent = await call(sandbox, 'POST', '/v1/messages/send', {
        body: { From: 'Shop', To: '233241234567', Content: 'x' },
        auth: 'sms',
      });
      sandbox.setMessageStatus(sent.json.messageId, 'Undelivered');
      expect(
        (await call(sandbox, 'GET', `/v1/messages/${sent.json.messageId}`, { auth: 'sms' })).json.status,
      ).toBe('Undelivered');
      const missing = await call(sandbox, 'GET', '/v1/messages/00000000-0000-0000-0000-000000000000', {
        auth: 'sms',
      });
      expect(missing.status).toBe(404);
      expect(missing.json).toEqual({ status: 404, message: 'The specified message was not found.' });
      expect((await call(sandbox, 'GET', `/v1/messages/${sent.json.messageId}`)).status).toBe(401);
    });

    it('reports Submitted until the configured delivery delay passed', async () => {
      const slow = await HubtelSandbox.start({ sms: { deliveryDelayMs: 60_000 } });
      try {
        const sent = await call(slow, 'POST', '/v1/messages/send', {
          body: { From: 'Shop', To: '233241234567', Content: 'x' },
          auth: 'sms',
        });
        expect(
          (await call(slow, 'GET', `/v1/messages/${sent.json.messageId}`, { auth: 'sms' })).json.status,
        ).toBe('Submitted');
      } finally {
        await slow.stop();
      }
    });
  });

  it('emits a "message" event per message and waitForMessage resolves on it', async () => {
    const seen: string[] = [];
    const listener = (m: { to: string }) => seen.push(m.to);
    sandbox.on('message', listener);
    const waiting = sandbox.waitForMessage('0241234567');
    await batch({ From: 'Shop', Recipients: ['233201234567', '233241234567'], Content: 'x' });
    expect((await waiting).to).toBe('233241234567');
    expect(seen).toEqual(['233201234567', '233241234567']);
    sandbox.off('message', listener);
  });

  it('keeps memory bounded: only the newest recordLimit messages, exact counters', async () => {
    const small = await HubtelSandbox.start({ recordLimit: 5 });
    try {
      const recipients = Array.from({ length: 12 }, (_, i) => `2332412345${String(i).padStart(2, '0')}`);
      const res = await call(small, 'POST', '/v1/messages/batch/simple/send', {
        body: { From: 'Shop', Recipients: recipients, Content: 'x' },
        auth: 'sms',
      });
      expect(res.status).toBe(200);
      expect(small.messages().map((m) => m.to)).toEqual(recipients.slice(-5));
      expect(small.stats().messages).toBe(12);
      // An evicted message is gone from the look-up too.
      expect(
        (await call(small, 'GET', `/v1/messages/${res.json.data[0].messageId}`, { auth: 'sms' })).status,
      ).toBe(404);
      expect(
        (await call(small, 'GET', `/v1/messages/${res.json.data[11].messageId}`, { auth: 'sms' })).status,
      ).toBe(200);
    } finally {
      await small.stop();
    }
  });

  it('bounds batches by the message ids they hold, not only by their count', async () => {
    const small = await HubtelSandbox.start({ recordLimit: 5 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await call(small, 'POST', '/v1/messages/batch/simple/send', {
          body: {
            From: 'Shop',
            Recipients: ['233241234567', '233241234568', '233241234569'],
            Content: `b${i}`,
          },
          auth: 'sms',
        });
        ids.push(res.json.batchId);
      }
      expect((await call(small, 'GET', `/v1/messages/batch/${ids[0]}`, { auth: 'sms' })).status).toBe(404);
      expect((await call(small, 'GET', `/v1/messages/batch/${ids[1]}`, { auth: 'sms' })).status).toBe(404);
      expect(
        (await call(small, 'GET', `/v1/messages/batch/${ids[2]}`, { auth: 'sms' })).json.data,
      ).toHaveLength(3);
      expect(small.stats().batches).toBe(3);
    } finally {
      await small.stop();
    }
  });

  it('answers unknown routes 404 and wrong methods 405 in the SMS error shape', async () => {
    const notFound = await call(sandbox, 'GET', '/v1/messages/batch/a/b', { auth: 'sms' });
    expect(notFound.status).toBe(404);
    expect(notFound.json.status).toBe(404);
    const wrongMethod = await call(sandbox, 'PUT', '/v1/messages/send', { auth: 'sms', body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('POST');
  });
});
