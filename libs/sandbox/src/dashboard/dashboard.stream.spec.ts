import { HubtelSandbox } from '../sandbox.server.js';
import { DASHBOARD_SNAPSHOT_LIMIT, SANDBOX_DASHBOARD_PATH } from './dashboard.stream.js';

const SMS_AUTH = `Basic ${Buffer.from('sandbox-sms:sandbox-sms-secret').toString('base64')}`;

interface SseEvent {
  event: string;
  data: {
    stats?: Record<string, number>;
    records: Array<{ kind: string; id: string; record: Record<string, unknown> }>;
  };
}

/** A reader of the dashboard's event stream. */
async function openStream(url: string) {
  const controller = new AbortController();
  const res = await fetch(`${url}${SANDBOX_DASHBOARD_PATH}/events`, { signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  let ended = false;
  const pump = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
      }
    } catch {
      // aborted
    }
    ended = true;
  })();
  return {
    res,
    events,
    get ended() {
      return ended;
    },
    async until(test: () => boolean, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!test()) {
        if (Date.now() > deadline)
          throw new Error(`stream: condition not met; events: ${events.map((e) => e.event).join(',')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      controller.abort();
      await pump;
    },
  };
}

function sendSms(url: string, to: string, content: string) {
  return fetch(`${url}/v1/messages/send`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: SMS_AUTH },
    body: JSON.stringify({ From: 'Shop', To: to, Content: content }),
  });
}

describe('sandbox dashboard', () => {
  let sandbox: HubtelSandbox;
  beforeEach(async () => {
    sandbox = await HubtelSandbox.start({ recordLimit: DASHBOARD_SNAPSHOT_LIMIT + 50 });
  });
  afterEach(() => sandbox.stop());

  it('serves one self-contained page under a nonce CSP, with the stable test ids', async () => {
    for (const path of [SANDBOX_DASHBOARD_PATH, `${SANDBOX_DASHBOARD_PATH}/`]) {
      const res = await fetch(`${sandbox.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy')!;
      const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("connect-src 'self'");
      const html = await res.text();
      expect(html).toContain(`<script nonce="${nonce}">`);
      expect(html).toContain(`<style nonce="${nonce}">`);
      // No external assets: nothing loaded from another origin.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
      for (const id of [
        'dashboard',
        'connection-status',
        'notice',
        'section-deliveries',
        'section-invoices',
        'section-messages',
        'section-sessions',
        'section-fulfillment-callbacks',
        'stat-deliveries',
      ]) {
        expect(html).toContain(`data-testid="${id}"`);
      }
    }
    // A new nonce per page.
    const a = (await fetch(`${sandbox.url}${SANDBOX_DASHBOARD_PATH}`)).headers.get('content-security-policy');
    const b = (await fetch(`${sandbox.url}${SANDBOX_DASHBOARD_PATH}`)).headers.get('content-security-policy');
    expect(a).not.toBe(b);
  });

  it('streams a snapshot of the newest records first, then coalesced updates', async () => {
    for (let i = 0; i < DASHBOARD_SNAPSHOT_LIMIT + 10; i++)
      await sendSms(sandbox.url, '0241234567', `before ${i}`);
    const stream = await openStream(sandbox.url);
    try {
      expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      await stream.until(() => stream.events.length >= 1);
      const snapshot = stream.events[0]!;
      expect(snapshot.event).toBe('snapshot');
      const messages = snapshot.data.records.filter((r) => r.kind === 'message');
      expect(messages).toHaveLength(DASHBOARD_SNAPSHOT_LIMIT);
      expect(messages.at(-1)!.record.content).toBe(`before ${DASHBOARD_SNAPSHOT_LIMIT + 9}`);
      expect(snapshot.data.stats).toMatchObject({ messages: DASHBOARD_SNAPSHOT_LIMIT + 10 });

      // A burst arrives in few messages, every record in them, each with its latest state.
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => sendSms(sandbox.url, '0201234567', `burst ${i}`)),
      );
      const seen = () =>
        new Set(
          stream.events
            .filter((e) => e.event === 'update')
            .flatMap((e) => e.data.records.map((r) => r.record.content)),
        );
      await stream.until(() => seen().size === 40);
      const updates = stream.events.filter((e) => e.event === 'update');
      expect(updates.length).toBeLessThan(40);
      expect(updates.at(-1)!.data.stats).toMatchObject({ messages: DASHBOARD_SNAPSHOT_LIMIT + 50 });
    } finally {
      await stream.close();
    }
  });

  it('tells every open page about a reset, and listens to the sandbox only while a page is open', async () => {
    expect(sandbox.listenerCount('delivery')).toBe(0);
    const one = await openStream(sandbox.url);
    const two = await openStream(sandbox.url);
    await one.until(() => one.events.length >= 1);
    await two.until(() => two.events.length >= 1);
    expect(sandbox.listenerCount('delivery')).toBe(1); // one shared listener, not one per page
    await sendSms(sandbox.url, '0241234567', 'hello');
    sandbox.reset();
    await one.until(() => one.events.some((e) => e.event === 'reset'));
    await two.until(() => two.events.some((e) => e.event === 'reset'));
    expect(two.events.find((e) => e.event === 'reset')!.data.records).toEqual([]);
    await one.close();
    await two.close();
    const deadline = Date.now() + 5_000;
    while (sandbox.listenerCount('delivery') > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(sandbox.listenerCount('delivery')).toBe(0);
    expect(sandbox.listenerCount('message')).toBe(0);
    expect(sandbox.listenerCount('reset')).toBe(0);
  });

  it('ends the open streams when the sandbox stops', async () => {
    const stream = await openStream(sandbox.url);
    await stream.until(() => stream.events.length >= 1);
    await sandbox.stop();
    await stream.until(() => stream.ended);
  });

  it('answers HEAD on the stream without holding it open', async () => {
    const res = await fetch(`${sandbox.url}${SANDBOX_DASHBOARD_PATH}/events`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  });
});
