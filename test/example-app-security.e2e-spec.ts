/**
 * The example app's HTTP hardening, over real HTTP: standard security headers (helmet) and a
 * Content-Security-Policy whose nonce is the one on the page's inline script, no X-Powered-By,
 * server time-outs that cut a request sent a byte at a time, and an embedded sandbox that stays on
 * 127.0.0.1 when the app is told HOST=0.0.0.0.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HubtelSandbox } from 'nestjs-hubtel/sandbox';
import { exampleConfigFromEnv } from '../src/app.config.js';
import { startExampleApp } from '../src/bootstrap.js';
import { placeOrder, startExampleInProcess, type InProcessExample } from './support/example-app.harness.js';

describe('example app: security headers', () => {
  let shop: InProcessExample;

  beforeAll(async () => {
    shop = await startExampleInProcess();
  });
  afterAll(async () => {
    await shop?.close();
  });

  it('sends helmet headers and a CSP with the nonce of the inline script; no X-Powered-By', async () => {
    const { orderId } = await placeOrder(shop.url, { product: 'kente-mug', phone: '0244123456' });
    let scripts = 0;
    for (const path of ['/', '/simulator', `/orders/${orderId}`, '/api/nowhere']) {
      const res = await fetch(`${shop.url}${path}`);
      const html = await res.text();
      const h = res.headers;
      expect({ path, poweredBy: h.get('x-powered-by') }).toEqual({ path, poweredBy: null });
      expect(h.get('x-content-type-options')).toBe('nosniff');
      expect(h.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(h.get('referrer-policy')).toBe('no-referrer');
      expect(h.get('cross-origin-opener-policy')).toBe('same-origin');
      const csp = h.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'self'");
      expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]{20,}'/);
      // The inline script (the order page's poller) carries this response's nonce, and only it.
      const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
      for (const [, attributes] of html.matchAll(/<script([^>]*)>/g)) {
        expect(attributes).toBe(` nonce="${nonce}"`);
        scripts++;
      }
    }
    expect(scripts).toBeGreaterThan(0);
    // A nonce is never reused.
    const again = await fetch(`${shop.url}/orders/${orderId}`);
    const nonces = [again, await fetch(`${shop.url}/orders/${orderId}`)].map(
      (res) => /'nonce-([^']+)'/.exec(res.headers.get('content-security-policy')!)![1],
    );
    expect(nonces[0]).not.toBe(nonces[1]);
  });
});

describe('example app: server time-outs', () => {
  let sandbox: HubtelSandbox;

  beforeAll(async () => {
    sandbox = await HubtelSandbox.start();
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /**
   * Opens a socket, sends `head`, then one byte of `drip` at a time until the server closes the
   * connection; resolves with what the server answered.
   */
  function trickle(port: number, head: string, drip: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      let sent = 0;
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (answer += chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        resolve(answer);
      });
      socket.on('connect', () => {
        socket.write(head);
        timer = setInterval(() => {
          if (socket.writable) socket.write(drip[sent++ % drip.length]!);
        }, 20);
      });
      socket.on('timeout', () => reject(new Error('socket idle')));
    });
  }

  it('closes a connection whose body (or headers) arrive a byte at a time, well before 300 s', async () => {
    const example = await startExampleApp(
      {
        ...exampleConfigFromEnv({ PORT: '0' }),
        platform: { kind: 'sandbox', instance: sandbox },
        timeouts: { headersMs: 300, requestMs: 600 },
      },
      { logger: false },
    );
    try {
      const { port } = example.app.getHttpServer().address() as AddressInfo;
      const body = trickle(
        port,
        'POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
        '{"product":"kente-mug"}',
      );
      const headers = trickle(port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: y\r\n');
      // Each resolves only when the server closed the connection (a hang fails on Jest's time-out).
      expect(await body).toMatch(/^HTTP\/1\.1 408 /);
      expect(await headers).toMatch(/^HTTP\/1\.1 408 /);
      // An ordinary request is untouched.
      expect((await fetch(`${example.url}/`)).status).toBe(200);
    } finally {
      await example.close();
    }
  });

  it('refuses time-outs that make no sense', async () => {
    for (const timeouts of [{ headersMs: 0 }, { headersMs: 5_000, requestMs: 1_000 }]) {
      await expect(
        startExampleApp(
          {
            ...exampleConfigFromEnv({ PORT: '0' }),
            platform: { kind: 'sandbox', instance: sandbox },
            timeouts,
          },
          { logger: false },
        ),
      ).rejects.toMatchObject({ code: 'HUBTEL_CONFIG_INVALID' });
    }
  });
});

describe('example app: the embedded sandbox stays on loopback', () => {
  it('binds 127.0.0.1 when HOST=0.0.0.0; SANDBOX_HOST alone moves it', async () => {
    expect(exampleConfigFromEnv({ HOST: '0.0.0.0' })).toMatchObject({
      host: '0.0.0.0',
      platform: { kind: 'sandbox', host: '127.0.0.1' },
    });
    expect(exampleConfigFromEnv({ HOST: '0.0.0.0', SANDBOX_HOST: '0.0.0.0' }).platform).toMatchObject({
      host: '0.0.0.0',
    });
    // Started for real from HOST=0.0.0.0 (the shop itself kept on 127.0.0.1 here, as tests must).
    const config = exampleConfigFromEnv({ PORT: '0', HOST: '0.0.0.0' });
    const example = await startExampleApp({ ...config, host: '127.0.0.1' }, { logger: false });
    try {
      const address = example.sandbox!.server!.address() as AddressInfo;
      expect(address.address).toBe('127.0.0.1');
    } finally {
      await example.close();
    }
  });
});
