import { Logger, Module } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { MemoryStore, type HubtelStore } from 'nestjs-hubtel';
import { SERVICE_APP_DEFAULT_MESSAGES as M } from '../service-app.constants.js';
import { ServiceAppModule } from '../service-app.module.js';
import type { ServiceAppModuleOptions } from '../service-app.options.js';
import { ServiceFlowBuilder } from './service-flow.builder.js';
import { ServiceFlowService } from './service-flow.service.js';
import type { ServiceFlowDefinition } from '../service-flow.context.js';

const MOBILE = '233241234567';
let counter = 0;

function request(type: string, message = '', sessionId = 'S', serviceCode = 'code') {
  return {
    Type: type,
    Message: message,
    ServiceCode: serviceCode,
    Operator: 'mtn',
    ClientState: '',
    Mobile: MOBILE,
    SessionId: sessionId,
  };
}

async function setup(flows: ServiceFlowDefinition[], options: ServiceAppModuleOptions = {}) {
  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      ServiceAppModule.forRoot({ stepBudgetMs: 200, ...options, flows, routes: { disabled: true } }),
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
  const sessionId = `S${++counter}`;
  return {
    app,
    errors,
    service,
    sessionId,
    start: (code = 'code') => service.handle(request('initiation', '', sessionId, code)),
    answer: (message: string) => service.handle(request('Response', message, sessionId)),
  };
}

const two = () =>
  new ServiceFlowBuilder('two')
    .step('a', (ctx) => ctx.input({ message: 'A?' }))
    .step('b', (ctx) => ctx.input({ message: `B after ${String(ctx.answer)}?`, next: 'c' }))
    .step('c', (ctx) => ctx.end(`done ${String(ctx.data.a)} ${String(ctx.data.b)}`))
    .build();

