import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { createHandlerDecorator } from './handler-decorator.js';

const OnPaid = createHandlerDecorator('test.paid');
const OnFailed = createHandlerDecorator('test.failed');

@Injectable()
class Handlers {
  readonly seen: string[] = [];

  @OnPaid({ account: 'north', id: 'north-paid' })
  northPaid(event: { account?: string; ref: string }): string {
    this.seen.push(`north:${event.ref}`);
    return 'ran';
  }

  @OnPaid({ account: ['default', 'south'] })
  @OnFailed()
  others(event: { account?: string; ref: string }): void {
    this.seen.push(`others:${event.ref}`);
  }
}

describe('handler decorators: the account filter', () => {
  it("runs a method only for its accounts' events, through the event emitter", async () => {
    const module = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot()],
      providers: [Handlers],
    }).compile();
    await module.init();
    const emitter = module.get(EventEmitter2);
    await emitter.emitAsync('test.paid', { account: 'north', ref: 'a' });
    await emitter.emitAsync('test.paid', { account: 'south', ref: 'b' });
    await emitter.emitAsync('test.paid', { ref: 'c' }); // no account: the default one's
    await emitter.emitAsync('test.paid', { account: 'west', ref: 'd' });
    await emitter.emitAsync('test.failed', { account: 'west', ref: 'e' }); // filtered too: the method is
    expect(module.get(Handlers).seen).toEqual(['north:a', 'others:b', 'others:c']);
    await module.close();
  });

  it("keeps the method's name, and its result for its own accounts", () => {
    const handlers = new Handlers();
    expect(handlers.northPaid.name).toBe('northPaid');
    expect(handlers.northPaid({ account: 'north', ref: 'x' })).toBe('ran');
    expect(handlers.northPaid({ account: 'south', ref: 'y' })).toBeUndefined();
  });

  it('refuses an empty account list', () => {
    expect(() => OnPaid({ account: [] })).toThrow(HubtelConfigError);
  });
});
