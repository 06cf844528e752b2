import { Injectable, Logger, Module, Scope, type INestApplication, type Provider } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { createHandlerDecorator } from './handler-decorator.js';
import { HandlerRegistry } from './handler-registry.js';

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

@Injectable({ scope: Scope.REQUEST })
class PerRequest {
  @OnPaid()
  handle(): void {
    calls.push('per-request');
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
    logger,
  });
  return { app: nest, registry, logger };
}

describe('HandlerRegistry', () => {
  beforeEach(() => calls.splice(0));

  it('names each @OnEvent method by class and method (or its id option), in the order the emitter calls them', async () => {
    const t = await app([Shipping, Early]);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([
      `Early.first@${PAID}`,
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
    ]);
    expect(await handlers[1]!.call({ id: 'c1' })).toBe('shipped');
    expect(calls).toEqual(['ship:c1']);
    expect(t.registry.handlersOf([PAID])).toBe(handlers); // resolved once, not per job
    expect(t.logger.warnings).toEqual([]);
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

  it('tells apart two handlers of the same name (#2) and warns; keeps listeners attached by hand, by position', async () => {
    const t = await app([Shipping, { provide: 'again', useClass: Shipping }]);
    const manual = (payload: unknown) => void calls.push(`manual:${String((payload as { id: string }).id)}`);
    t.app.get(EventEmitter2).on(PAID, manual);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([
      `Shipping.ship@${PAID}`,
      `ledger-entry@${PAID}`,
      `Shipping.ship@${PAID}#2`,
      `ledger-entry@${PAID}#2`,
      `${PAID}#0`,
    ]);
    await handlers[4]!.call({ id: 'm' });
    expect(calls).toEqual(['manual:m']);
    expect(t.logger.warnings.join('\n')).toContain(`Two handlers are both Shipping.ship@${PAID}`);
    expect(t.logger.warnings.join('\n')).toContain('attached by hand');
    // A listener added later is seen on the next resolution.
    t.app.get(EventEmitter2).on(PAID, () => undefined);
    expect(
      t.registry
        .handlersOf([PAID])
        .map((h) => h.id)
        .slice(-2),
    ).toEqual([`${PAID}#0`, `${PAID}#1`]);
    await t.app.close();
  });

  it('calls a request-scoped handler through the emitter (which builds its instance), under its identity, with a warning', async () => {
    const t = await app([PerRequest]);
    const handlers = t.registry.handlersOf([PAID]);
    expect(handlers.map((h) => h.id)).toEqual([`PerRequest.handle@${PAID}`]);
    await handlers[0]!.call({ id: 'r' });
    expect(calls).toEqual(['per-request']);
    expect(t.logger.warnings.join('\n')).toContain('request-scoped');
    await t.app.close();
  });

  it('without discovery (an emitter alone), every listener is known by its position', () => {
    const emitter = new EventEmitter2();
    emitter.on(PAID, () => 'a');
    emitter.on(PAID, () => 'b');
    const registry = new HandlerRegistry({ emitter });
    expect(registry.handlersOf([PAID, 'other']).map((h) => h.id)).toEqual([`${PAID}#0`, `${PAID}#1`]);
  });
});