describe('ServiceFlowService', () => {
  it('lets only one of two concurrent answers for a session advance it (compare-and-set)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const flow = new ServiceFlowBuilder('race')
      .step('a', (ctx) => ctx.input({ message: 'A?' }))
      .step('b', async (ctx) => {
        await gate;
        return ctx.input({ message: `B after ${String(ctx.answer)}?`, next: 'c' });
      })
      .step('c', (ctx) => ctx.end('done'))
      .build();
    const t = await setup([flow]);
    await t.start();
    const first = t.answer('one');
    const second = t.answer('two');
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    const answers = await Promise.all([first, second]);
    // Both calls see the same prompt: the winner's.
    expect(answers[0].Message).toBe(answers[1].Message);
    expect(['B after one?', 'B after two?']).toContain(answers[0].Message);
    const session = await t.service.getSession(t.sessionId);
    expect(session?.history).toHaveLength(1);
    expect(session?.screen.step).toBe('b');
    await t.app.close();
  });

  it('ends the session politely when a step throws, returns garbage, loops or misuses reject / next', async () => {
    const broken: Array<[string, ServiceFlowDefinition, string[]]> = [
      [
        'throws',
        new ServiceFlowBuilder('throws')
          .step('a', () => {
            throw new Error('db down for 233241234567');
          })
          .build(),
        [],
      ],
      ['garbage', new ServiceFlowBuilder('garbage').step('a', () => 'hello' as never).build(), []],
      [
        'loop',
        new ServiceFlowBuilder('loop')
          .step('a', (ctx) => ctx.goTo('b'))
          .step('b', (ctx) => ctx.goTo('a'))
          .build(),
        [],
      ],
      ['reject at start', new ServiceFlowBuilder('reject').step('a', (ctx) => ctx.reject('no')).build(), []],
      [
        'no next',
        new ServiceFlowBuilder('nonext').step('a', (ctx) => ctx.input({ message: 'A?' })).build(),
        [],
      ],
      [
        'unknown next',
        new ServiceFlowBuilder('badnext')
          .step('a', (ctx) => ctx.input({ message: 'A?', next: 'zzz' }))
          .build(),
        [],
      ],
      ['goTo nowhere', new ServiceFlowBuilder('goto').step('a', (ctx) => ctx.goTo('zzz')).build(), []],
      [
        'duplicate option values',
        new ServiceFlowBuilder('dupes')
          .step('a', (ctx) =>
            ctx.select({
              message: 'x',
              options: [
                { Display: 'a', Value: '1' },
                { Display: 'b', Value: '1' },
              ],
              next: 'a',
            }),
          )
          .build(),
        [],
      ],
      [
        'free cart',
        new ServiceFlowBuilder('free')
          .step('a', (ctx) => ctx.addToCart({ message: 'x', item: { ItemName: 'x', Qty: 1, Price: 0 } }))
          .build(),
        [],
      ],
    ];
    for (const [what, flow] of broken) {
      const t = await setup([flow]);
      const response = await t.start();
      expect({ what, Type: response.Type, Message: response.Message }).toEqual({
        what,
        Type: 'release',
        Message: M.error,
      });
      expect(await t.service.getSession(t.sessionId)).toBeUndefined();
      expect(t.errors.length).toBeGreaterThan(0);
      // Errors are logged with phone numbers masked.
      expect(t.errors.join('\n')).not.toContain(MOBILE);
      await t.app.close();
    }
  });

  it('answers "busy" (and keeps nothing) when the start step passes the budget', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const flow = new ServiceFlowBuilder('slow')
      .step('a', async (ctx) => {
        await gate;
        return ctx.input({ message: 'A?', next: 'a' });
      })
      .build();
    const t = await setup([flow], { stepBudgetMs: 20 });
    expect(await t.start()).toMatchObject({ Type: 'release', Message: M.busy });
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await t.service.getSession(t.sessionId)).toBeUndefined();
    await t.app.close();
  });

  it('runs none of the steps a late step goes to: the user was told "try again"', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const flow = new ServiceFlowBuilder('late')
      .step('a', (ctx) => ctx.input({ message: 'A?' }))
      .step('b', async (ctx) => {
        await gate;
        return ctx.goTo('c');
      })
      .step('c', (ctx) => (ran.push('c'), ctx.end('charged')))
      .build();
    const t = await setup([flow], { stepBudgetMs: 20 });
    await t.start();
    expect(await t.answer('x')).toMatchObject({ Type: 'Response', Message: `${M.busy}\nA?` });
    release();
    // The late step and anything it led to would run in the microtasks before this.
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toEqual([]);
    expect(await t.service.getSession(t.sessionId)).toMatchObject({ screen: { step: 'a' } });
    await t.app.close();
  });

  it('answers a well-formed error release when the store fails, instead of throwing', async () => {
    const store = new MemoryStore({ sweepIntervalMs: 0 });
    const failing: HubtelStore = Object.assign(Object.create(store) as HubtelStore, {
      get: async () => {
        throw new Error('redis unavailable');
      },
      delete: async () => {
        throw new Error('redis unavailable');
      },
    });
    const t = await setup([two()], { store: failing });
    expect(await t.answer('x')).toMatchObject({ Type: 'release', Message: M.error, SessionId: t.sessionId });
    await t.app.close();
  });

  it('says the service is unavailable when no flow serves the code and there is no default', async () => {
    const t = await setup([
      new ServiceFlowBuilder('only')
        .forServiceCode('711')
        .step('a', (ctx) => ctx.end('hi'))
        .build(),
    ]);
    expect(await t.start('999')).toMatchObject({ Type: 'release', Message: M.unavailable });
    expect(await t.start('711')).toMatchObject({ Type: 'release', Message: 'hi' });
    await t.app.close();
  });

  it('on USSD the back input means back even when an option has that Value (the numbers shown skip it); a custom back input', async () => {
    const menu = new ServiceFlowBuilder('menu')
      .step('a', (ctx) => ctx.input({ message: 'Name?' }))
      .step('b', (ctx) =>
        ctx.select({
          message: 'Pick',
          options: [
            { Display: 'Exit', Value: '0' },
            { Display: 'More', Value: '1' },
          ],
        }),
      )
      .step('c', (ctx) => ctx.end(`picked ${String(ctx.answer)} (${ctx.selected()?.Display})`))
      .build();
    const t = await setup([menu], { backInput: ['#', '*'] });
    await t.start();
    await t.answer('Ama');
    expect((await t.answer('#')).Message).toBe('Name?');
    await t.answer('Ama');
    expect((await t.answer('0')).Message).toBe('picked 0 (Exit)');
    await t.app.close();

    const defaults = await setup([menu]);
    await defaults.start();
    await defaults.answer('Kofi');
    // The phone shows "1. Exit" and "2. More": "0" was never offered as an option there.
    expect((await defaults.answer('0')).Message).toBe('Name?');
    await defaults.app.close();

    const off = await setup([two()], { backInput: false });
    await off.start();
    expect((await off.answer('0')).Message).toBe('B after 0?');
    await off.app.close();
  });

  it("applies an input prompt's validation rules, with its own message when given", async () => {
    const flow = new ServiceFlowBuilder('rules')
      .step('code', (ctx) =>
        ctx.input({ message: 'Code?', validation: { minLength: 3, maxLength: 5, pattern: /^[A-Z]+$/g } }),
      )
      .step('note', (ctx) =>
        ctx.input({ message: 'Note?', fieldType: 'textarea', validation: { required: false } }),
      )
      .step('qty', (ctx) =>
        ctx.input({
          message: 'Qty?',
          fieldType: 'number',
          validation: { min: 1, message: 'Whole number please' },
        }),
      )
      .step('mail', (ctx) => ctx.input({ message: 'Mail?', fieldType: 'email' }))
      .step('done', (ctx) => ctx.end(JSON.stringify(ctx.data)))
      .build();
    const t = await setup([flow]);
    await t.start();
    expect((await t.answer('AB')).Message).toBe('Please enter at least 3 characters.\nCode?');
    expect((await t.answer('ABCDEF')).Message).toBe('Please enter at most 5 characters.\nCode?');
    expect((await t.answer('abc')).Message).toBe(`${M.pattern}\nCode?`);
    // The stored pattern has no `g` flag: the same entry passes on every try.
    expect((await t.answer('ABC')).Message).toBe('Note?');
    expect((await t.answer('')).Message).toBe('Qty?');
    expect((await t.answer('0')).Message).toBe('Note?'); // "0" is the default back input: back to Note
    await t.answer('');
    expect((await t.answer('1.5')).Message).toBe('Whole number please\nQty?');
    expect((await t.answer('2')).Message).toBe('Mail?');
    expect((await t.answer('nope')).Message).toBe(`${M.email}\nMail?`);
    expect((await t.answer('a@b.co')).Message).toBe(
      JSON.stringify({ code: 'ABC', note: '', qty: 2, mail: 'a@b.co' }),
    );
    await t.app.close();
  });

  it('starts over on a new initiation for a known SessionId, and custom messages replace the defaults', async () => {
    const t = await setup([two()], { messages: { sessionExpired: 'Start again please' } });
    await t.start();
    await t.answer('x');
    expect((await t.start()).Message).toBe('A?');
    expect((await t.service.getSession(t.sessionId))?.history).toEqual([]);
    expect(await t.service.handle(request('Response', '1', 'unknown'))).toMatchObject({
      Type: 'release',
      Message: 'Start again please',
    });
    await t.app.close();
  });

  it('throws a HubtelValidationError listing the issues for an invalid body', async () => {
    const t = await setup([two()]);
    await expect(t.service.handle({ Type: 'nope' })).rejects.toMatchObject({
      code: 'HUBTEL_VALIDATION_FAILED',
      issues: expect.arrayContaining([expect.objectContaining({ field: 'SessionId' })]),
    });
    await t.app.close();
  });
});
