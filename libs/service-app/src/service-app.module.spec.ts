import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { HubtelConfigError } from 'nestjs-hubtel';
import { HUBTEL_STATUS_CHECK_BUDGET, type StatusCheckBudget } from '#internal';
import type { ServiceAppAccounts } from './service-app.accounts.js';
import { SERVICE_APP_ACCOUNTS } from './service-app.constants.js';
import { ServiceAppModule } from './service-app.module.js';
import { FlowStep, ServiceFlow, ServiceFlowBuilder, ServiceFlowRegistry } from './flow/index.js';
import type { FlowContext } from './service-flow.context.js';
import { FulfillmentService } from './fulfillment/index.js';

@ServiceFlow()
class DefaultFlow {
  @FlowStep()
  hello(ctx: FlowContext) {
    return ctx.end('hi');
  }
}

@ServiceFlow()
class OtherDefaultFlow {
  @FlowStep()
  hello(ctx: FlowContext) {
    return ctx.end('hi');
  }
}

@ServiceFlow({ serviceCode: ['711', '712'] })
class CodedFlow {
  @FlowStep()
  first(ctx: FlowContext) {
    return ctx.input({ message: 'x' });
  }

  @FlowStep({ start: true })
  second(ctx: FlowContext) {
    return ctx.end('y');
  }
}

@ServiceFlow({ serviceCode: '711', name: 'Clash' })
class ClashingFlow {
  @FlowStep()
  one(ctx: FlowContext) {
    return ctx.end('z');
  }
}

@ServiceFlow({ serviceCode: '800' })
class EmptyFlow {}

async function boot(imports: Array<DynamicModule | Function>, providers: Function[] = []) {
  @Module({ imports: imports as never[], providers: providers as never[] })
  class TestModule {}
  const moduleRef = await Test.createTestingModule({ imports: [TestModule] }).compile();
  return moduleRef.createNestApplication({ logger: false }).init();
}

async function bootError(
  imports: Array<DynamicModule | Function>,
  providers: Function[] = [],
): Promise<HubtelConfigError> {
  try {
    const app = await boot(imports, providers);
    await app.close();
  } catch (error) {
    expect(error).toBeInstanceOf(HubtelConfigError);
    return error as HubtelConfigError;
  }
  throw new Error('expected the app to fail at bootstrap');
}

const routesOff = { routes: { disabled: true } };

