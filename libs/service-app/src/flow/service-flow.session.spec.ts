import { Global, Logger, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import {
  HUBTEL_JOB_RUNNER,
  InProcessJobRunner,
  MemoryStore,
  type HubtelStore,
  type StoreEntry,
  type StoreWriteOptions,
} from 'nestjs-hubtel';
import { SERVICE_APP_DEFAULT_MESSAGES as M } from '../service-app.constants.js';
import { ServiceAppModule } from '../service-app.module.js';
import type { ServiceAppModuleOptions } from '../service-app.options.js';
import { ServiceFlowBuilder } from './service-flow.builder.js';
import { ServiceFlowService } from './service-flow.service.js';
import { sessionKey } from './service-flow.session.js';
import type { ServiceFlowDefinition } from '../service-flow.context.js';

/*
 * How sessions are kept: compact records (100,000 live sessions must fit in well under 100 MB),
 * screens and options shared between sessions, a JSON store round-trip, and records this version
 * cannot read answered as expired.
 */

const MOBILE = '233241234567';
let counter = 0;

function request(type: string, message: string, sessionId: string) {
  return {
    Type: type,
    Message: message,
    ServiceCode: 'code',
    // An app channel: these tests are about the app's answers (USSD ones: service-flow.ussd.spec.ts).
    Operator: 'Hubtel-Android',
    Mobile: MOBILE,
    SessionId: sessionId,
  };
}

/** A store that keeps JSON text, like Redis: nothing survives a write but what JSON carries. */
class JsonStore implements HubtelStore {
  readonly inner = new MemoryStore({ sweepIntervalMs: 0 });
  async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
    const entry = await this.inner.get<string>(key);
    return entry && { value: JSON.parse(entry.value) as T, version: entry.version };
  }
  setIfAbsent<T>(key: string, value: T, options?: StoreWriteOptions): Promise<boolean> {
    return this.inner.setIfAbsent(key, JSON.stringify(value), options);
  }
  async compareAndSet<T>(key: string, version: number, value: T, options?: StoreWriteOptions) {
    const entry = await this.inner.compareAndSet(key, version, JSON.stringify(value), options);
    return entry && { value, version: entry.version };
  }
  async set<T>(key: string, value: T, options?: StoreWriteOptions): Promise<StoreEntry<T>> {
    const entry = await this.inner.set(key, JSON.stringify(value), options);
    return { value, version: entry.version };
  }
  delete(key: string): Promise<boolean> {
    return this.inner.delete(key);
  }
  async *scan<T>(prefix: string): AsyncIterable<[string, StoreEntry<T>]> {
    for await (const [key, entry] of this.inner.scan<string>(prefix))
      yield [key, { value: JSON.parse(entry.value) as T, version: entry.version }];
  }
}

/**
 * A job runner for a store that is not a MemoryStore (the module refuses one without it). These
 * tests are about sessions, in one process: this process's own runner will do.
 */
@Global()
@Module({
  providers: [{ provide: HUBTEL_JOB_RUNNER, useFactory: () => new InProcessJobRunner() }],
  exports: [HUBTEL_JOB_RUNNER],
})
class InProcessRunnerModule {}

async function setup(flows: ServiceFlowDefinition[], options: ServiceAppModuleOptions = {}) {
  const store = (options.store as HubtelStore | undefined) ?? new MemoryStore({ sweepIntervalMs: 0 });
  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      ...(store.local ? [] : [InProcessRunnerModule]),
      ServiceAppModule.forRoot({ ...options, store, flows, routes: { disabled: true } }),
    ],
  })
  class TestModule {}
  const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
  const errors: string[] = [];
  const logger = {
    log() {},
    warn() {},
    debug() {},
    verbose() {},
    error: (m: unknown) => void errors.push(String(m)),
  };
  const app = await moduleRef.createNestApplication({ logger }).init();
  Logger.overrideLogger(logger);
  const service = app.get(ServiceFlowService);
  const session = (id = `S${++counter}`) => ({
    id,
    start: () => service.handle(request('initiation', '', id)),
    answer: (message: string) => service.handle(request('Response', message, id)),
    /** What the store holds for the session, as written. */
    stored: async () => (await store.get<Record<string, unknown>>(sessionKey(id)))?.value,
  });
  return { app, errors, service, store, session };
}

const bundles = () =>
  new ServiceFlowBuilder('bundles')
    .step('menu', (ctx) =>
      ctx.select({
        message: 'Choose',
        options: [
          { Display: '1 GB', Value: '1gb', Amount: 5 },
          { Display: '5 GB', Value: 5, Amount: 20 },
        ],
      }),
    )
    .step('phone', (ctx) =>
      ctx.input({ message: `Number for ${ctx.selected('menu')?.Display}?`, fieldType: 'phone', name: 'to' }),
    )
    .step('confirm', (ctx) =>
      ctx.select({
        message: `Send ${String(ctx.data.menu)} to ${String(ctx.data.to)}?`,
        options: [
          { Display: 'Yes', Value: 'y' },
          { Display: 'No', Value: 'n' },
        ],
      }),
    )
    .step('done', (ctx) => ctx.end(`${String(ctx.data.menu)} ${String(ctx.data.to)} ${String(ctx.answer)}`))
    .build();

