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

  it(`keeps at most maxPendingSessions (${CAP}) unanswered starts: the oldest gives way to a new one, an answered one stays`, async () => {
    const ids = Array.from({ length: CAP + 2 }, () => randomUUID());
    for (const id of ids.slice(0, CAP)) expect((await start(id)).body).toMatchObject({ DataType: 'input' });
    // An answered start no longer counts, and is never pushed out.
    expect((await answer(ids[0]!, '0241234567')).body).toMatchObject({ DataType: 'select' });
    for (const id of ids.slice(CAP)) expect((await start(id)).body).toMatchObject({ DataType: 'input' });
    // CAP + 1 starts, CAP + 2 sessions: the oldest unanswered one (ids[1]) gave way.
    expect(await merchant.flows.getSession(ids[0]!)).toMatchObject({ screen: { step: 'bundle' } });
    expect(await merchant.flows.getSession(ids[1]!)).toBeUndefined();
    for (const id of ids.slice(2)) expect(await merchant.flows.getSession(id)).toBeDefined();
    expect((await answer(ids[1]!, '0241234567')).body).toMatchObject({
      Type: 'release',
      Message: M.sessionExpired,
    });
    // Said in the log, once.
    const said = merchant.logger.lines.filter((l) =>
      l.includes('sessions are waiting for their first answer'),
    );
    expect(said).toHaveLength(1);
    for (const id of ids) await post(flowUrl(), flowRequest('Release', id));
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