describe('ServiceAppModule bootstrap', () => {
  it('finds decorated flows, routes codes, uses the marked start step, and accepts builder flows', async () => {
    const builder = new ServiceFlowBuilder('built')
      .forServiceCode('900')
      .step('a', (ctx) => ctx.end('b'))
      .build();
    const app = await boot(
      [EventEmitterModule.forRoot(), ServiceAppModule.forRoot({ flows: [builder], ...routesOff })],
      [DefaultFlow, CodedFlow],
    );
    const registry = app.get(ServiceFlowRegistry);
    expect(
      registry
        .list()
        .map((f) => f.name)
        .sort(),
    ).toEqual(['CodedFlow', 'DefaultFlow', 'built']);
    expect(registry.route('711')?.name).toBe('CodedFlow');
    expect(registry.route('712')?.name).toBe('CodedFlow');
    expect(registry.route('900')?.name).toBe('built');
    expect(registry.route('anything')?.name).toBe('DefaultFlow');
    expect(registry.get('CodedFlow')?.start).toBe('second');
    expect(registry.get('CodedFlow')?.steps.map((s) => s.name)).toEqual(['first', 'second']);
    await app.close();
  });

  it('works with forRootAsync (useFactory + inject) and isGlobal', async () => {
    @Injectable()
    class Config {
      url = 'http://127.0.0.1:1';
    }
    @Module({ providers: [Config], exports: [Config] })
    class ConfigModule {}
    const app = await boot([
      EventEmitterModule.forRoot(),
      ServiceAppModule.forRootAsync({
        imports: [ConfigModule],
        inject: [Config],
        useFactory: (c: Config) => ({ callbackUrl: c.url }),
        isGlobal: true,
        ...routesOff,
      }),
    ]);
    expect(app.get(FulfillmentService)).toBeInstanceOf(FulfillmentService);
    await app.close();
  });

  it("sets the instance's status-check budget from statusCheckBudget.perMinute (default 600 without it)", async () => {
    const budgetOf = async (options: object) => {
      const app = await boot([
        EventEmitterModule.forRoot(),
        ServiceAppModule.forRoot({ ...options, ...routesOff }),
      ]);
      const { perMinute } = app.get<StatusCheckBudget>(HUBTEL_STATUS_CHECK_BUDGET, { strict: false });
      await app.close();
      return perMinute;
    };
    expect(await budgetOf({})).toBe(600);
    // Set even without a status check of this module's: checkout's checks draw on the same budget.
    expect(await budgetOf({ statusCheckBudget: { perMinute: 7 } })).toBe(7);
  });

  it("gives a named account the module-wide options as forRoot resolved them (its callback's retry)", async () => {
    const app = await boot([
      EventEmitterModule.forRoot(),
      ServiceAppModule.forRoot({ callbackRetry: { baseDelayMs: 1_234, deadlineMs: 60_000 }, ...routesOff }),
      ServiceAppModule.registerAccount({ name: 'north' }),
    ]);
    const north = await app.get<ServiceAppAccounts>(SERVICE_APP_ACCOUNTS, { strict: false }).get('north');
    expect(north.options.callbackRetry).toMatchObject({ baseDelayMs: 1_234, deadlineMs: 60_000 });
    await app.close();
  });

  it('fails at bootstrap, naming the problem', async () => {
    expect(
      (
        await bootError([
          EventEmitterModule.forRoot(),
          ServiceAppModule.forRoot({ stepBudgetMs: -5, ...routesOff }),
        ])
      ).option,
    ).toBe('serviceApp.stepBudgetMs');
    expect((await bootError([ServiceAppModule.forRoot(routesOff)])).option).toBe('EventEmitterModule');
    expect(
      (
        await bootError(
          [EventEmitterModule.forRoot(), ServiceAppModule.forRoot(routesOff)],
          [DefaultFlow, OtherDefaultFlow],
        )
      ).message,
    ).toContain('both DefaultFlow and OtherDefaultFlow are default flows');
    expect(
      (
        await bootError(
          [EventEmitterModule.forRoot(), ServiceAppModule.forRoot(routesOff)],
          [CodedFlow, ClashingFlow],
        )
      ).message,
    ).toContain('"711" is already routed to flow CodedFlow');
    expect(
      (await bootError([EventEmitterModule.forRoot(), ServiceAppModule.forRoot(routesOff)], [EmptyFlow]))
        .option,
    ).toBe('flows.EmptyFlow');
    expect(
      (
        await bootError([
          EventEmitterModule.forRoot(),
          ServiceAppModule.forRoot({ access: { pathSecret: 'short' }, ...routesOff }),
        ])
      ).option,
    ).toBe('serviceApp.access.pathSecret');
  });

  it('checks builder flows when they are built', () => {
    expect(() => new ServiceFlowBuilder('')).toThrow(HubtelConfigError);
    expect(() => new ServiceFlowBuilder('x').build()).toThrow('must have at least one step');
    expect(() =>
      new ServiceFlowBuilder('x')
        .step('a', (c) => c.end(''))
        .step('a', (c) => c.end(''))
        .build(),
    ).toThrow('is declared twice');
    expect(() => new ServiceFlowBuilder('x').forServiceCode('')).toThrow(HubtelConfigError);
    expect(() => new ServiceFlowBuilder('x').step('a', 'nope' as never)).toThrow(HubtelConfigError);
  });

  it('makes a builder flow the default one without codes, or with asDefault() beside its codes', () => {
    const flow = (build: (b: ServiceFlowBuilder) => ServiceFlowBuilder) =>
      build(new ServiceFlowBuilder('x'))
        .step('a', (c) => c.end(''))
        .build();
    expect(flow((b) => b)).toMatchObject({ serviceCodes: [], isDefault: true });
    expect(flow((b) => b.forServiceCode('*713#'))).toMatchObject({
      serviceCodes: ['*713#'],
      isDefault: false,
    });
    expect(flow((b) => b.forServiceCode('*713#').asDefault())).toMatchObject({
      serviceCodes: ['*713#'],
      isDefault: true,
    });
  });
});