describe('ServiceFlowService sessions', () => {
  it('stores a compact record: no SessionId, startedAt in epoch ms, no history or selections when "back" is off', async () => {
    const t = await setup([bundles()], { backInput: false });
    const s = t.session();
    await s.start();
    await s.answer('1gb');
    await s.answer('0241234567');
    const value = (await s.stored())!;
    const present = Object.keys(value).filter((key) => value[key] !== undefined);
    expect(present.sort()).toEqual(
      ['data', 'flow', 'mobile', 'operator', 'screen', 'selections', 'serviceCode', 'startedAt'].sort(),
    );
    expect(value.history).toBeUndefined();
    expect(typeof value.startedAt).toBe('number');
    expect(JSON.stringify(value)).not.toContain(s.id);
    // The screens answered before are not kept: only the prompt awaiting an answer.
    expect(JSON.stringify(value)).not.toContain('Choose');
    expect(JSON.stringify(value)).not.toContain('Number for');

    // getSession() still shows the whole session.
    const session = await t.service.getSession(s.id);
    expect(session).toMatchObject({
      sessionId: s.id,
      flow: 'bundles',
      operator: 'Hubtel-Android',
      history: [],
      data: { menu: '1gb', to: '233241234567' },
      selections: { menu: { Display: '1 GB', Value: '1gb', Amount: 5 } },
      screen: { step: 'confirm', message: 'Send 1gb to 233241234567?' },
    });
    expect(new Date(session!.startedAt).toISOString()).toBe(session!.startedAt);
    await t.app.close();
  });

  it('has no selections object until an option is chosen', async () => {
    const t = await setup([bundles()], { backInput: false });
    const s = t.session();
    await s.start();
    expect((await s.stored())!.selections).toBeUndefined();
    expect((await t.service.getSession(s.id))!.selections).toEqual({});
    await t.app.close();
  });

  it('shares equal screens and options between sessions instead of copying them into each', async () => {
    const t = await setup([bundles()]);
    const a = t.session();
    const b = t.session();
    await a.start();
    await b.start();
    const first = (await a.stored())!.screen as { options: unknown[] };
    const second = (await b.stored())!.screen as { options: unknown[] };
    expect(second).toBe(first); // a fixed menu: one screen for every session
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.options)).toBe(true);
    expect(Object.isFrozen(first.options[0])).toBe(true);

    // A message naming the user's entries makes its own screen, with the same frozen options.
    await a.answer('1GB'); // letter case ignored
    await b.answer('5');
    await a.answer('0241234567');
    await b.answer('0201234567');
    const confirmA = (await a.stored())!.screen as { message: string; options: unknown[] };
    const confirmB = (await b.stored())!.screen as { message: string; options: unknown[] };
    expect(confirmA.message).toBe('Send 1gb to 233241234567?');
    expect(confirmB.message).toBe('Send 5 to 233201234567?');
    expect(confirmB).not.toBe(confirmA);
    expect(confirmB.options).toBe(confirmA.options);

    // "back" keeps the earlier screens themselves, not copies; the chosen option is the shared one.
    const stored = (await a.stored())!;
    const history = stored.history as unknown[];
    expect(history).toHaveLength(2);
    expect(history[0]).toBe(first);
    expect((stored.selections as Record<string, unknown>).menu).toBe(first.options[0]);
    expect(((await b.stored())!.history as unknown[])[0]).toBe(first);

    // Going back shows the earlier prompt again and forgets its answer.
    expect((await a.answer('0')).Message).toBe('Number for 1 GB?');
    expect((await a.answer('0')).Message).toBe('Choose');
    const back = (await a.stored())!;
    expect(back.history).toBeUndefined();
    expect(back.data).toEqual({});
    expect(back.selections).toBeUndefined();
    expect((await a.answer('5')).Message).toBe('Number for 5 GB?');
    await t.app.close();
  });

  it('builds a new screen when a step answers a different prompt (and still checks it)', async () => {
    let variant = 0;
    const flow = new ServiceFlowBuilder('changing')
      .step('pick', (ctx) => {
        switch (variant) {
          case 0:
            return ctx.select({ message: 'Pick', options: [{ Display: 'A', Value: 'a' }] });
          case 1: // one more option
            return ctx.select({
              message: 'Pick',
              options: [
                { Display: 'A', Value: 'a' },
                { Display: 'B', Value: 'b' },
              ],
            });
          case 2: // same options, another label
            return ctx.select({
              message: 'Pick',
              label: 'Menu',
              options: [
                { Display: 'A', Value: 'a' },
                { Display: 'B', Value: 'b' },
              ],
            });
          default: // same options, an invalid label: refused, not taken from the shared screen
            return ctx.select({
              message: 'Pick',
              label: null as unknown as string,
              options: [
                { Display: 'A', Value: 'a' },
                { Display: 'B', Value: 'b' },
              ],
            });
        }
      })
      .step('amount', (ctx) =>
        ctx.input({
          message: 'Amount?',
          fieldType: 'number',
          validation: variant === 0 ? { max: 10 } : { max: 100 },
        }),
      )
      .step('done', (ctx) => ctx.end(`${String(ctx.data.pick)} ${String(ctx.data.amount)}`))
      .build();
    const t = await setup([flow]);

    const first = t.session();
    expect((await first.start()).Data).toHaveLength(1);
    expect((await first.answer('b')).Message).toBe(`${M.select}\nPick`);
    await first.answer('a');
    expect((await first.answer('50')).Message).toBe('Please enter 10 or less.\nAmount?');

    variant = 1;
    const second = t.session();
    expect((await second.start()).Data).toHaveLength(2);
    await second.answer('b');
    expect((await second.answer('50')).Message).toBe('b 50');

    variant = 2;
    const third = t.session();
    expect(await third.start()).toMatchObject({ Label: 'Menu', Message: 'Pick' });

    variant = 3;
    const fourth = t.session();
    expect(await fourth.start()).toMatchObject({ Type: 'release', Message: M.error });
    expect(t.errors.join('\n')).toContain('label must be a string');
    await t.app.close();
  });

  it('works the same through a JSON store (a Redis-like store keeps text)', async () => {
    const run = async (store?: HubtelStore) => {
      const t = await setup([bundles()], { store });
      const s = t.session('J1');
      const answers = [await s.start()];
      for (const entry of ['x', '5', '0', '1gb', '024 123 4567', 'y']) answers.push(await s.answer(entry));
      const session = t.session('J2');
      await session.start();
      await session.answer('1gb');
      const view = await t.service.getSession(session.id);
      await t.app.close();
      return { answers, view, errors: t.errors };
    };
    const memory = await run();
    const json = await run(new JsonStore());
    expect(json.errors).toEqual([]);
    expect(json.answers).toEqual(memory.answers);
    expect(json.answers.at(-1)).toMatchObject({ Type: 'release', Message: '1gb 233241234567 y' });
    expect(json.view).toMatchObject({
      flow: 'bundles',
      screen: { step: 'phone', message: 'Number for 1 GB?' },
      history: [{ step: 'menu', kind: 'select' }],
      selections: { menu: { Display: '1 GB', Value: '1gb', Amount: 5 } },
    });
    expect(json.view).toEqual({ ...memory.view, startedAt: json.view!.startedAt });
  });

  it('answers a session it cannot read as expired, and forgets it', async () => {
    const t = await setup([bundles()]);
    const unreadable: unknown[] = [
      'text',
      null,
      [1, 2],
      { hello: 'world' },
      { flow: 'bundles', serviceCode: 'code', mobile: MOBILE, screen: null, data: {}, startedAt: 1 },
      {
        flow: 'bundles',
        serviceCode: 'code',
        mobile: MOBILE,
        screen: { step: 'menu', kind: 'select', message: 'x', label: 'x', fieldType: 'text', field: 'menu' },
        data: {},
        startedAt: 1,
      },
    ];
    for (const value of unreadable) {
      const s = t.session();
      await t.store.set(sessionKey(s.id), value, { ttlMs: 60_000 });
      expect(await t.service.getSession(s.id)).toBeUndefined();
      expect(await s.answer('1')).toMatchObject({
        Type: 'release',
        Message: M.sessionExpired,
        SessionId: s.id,
      });
      expect(await t.store.get(sessionKey(s.id))).toBeUndefined();
    }
    expect(t.errors).toEqual([]);

    // A session written by the earlier format (SessionId inside, ISO startedAt, empty history) goes on.
    const old = t.session();
    await t.store.set(
      sessionKey(old.id),
      {
        sessionId: old.id,
        flow: 'bundles',
        serviceCode: 'code',
        mobile: MOBILE,
        operator: 'Hubtel-Android',
        screen: {
          step: 'menu',
          kind: 'select',
          message: 'Choose',
          label: 'Choose',
          fieldType: 'text',
          field: 'menu',
          next: 'phone',
          options: [{ Display: '1 GB', Value: '1gb', Amount: 5 }],
        },
        history: [],
        data: {},
        selections: {},
        startedAt: '2024-01-02T03:04:05.000Z',
      },
      { ttlMs: 60_000 },
    );
    expect((await t.service.getSession(old.id))?.startedAt).toBe('2024-01-02T03:04:05.000Z');
    expect((await old.answer('1gb')).Message).toBe('Number for 1 GB?');
    await t.app.close();
  });
});
