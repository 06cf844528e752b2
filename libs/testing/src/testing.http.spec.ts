import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HubtelConfigError, HubtelNetworkError, HubtelTimeoutError } from 'nestjs-hubtel';
import { sendJson } from './testing.http.js';

/** What the senders answer when a test gives them what they cannot send, or the app answers oddly. */
describe('sendJson', () => {
  const bodies: string[] = [];
  let server: http.Server;
  let origin: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        bodies.push(body);
        if (req.url === '/silent') return; // never answers
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{not json');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['an undefined body', 'http://127.0.0.1:9', undefined, /"body": cannot be sent as JSON/],
    ['a relative URL', 'callback', {}, /"target": "callback" is not an absolute URL/],
    ['a URL not http(s)', 'ftp://127.0.0.1/callback', {}, /"target": must be an http\(s\) URL, got ftp:/],
    ['neither a URL nor an app', 42, {}, /"target": must be a URL or a Nest application/],
    ['an app not initialised', { getHttpServer: () => undefined }, {}, /call await app\.init\(\) first/],
  ])('refuses %s with a HubtelConfigError, sending nothing', async (_name, target, body, message) => {
    const sent = bodies.length;
    const error = await sendJson(target as never, body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as Error).message).toMatch(message);
    expect(bodies).toHaveLength(sent);
  });

  it('keeps a body that says JSON but is not as text', async () => {
    const sent = await sendJson(origin, { a: 1 }, { path: '/callback' });
    expect(sent).toMatchObject({
      status: 200,
      body: '{not json',
      text: '{not json',
      url: `${origin}/callback`,
    });
    expect(bodies.at(-1)).toBe('{"a":1}');
  });

  it('listens on an app that is only initialised for the call, then closes it again', async () => {
    const app = http.createServer((_req, res) => res.writeHead(204).end());
    try {
      const sent = await sendJson({ getHttpServer: () => app }, 'raw text');
      expect(sent.status).toBe(204);
      expect(app.listening).toBe(false);
    } finally {
      app.close();
    }
  });

  it('a refused connection is a HubtelNetworkError, an app that never answers a HubtelTimeoutError', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(sendJson(`http://127.0.0.1:${port}`, {})).rejects.toBeInstanceOf(HubtelNetworkError);
    await expect(sendJson(`${origin}/silent`, {}, { timeoutMs: 50 })).rejects.toBeInstanceOf(
      HubtelTimeoutError,
    );
  });
});
