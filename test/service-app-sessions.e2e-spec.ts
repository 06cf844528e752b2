import { randomUUID } from 'node:crypto';
import { MemoryStore } from 'nestjs-hubtel';
import { SERVICE_APP_DEFAULT_MESSAGES } from '../libs/service-app/src/service-app.constants.js';
import {
  flowRequest,
  postJson as post,
  startMerchant,
  type Adapter,
  type Merchant,
} from './support/service-app.harness.js';

/*
 * "Unauthenticated traffic cannot pin unbounded memory": a session start nobody answers lives
 * `sessionStartTtlMs` (not the sliding `sessionTtlMs`), and at most `maxPendingSessions` of them
 * are kept per instance. Over real HTTP, on Express and Fastify.
 */

const M = SERVICE_APP_DEFAULT_MESSAGES;
const START_TTL_MS = 30_000;
const SESSION_TTL_MS = 600_000;
const CAP = 3;

describe.each<Adapter>(['express', 'fastify'])('abandoned session starts over %s', (adapter) => {
  let merchant: Merchant;
  let skew = 0;
  const store = new MemoryStore({ sweepIntervalMs: 0, now: () => Date.now() + skew });
  const flowUrl = () => `${merchant.url}/api/service-flow`;
  const start = (id: string) => post(flowUrl(), { ...flowRequest('initiation', id), Sequence: '1' });
  const answer = (id: string, message: string) =>
    post(flowUrl(), flowRequest('Response', id, { Message: message }));

  beforeAll(async () => {
    merchant = await startMerchant(adapter, {
      sessionTtlMs: SESSION_TTL_MS,
      sessionStartTtlMs: START_TTL_MS,
      maxPendingSessions: CAP,
      store,
    });
  });

  afterEach(() => {
    skew = 0;
  });

  afterAll(async () => {
    await merchant?.close();
    store.close();
  });

  it(`keeps at most maxPendingSessions (${CAP}) unanswered starts: the next is answered "busy" and not stored, until one is answered`, async () => {
    const ids = Array.from({ length: CAP + 2 }, () => randomUUID());
    for (const id of ids.slice(0, CAP)) expect((await start(id)).body).toMatchObject({ DataType: 'input' });
    for (const id of ids.slice(CAP)) {
      const refused = await start(id);
      expect(refused.status).toBe(200);
      expect(refused.body).toMatchObject({ SessionId: id, Type: 'release', Message: M.busy });
      expect(await merchant.flows.getSession(id)).toBeUndefined();
    }
    // A start that is answered no longer counts: room for one more.
    expect((await answer(ids[0]!, '0241234567')).body).toMatchObject({ DataType: 'select' });
    expect((await start(ids[CAP]!)).body).toMatchObject({ DataType: 'input' });
    expect((await start(ids[CAP + 1]!)).body).toMatchObject({ Type: 'release', Message: M.busy });
    // Said in the log, once.
    const said = merchant.logger.lines.filter((l) =>
      l.includes('sessions are waiting for their first answer'),
    );
    expect(said).toHaveLength(1);
    // A released start frees its place too.
    await post(flowUrl(), flowRequest('Release', ids[1]!));
    expect((await start(ids[CAP + 1]!)).body).toMatchObject({ DataType: 'input' });
    for (const id of ids.slice(2)) await post(flowUrl(), flowRequest('Release', id));
  });

  it('forgets a start with no answer after sessionStartTtlMs; an answered session keeps the sliding sessionTtlMs', async () => {
    const abandoned = randomUUID();
    const answered = randomUUID();
    expect((await start(abandoned)).body).toMatchObject({ Type: 'Response', DataType: 'input' });
    expect((await start(answered)).body).toMatchObject({ Type: 'Response', DataType: 'input' });
    expect((await answer(answered, '0241234567')).body).toMatchObject({ DataType: 'select' });

    skew = START_TTL_MS + 1_000; // past the start's life, well within sessionTtlMs
    expect(await merchant.flows.getSession(abandoned)).toBeUndefined();
    expect((await answer(abandoned, '0241234567')).body).toMatchObject({
      Type: 'release',
      Message: M.sessionExpired,
    });
    expect(await merchant.flows.getSession(answered)).toMatchObject({ screen: { step: 'bundle' } });
    expect((await answer(answered, '1gb')).body).toMatchObject({ Type: 'AddToCart' });
  });
});
