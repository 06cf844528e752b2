import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { requestOnce } from './sandbox.http.js';

describe('requestOnce', () => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume().on('end', () => res.end('ok'));
  });
  let port: number;

  beforeAll(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());
  beforeEach(() => (seen.length = 0));

  it('sends credentials written in the URL as Basic auth, decoded as node:http does', async () => {
    const answer = await requestOnce('POST', `http://shop%40gh:p%3Ass@127.0.0.1:${port}/callback`, '{}', {
      timeoutMs: 5_000,
    });
    expect(answer.statusCode).toBe(200);
    expect(seen[0]!.authorization).toBe(`Basic ${Buffer.from('shop@gh:p:ss').toString('base64')}`);
  });

  it('keeps an Authorization header given, sends none without credentials, and a malformed escape as written', async () => {
    await requestOnce('POST', `http://u:p@127.0.0.1:${port}/`, '{}', {
      headers: { Authorization: 'Bearer given' },
      timeoutMs: 5_000,
    });
    await requestOnce('GET', `http://127.0.0.1:${port}/`, '', { timeoutMs: 5_000 });
    await requestOnce('GET', `http://a%zz:b@127.0.0.1:${port}/`, '', { timeoutMs: 5_000 });
    expect(seen.map((h) => h.authorization)).toEqual([
      'Bearer given',
      undefined,
      `Basic ${Buffer.from('a%zz:b').toString('base64')}`, // a malformed escape goes as written
    ]);
  });
});
