import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import axios, { AxiosError, type AxiosInstance } from 'axios';
import { Agent } from 'undici';
import { createUndiciAxiosAdapter } from './undici-axios-adapter.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1 whose answer each test writes by hand. */
async function startServer(handler: Handler): Promise<{ url: string; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, sockets };
}

describe('createUndiciAxiosAdapter', () => {
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let handler: Handler;
  let dispatcher: Agent;
  let client: AxiosInstance;

  beforeEach(async () => {
    handler = (_req, _body, res) => res.end('ok');
    server = await startServer((req, body, res) => handler(req, body, res));
    // A private pool per test, so a test's stalled connection cannot leak into the next one.
    dispatcher = new Agent();
    client = axios.create({ adapter: createUndiciAxiosAdapter(dispatcher) });
  });

  afterEach(async () => {
    await dispatcher.destroy();
    for (const s of server!.sockets) s.destroy();
    await new Promise<void>((resolve) => server!.server.close(() => resolve()));
  });

  it('sends method, URL (baseURL + params), headers, auth and body as axios builds them', async () => {
    let seen:
      { method?: string; url?: string; headers: IncomingMessage['headers']; body: string } | undefined;
    handler = (req, body, res) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('X-Trace', 'abc');
      res.end(JSON.stringify({ ok: true }));
    };
    const res = await client.post(
      '/v1/things',
      { Name: 'Kofi', Items: [1, 2] },
      {
        baseURL: `${server!.url}/api/`,
        params: { page: 2, q: 'a b' },
        headers: { 'X-Custom': 'yes' },
        auth: { username: 'id', password: 'secret' },
      },
    );
    expect(seen).toEqual({
      method: 'POST',
      url: '/api/v1/things?page=2&q=a+b',
      headers: expect.objectContaining({
        'x-custom': 'yes',
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from('id:secret').toString('base64')}`,
        'user-agent': `axios/${axios.VERSION}`,
      }) as unknown,
      body: '{"Name":"Kofi","Items":[1,2]}',
    });
    // axios' own transforms still run: the JSON answer is parsed, headers are AxiosHeaders.
    expect(res.status).toBe(200);
    expect(res.statusText).toBe('OK');
    expect(res.data).toEqual({ ok: true });
    expect(res.headers['x-trace']).toBe('abc');
  });

  it('rejects a status validateStatus refuses with the AxiosError axios would give', async () => {
    handler = (_req, _body, res) => {
      res.statusCode = 404;
      res.end('{"message":"nope"}');
    };
    const error = (await client.get(`${server!.url}/missing`).catch((e: unknown) => e)) as AxiosError;
    expect(error).toBeInstanceOf(AxiosError);
    expect(error.code).toBe(AxiosError.ERR_BAD_REQUEST);
    expect(error.response?.status).toBe(404);
    expect(error.response?.data).toEqual({ message: 'nope' });
  });

  it('returns text, array buffers and streams as asked', async () => {
    handler = (_req, _body, res) => res.end('héllo');
    const text = await client.get<string>(server!.url, { responseType: 'text' });
    expect(text.data).toBe('héllo');
    const buffer = await client.get<ArrayBuffer>(server!.url, { responseType: 'arraybuffer' });
    expect(Buffer.from(buffer.data).toString('utf8')).toBe('héllo');
    const stream = await client.get<Readable>(server!.url, { responseType: 'stream' });
    const chunks: Buffer[] = [];
    for await (const chunk of stream.data) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe('héllo');
  });

  it('refuses an answer over maxContentLength, with or without a Content-Length', async () => {
    handler = (req, _body, res) => {
      if (req.url === '/declared') {
        res.setHeader('Content-Length', '2000');
        res.end('x'.repeat(2000));
      } else {
        // Chunked: the size is only known while reading.
        res.write('x'.repeat(600));
        setTimeout(() => res.end('x'.repeat(600)), 10);
      }
    };
    for (const path of ['/declared', '/chunked']) {
      const error = (await client
        .get(`${server!.url}${path}`, { maxContentLength: 1000 })
        .catch((e: unknown) => e)) as AxiosError;
      expect(error).toBeInstanceOf(AxiosError);
      expect(error.message).toBe('maxContentLength size of 1000 exceeded');
    }
    // Within the limit, a chunked answer is read whole.
    const ok = await client.get<string>(`${server!.url}/chunked`, {
      maxContentLength: 5000,
      responseType: 'text',
    });
    expect(ok.data).toHaveLength(1200);
  });

  it('times out the whole exchange, body included, with the code axios uses', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('partial'); // the head arrives, the rest never does
    };
    const clarified = (await client
      .get(server!.url, { timeout: 150, transitional: { clarifyTimeoutError: true } })
      .catch((e: unknown) => e)) as AxiosError;
    expect(clarified.code).toBe('ETIMEDOUT');
    expect(clarified.message).toBe('timeout of 150ms exceeded');
    const classic = (await client.get(server!.url, { timeout: 150 }).catch((e: unknown) => e)) as AxiosError;
    expect(classic.code).toBe('ECONNABORTED');
  });

  it('cancels through an AbortSignal or a cancel token', async () => {
    handler = () => undefined; // never answers
    const controller = new AbortController();
    const pending = client.get(server!.url, { signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 30);
    expect(axios.isCancel(await pending)).toBe(true);

    const source = axios.CancelToken.source();
    const viaToken = client.get(server!.url, { cancelToken: source.token }).catch((e: unknown) => e);
    setTimeout(() => source.cancel('stop'), 30);
    expect(axios.isCancel(await viaToken)).toBe(true);

    const aborted = new AbortController();
    aborted.abort();
    expect(
      axios.isCancel(await client.get(server!.url, { signal: aborted.signal }).catch((e: unknown) => e)),
    ).toBe(true);
  });

  it('passes connection failures through with their code and syscall for the transport to classify', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = (await client.get(`http://127.0.0.1:${port}/`).catch((e: unknown) => e)) as AxiosError & {
      cause?: { syscall?: string };
    };
    expect(refused).toBeInstanceOf(AxiosError);
    expect(refused.code).toBe('ECONNREFUSED');
    expect(refused.cause?.syscall).toBe('connect');

    handler = (req) => req.socket.destroy(); // cut after the request arrived
    const cut = (await client.post(server!.url, 'x').catch((e: unknown) => e)) as AxiosError;
    expect(cut).toBeInstanceOf(AxiosError);
    expect(cut.code).toBe('UND_ERR_SOCKET');
  });

  it('never follows a redirect: the 3xx is the answer', async () => {
    handler = (_req, _body, res) => {
      res.writeHead(302, { Location: '/elsewhere' });
      res.end();
    };
    const res = await client.get(server!.url, { validateStatus: () => true });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/elsewhere');
  });

  it('refuses axios options it cannot honour instead of ignoring them', async () => {
    const error = (await client
      .get(server!.url, { proxy: { host: '127.0.0.1', port: 1 } })
      .catch((e: unknown) => e)) as AxiosError;
    expect(error.code).toBe(AxiosError.ERR_NOT_SUPPORT);
    const body = (await client
      .post(server!.url, new Blob(['x']), { transformRequest: [(d: unknown) => d] })
      .catch((e: unknown) => e)) as AxiosError;
    expect(body.code).toBe(AxiosError.ERR_BAD_REQUEST);
  });
});

describe('createUndiciAxiosAdapter without a dispatcher', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'NO_PROXY', 'no_proxy']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('goes through the proxy named by HTTP_PROXY, as axios Node adapter does', async () => {
    const target = await startServer((_req, _body, res) => res.end('from target'));
    // A minimal forward proxy: CONNECT tunnels (what undici's proxy agent uses) and plain requests.
    const tunnels: string[] = [];
    const proxy = createServer((req, res) => {
      tunnels.push(`GET ${req.url}`);
      res.end('proxied plain');
    });
    proxy.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      tunnels.push(`CONNECT ${req.url}`);
      const [host, port] = (req.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    process.env.NO_PROXY = '';
    process.env.no_proxy = '';
    try {
      const client = axios.create({ adapter: createUndiciAxiosAdapter() });
      const res = await client.get<string>(`${target.url}/via-proxy`, { responseType: 'text' });
      expect(res.data === 'from target' || res.data === 'proxied plain').toBe(true);
      expect(tunnels.length).toBeGreaterThan(0);
      expect(tunnels[0]).toContain(new URL(target.url).port);
    } finally {
      proxy.closeAllConnections?.();
      for (const s of target.sockets) s.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await new Promise<void>((resolve) => target.server.close(() => resolve()));
    }
  });
});
