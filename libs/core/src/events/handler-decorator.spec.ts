import { EventEmitter2, EventEmitterModule } from '@nestjs/event-emitter';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import {
  createHandlerDecorator,
  createListenerDecorator,
  HUBTEL_HANDLER_METADATA,
} from './handler-decorator.js';

const OnPaid = createHandlerDecorator('test.paid');
const OnFailed = createHandlerDecorator('test.failed');
const OnRejected = createListenerDecorator('test.rejected');

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

  @OnRejected({ account: 'north' })
  rejected(event: { account?: string; ref: string }): void {
    this.seen.push(`rejected:${event.ref}`);
  }
}

describe('handler decorators', () => {
  it('mark a handler with our metadata (event, id), stacked, and never make it an emitter listener', async () => {
    const module = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot()],
      providers: [Handlers],
    }).compile();
    await module.init();
    const proto = Handlers.prototype;
    expect(Reflect.getMetadata(HUBTEL_HANDLER_METADATA, proto.northPaid)).toEqual([
      { event: 'test.paid', id: 'north-paid' },
    ]);
    expect(Reflect.getMetadata(HUBTEL_HANDLER_METADATA, proto.others)).toEqual([
      { event: 'test.failed' },
      { event: 'test.paid' },
    ]);
    const emitter = module.get(EventEmitter2);
    await emitter.emitAsync('test.paid', { account: 'north', ref: 'a' });
    expect(module.get(Handlers).seen).toEqual([]);
    await module.close();
  });

  it('a listener decorator is an @OnEvent, filtered by account', async () => {
    const module = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot()],
      providers: [Handlers],
    }).compile();
    await module.init();
    const emitter = module.get(EventEmitter2);
    await emitter.emitAsync('test.rejected', { account: 'north', ref: 'a' });
    await emitter.emitAsync('test.rejected', { account: 'south', ref: 'b' });
    expect(module.get(Handlers).seen).toEqual(['rejected:a']);
    await module.close();
  });

  it("the account filter keeps the method's name, and its result for its own accounts", () => {
    const handlers = new Handlers();
    expect(handlers.northPaid.name).toBe('northPaid');
    expect(handlers.northPaid({ account: 'north', ref: 'x' })).toBe('ran');
    expect(handlers.northPaid({ account: 'south', ref: 'y' })).toBeUndefined();
    handlers.others({ ref: 'c' }); // no account: the default one's
    handlers.others({ account: 'west', ref: 'd' });
    expect(handlers.seen).toEqual(['north:x', 'others:c']);
  });

  it('refuses an empty account list', () => {
    expect(() => OnPaid({ account: [] })).toThrow(HubtelConfigError);
    expect(() => OnRejected({ account: [] })).toThrow(HubtelConfigError);
  });
});
