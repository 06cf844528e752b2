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
  @OnEvent(PAID, { prependListener: true })
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

  it('names each @OnEvent method by class and method (or its id option), and calls it directly', async () => {
    const t = await app([Shipping, Early]);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([
      `Early.first@${PAID}`, // prependListener: first, as the emitter would call it
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

  it("finds handlers by the decorator's metadata, never by the emitter's listeners (which it may reorder or wrap)", async () => {
    const t = await app([Shipping]);
    t.app.get(EventEmitter2).removeAllListeners(PAID);
    expect(t.registry.handlersOf([PAID]).map((h) => h.id)).toEqual([
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
    ]);
    await t.app.close();
  });

  it('calls a plain @OnEvent method directly, so its failure is seen (suppressErrors would swallow it)', async () => {
    @Injectable()
    class Failing {
      @OnEvent(PAID)
      fail(): void {
        throw new Error('boom');
      }
    }
    const t = await app([Failing]);
    const [handler] = t.registry.handlersOf([PAID]);
    await expect(async () => handler!.call({})).rejects.toThrow('boom');
    await t.app.close();
  });

  it('tells apart two handlers of the same name (#2) and warns; a listener attached by hand is no pipeline handler, with a warning', async () => {
    const t = await app([Shipping, { provide: 'again', useClass: Shipping }]);
    const manual = (payload: unknown) => void calls.push(`manual:${String((payload as { id: string }).id)}`);
    t.app.get(EventEmitter2).on(PAID, manual);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
      `Shipping.ship@${PAID}#2`,
      `ledger-entry@${PAID}#2`,
    ]);
    expect(t.logger.warnings.join('\n')).toContain(`Two handlers are both Shipping.ship@${PAID}`);
    expect(t.logger.warnings.join('\n')).toContain('1 listener(s) of "registry.paid" were attached by hand');
    await t.app.close();
  });

  it('warns that a wildcard @OnEvent is not called for a pipeline event it matches', async () => {
    @Injectable()
    class Everything {
      @OnEvent('registry.*')
      any(): void {
        calls.push('any');
      }
    }
    const t = await app([Everything, Shipping]);
    expect(t.registry.handlersOf([PAID]).map((h) => h.id)).toEqual([
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
    ]);
    expect(t.logger.warnings.join('\n')).toContain('Everything.any listens to the pattern "registry.*"');
    expect(t.registry.handlersOf(['other.event'])).toEqual([]);
    await t.app.close();
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

  it('without discovery (an emitter alone), every listener is known by its position', () => {
    const emitter = new EventEmitter2();
    emitter.on(PAID, () => 'a');
    emitter.on(PAID, () => 'b');
    const registry = new HandlerRegistry({ emitter });
    expect(registry.handlersOf([PAID, 'other']).map((h) => h.id)).toEqual([`${PAID}#0`, `${PAID}#1`]);
  });
});
