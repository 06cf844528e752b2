import { Injectable, Logger, Module, Scope, type INestApplication, type Provider } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef } from '@nestjs/core';
import { EVENT_LISTENER_METADATA, EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { createHandlerDecorator } from './handler-decorator.js';
import { HandlerRegistry, onEventMetadataKey } from './handler-registry.js';

const PAID = 'registry.paid';
const OnPaid = createHandlerDecorator(PAID);
const calls: string[] = [];

@Injectable()
class Shipping {
  @OnPaid()
  ship(payload: { id: string }): string {
    calls.push(`ship:${payload.id}`);
    return 'shipped';
  }

  @OnPaid({ id: 'ledger-entry' })
  post(): void {
    calls.push('post');
  }
}

@Injectable()
class Early {
  @OnPaid({ prependListener: true })
  first(): void {
    calls.push('early');
  }
}

let instances = 0;
@Injectable({ scope: Scope.REQUEST })
class PerRequest {
  private readonly n = ++instances;
  @OnPaid()
  handle(): void {
    calls.push(`per-request:${this.n}`);
  }
}

class Recording extends Logger {
  warnings: string[] = [];
  override warn(message: unknown): void {
    this.warnings.push(String(message));
  }
}

async function app(
  providers: Provider[],
): Promise<{ app: INestApplication; registry: HandlerRegistry; logger: Recording }> {
  @Module({ imports: [EventEmitterModule.forRoot()], providers })
  class AppModule {}
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  const nest = await moduleRef.createNestApplication({ logger: false }).init();
  const logger = new Recording();
  const registry = new HandlerRegistry({
    emitter: nest.get(EventEmitter2),
    discovery: nest.get(DiscoveryService),
    scanner: nest.get(MetadataScanner),
    moduleRef: nest.get(ModuleRef),
    logger,
  });
  return { app: nest, registry, logger };
}

describe('HandlerRegistry', () => {
  beforeEach(() => calls.splice(0));

  it('names each decorated method by class and method (or its id option), and calls it directly', async () => {
    const t = await app([Shipping, Early]);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([
      `Early.first@${PAID}`, // prependListener: first
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
    ]);
    const ship = handlers.find((h) => h.id === `Shipping.ship@${PAID}`)!;
    expect(await ship.call({ id: 'c1' })).toBe('shipped');
    expect(calls).toEqual(['ship:c1']);
    expect(t.registry.handlersOf([PAID])).toBe(handlers); // resolved once, not per job
    expect(t.logger.warnings).toEqual([]);
    await t.app.close();
  });

  it('a handler decorator is no emitter listener: emitting the event does not call the handler', async () => {
    const t = await app([Shipping]);
    const emitter = t.app.get(EventEmitter2);
    expect(emitter.listenerCount(PAID)).toBe(0);
    await emitter.emitAsync(PAID, { id: 'e1' });
    expect(calls).toEqual([]);
    await t.app.close();
  });

  it('a plain @OnEvent method is an observer, not a handler; alone on a handler event, a warning at start-up says so', async () => {
    @Injectable()
    class Legacy {
      @OnEvent(PAID, { suppressErrors: false })
      handle(): void {
        calls.push('legacy');
      }
    }
    const alone = await app([Legacy]);
    await alone.registry.onApplicationBootstrap();
    expect(alone.logger.warnings.join('\n')).toContain(
      `Legacy.handle listens to "${PAID}" with @OnEvent, and no handler decorator handles it: since 0.3.0 an @OnEvent method is an observer`,
    );
    expect(alone.registry.handlersOf([PAID])).toEqual([]);
    await alone.app.close();
    // Beside a decorated handler it is an observer by choice: no warning.
    const beside = await app([Shipping, Legacy]);
    await beside.registry.onApplicationBootstrap();
    expect(beside.registry.handlersOf([PAID]).map((h) => h.id)).toEqual([
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
    ]);
    expect(beside.logger.warnings).toEqual([]);
    await beside.app.close();
  });

  it('tells apart two handlers of the same name (#2) and warns', async () => {
    const t = await app([Shipping, { provide: 'again', useClass: Shipping }]);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
      `Shipping.ship@${PAID}#2`,
      `ledger-entry@${PAID}#2`,
    ]);
    expect(t.logger.warnings.join('\n')).toContain(`Two handlers are both Shipping.ship@${PAID}`);
    await t.app.close();
  });

  it('notify: every listener of the emitter (@OnEvent, emitter.on, a wildcard) gets the event; a failing one is logged, never thrown', async () => {
    const seen: string[] = [];
    @Injectable()
    class Observers {
      @OnEvent(PAID)
      plain(payload: { id: string }): void {
        seen.push(`onEvent:${payload.id}`);
      }
      @OnEvent('registry.*')
      any(payload: { id: string }): void {
        seen.push(`wildcard:${payload.id}`);
      }
      @OnEvent(PAID, { suppressErrors: false })
      async failing(): Promise<void> {
        throw new Error('observer down for 0241234567');
      }
    }
    @Module({ imports: [EventEmitterModule.forRoot({ wildcard: true })], providers: [Shipping, Observers] })
    class WildModule {}
    const nest = await (
      await Test.createTestingModule({ imports: [WildModule] }).compile()
    )
      .createNestApplication({ logger: false })
      .init();
    const errors: string[] = [];
    const logger = new (class extends Recording {
      override error(message: unknown): void {
        errors.push(String(message));
      }
    })();
    const emitter = nest.get(EventEmitter2);
    const registry = new HandlerRegistry({
      emitter,
      discovery: nest.get(DiscoveryService),
      scanner: nest.get(MetadataScanner),
      logger,
    });
    emitter.on(PAID, (payload: { id: string }) => void seen.push(`on:${payload.id}`));
    expect(() => registry.notify([PAID], { id: 'n1' })).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.sort()).toEqual(['on:n1', 'onEvent:n1', 'wildcard:n1']);
    expect(calls).toEqual([]); // the handlers are not listeners: notify never runs them again
    expect(errors).toEqual([
      expect.stringContaining(`An observer of "${PAID}" failed (the job is not affected): observer down for`),
    ]);
    expect(errors[0]).not.toContain('0241234567'); // masked
    // A listener that throws synchronously (emitter.on) is caught too.
    emitter.on(PAID, () => {
      throw new Error('sync');
    });
    expect(() => registry.notify([PAID], { id: 'n2' })).not.toThrow();
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.filter((s) => s.endsWith(':n2')).sort()).toEqual(['on:n2', 'onEvent:n2', 'wildcard:n2']);
    expect(errors).toHaveLength(3); // the rejection again, and the throw
    await nest.close();
  });

  it("builds a request-scoped handler's instance per call, under its identity", async () => {
    const t = await app([PerRequest]);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([`PerRequest.handle@${PAID}`]);
    await handlers[0]!.call({ id: 'r' });
    await handlers[0]!.call({ id: 'r' });
    expect(calls).toHaveLength(2);
    expect(calls[0]).not.toBe(calls[1]);
    await t.app.close();
  });

  it("knows @OnEvent's metadata key from a package that does not export it (@nestjs/event-emitter 3, Nest 11)", () => {
    expect(onEventMetadataKey({ OnEvent })).toBe(EVENT_LISTENER_METADATA);
    expect(onEventMetadataKey()).toBe(EVENT_LISTENER_METADATA);
  });

  it('without discovery (an emitter alone), every listener is a handler known by its position, and notify emits nothing', () => {
    const emitter = new EventEmitter2();
    const heard: string[] = [];
    emitter.on(PAID, () => heard.push('a'));
    emitter.on(PAID, () => heard.push('b'));
    const registry = new HandlerRegistry({ emitter });
    expect(registry.handlersOf([PAID, 'other']).map((h) => h.id)).toEqual([`${PAID}#0`, `${PAID}#1`]);
    registry.notify([PAID], {});
    expect(heard).toEqual([]);
  });
});
