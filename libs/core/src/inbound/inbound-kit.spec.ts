/*
 * The inbound kit, proven by a third inbound module made up here ("parcel delivery notices"):
 * a DTO, a controller, a handler decorator and a module of a few lines over inboundKit, booted in
 * a real Nest app on Express and on Fastify and driven over real HTTP.
 */
import { Body, Global, HttpCode, Inject, Injectable, Logger, Module, Post, Req, Res } from '@nestjs/common';
import type { DynamicModule, INestApplication, Provider } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { IsIn, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { HubtelConfigError, HubtelValidationError } from '../errors/hubtel.errors.js';
import { createHandlerDecorator } from '../events/handler-decorator.js';
import { compileValidator } from '../validation/validation.ajv.js';
import type { InboundAccessOptions, InboundAccessPolicy, InboundRequestLike } from './inbound-access.js';
import { answerInbound } from './inbound-answer.js';
import { mountController } from './inbound-controller.js';
import { inboundKit } from './inbound-kit.js';
import type { JobRunner } from './job-runner.js';
import { HUBTEL_JOB_RUNNER, HUBTEL_STORE } from '../hubtel.constants.js';
import { MemoryStore } from '../store/memory.store.js';
import type { HubtelStore } from '../store/hubtel-store.interface.js';
import type { InboundPipeline, JobRetryPolicy } from './inbound-pipeline.js';

// ---- The made-up module: a carrier posts delivery notices, handlers run once per notice ----

const PARCEL_OPTIONS = Symbol('PARCEL_OPTIONS');
const PARCEL_STORE = Symbol('PARCEL_STORE');
const PARCEL_ACCESS = Symbol('PARCEL_ACCESS');
const PARCEL_PIPELINE = Symbol('PARCEL_PIPELINE');
const ParcelEvents = { Notice: 'parcel.notice', DeadLetter: 'parcel.dead-letter' } as const;
const OnParcelNotice = createHandlerDecorator(ParcelEvents.Notice);

interface ParcelOptions {
  access: InboundAccessOptions;
  retry: Partial<JobRetryPolicy>;
}

class ParcelNoticeDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  noticeId: string;

  @IsString()
  @IsNotEmpty()
  parcelId: string;

  @IsIn(['delivered', 'returned'])
  status: 'delivered' | 'returned';
}

const validNotice = compileValidator(ParcelNoticeDto);

class ParcelNoticeController {
  private readonly logger = new Logger('Parcel');

  constructor(
    @Inject(PARCEL_PIPELINE) private readonly pipeline: InboundPipeline,
    @Inject(PARCEL_ACCESS) private readonly access: InboundAccessPolicy,
  ) {}

  @Post()
  @HttpCode(200)
  receive(
    @Body() body: unknown,
    @Req() request: InboundRequestLike,
    @Res({ passthrough: true }) response: unknown,
  ): Promise<{ received: true }> {
    return answerInbound(
      'parcel notice',
      response,
      async () => {
        this.access.check(request);
        const checked = validNotice(body);
        if (!checked.ok) throw new HubtelValidationError('Invalid parcel notice', checked.issues);
        await this.pipeline.submit(ParcelEvents.Notice, checked.value.noticeId, checked.value);
        return { received: true as const };
      },
      { logger: this.logger },
    );
  }
}

const kit = inboundKit<ParcelOptions>({
  module: 'ParcelModule',
  emits: 'delivers parcel notices as events',
  optionPrefix: 'parcel',
  options: PARCEL_OPTIONS,
  store: PARCEL_STORE,
  access: PARCEL_ACCESS,
  pipeline: {
    provide: PARCEL_PIPELINE,
    settings: ({ retry }) => ({
      name: 'parcel',
      deadLetterEvent: ParcelEvents.DeadLetter,
      retry,
      jobs: { [ParcelEvents.Notice]: {} },
    }),
  },
});

@Module({
  imports: kit.imports,
  controllers: [mountController(ParcelNoticeController, 'parcel/notices')],
  providers: [
    {
      provide: PARCEL_OPTIONS,
      useValue: { access: {}, retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 10 } },
    },
    ...kit.providers,
  ],
  exports: [PARCEL_PIPELINE],
})
class ParcelModule {}

// ---- The host app's handler ----

@Injectable()
class ParcelHandlers {
  readonly calls: ParcelNoticeDto[] = [];
  /** Notice ids whose next call throws (once each). */
  readonly failOnce = new Set<string>();

  @OnParcelNotice()
  onNotice(notice: ParcelNoticeDto): void {
    this.calls.push(notice);
    if (this.failOnce.delete(notice.noticeId)) throw new Error('the warehouse system is down');
  }

  callsOf(noticeId: string): number {
    return this.calls.filter((call) => call.noticeId === noticeId).length;
  }
}

describe.each(['express', 'fastify'] as const)('a third inbound module over inboundKit (%s)', (kind) => {
  let app: INestApplication;
  let url: string;
  let handlers: ParcelHandlers;
  let pipeline: InboundPipeline;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot(), ParcelModule],
      providers: [ParcelHandlers],
    }).compile();
    app = moduleRef.createNestApplication(kind === 'express' ? new ExpressAdapter() : new FastifyAdapter(), {
      logger: false,
    });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1').replace('localhost', '127.0.0.1');
    handlers = app.get(ParcelHandlers);
    pipeline = app.get(PARCEL_PIPELINE);
  });
  afterAll(() => app?.close());

  async function post(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${url}/parcel/notices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const notice = (noticeId: string) => ({ noticeId, parcelId: `P-${noticeId}`, status: 'delivered' });

  it('runs the handler once for a notice, and not again for the same notice sent again', async () => {
    const first = await post(notice(`n1-${kind}`));
    expect(first).toEqual({ status: 200, body: { received: true } });
    await pipeline.drain();
    expect(handlers.callsOf(`n1-${kind}`)).toBe(1);
    expect(handlers.calls.find((c) => c.noticeId === `n1-${kind}`)).toEqual(notice(`n1-${kind}`));

    const again = await post(notice(`n1-${kind}`));
    expect(again).toEqual({ status: 200, body: { received: true } });
    await pipeline.drain();
    expect(handlers.callsOf(`n1-${kind}`)).toBe(1);
    expect((await pipeline.get(ParcelEvents.Notice, `n1-${kind}`))?.status).toBe('done');
  });

  it('answers a malformed notice 400 HUBTEL_INVALID_BODY, recording and running nothing', async () => {
    const before = handlers.calls.length;
    const bad = { noticeId: `n2-${kind}`, parcelId: 42, status: 'lost' };
    const answer = await post(bad);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('HUBTEL_INVALID_BODY');
    expect((answer.body.issues as Array<{ field: string }>).map((i) => i.field).sort()).toEqual([
      'parcelId',
      'status',
    ]);
    await pipeline.drain();
    expect(handlers.calls.length).toBe(before);
    expect(await pipeline.get(ParcelEvents.Notice, `n2-${kind}`)).toBeUndefined();
  });

  it('retries a handler that throws once, until it succeeds', async () => {
    handlers.failOnce.add(`n3-${kind}`);
    expect((await post(notice(`n3-${kind}`))).status).toBe(200);
    await pipeline.drain();
    expect(handlers.callsOf(`n3-${kind}`)).toBe(2);
    const record = await pipeline.get(ParcelEvents.Notice, `n3-${kind}`);
    expect(record).toMatchObject({ status: 'done', attempts: 2 });
  });
});

describe('a third inbound module without EventEmitterModule', () => {
  it('fails the bootstrap with a HubtelConfigError naming EventEmitterModule and the module', async () => {
    const error = await Test.createTestingModule({ imports: [ParcelModule] })
      .compile()
      .then((moduleRef) => moduleRef.close())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as HubtelConfigError).option).toBe('EventEmitterModule');
    expect((error as Error).message).toMatch(/ParcelModule .*EventEmitterModule\.forRoot\(\)/);
  });
});

describe('a third inbound module on a shared store', () => {
  /** A store other instances share (not this process's MemoryStore), as HubtelRedisModule gives. */
  const shared = (): HubtelStore => {
    const memory = new MemoryStore();
    return {
      get: (key) => memory.get(key),
      set: (key, value, options) => memory.set(key, value, options),
      setIfAbsent: (key, value, options) => memory.setIfAbsent(key, value, options),
      compareAndSet: (key, version, value, options) => memory.compareAndSet(key, version, value, options),
      delete: (key) => memory.delete(key),
      scan: (prefix) => memory.scan(prefix),
    };
  };
  const boot = (providers: Provider[]) =>
    Test.createTestingModule({
      imports: [EventEmitterModule.forRoot(), GlobalProviders.with(providers), ParcelModule],
    })
      .compile()
      .then((moduleRef) => moduleRef.close())
      .catch((e: unknown) => e);

  it('refuses to start without a job runner (one engine: a shared store runs its jobs on BullMQ)', async () => {
    const error = await boot([{ provide: HUBTEL_STORE, useFactory: shared }]);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as HubtelConfigError).option).toBe('HubtelBullmqModule');
    expect((error as Error).message).toMatch(
      /ParcelModule keeps its records in a shared store .*HubtelBullmqModule\.forRoot/,
    );
  });

  it('starts with one', async () => {
    const runner: JobRunner = {
      start: async () => undefined,
      enqueue: async () => undefined,
      wake: async () => undefined,
      repeat: async () => undefined,
      stop: async () => undefined,
    };
    const error = await boot([
      { provide: HUBTEL_STORE, useFactory: shared },
      { provide: HUBTEL_JOB_RUNNER, useValue: runner },
    ]);
    expect(error).toBeUndefined();
  });
});

describe("a third inbound module on this process's store beside a shared runner", () => {
  it('refuses to start, naming its store option (another instance would take jobs it cannot read)', async () => {
    const runner: JobRunner = {
      start: async () => undefined,
      enqueue: async () => undefined,
      wake: async () => undefined,
      repeat: async () => undefined,
      stop: async () => undefined,
    };
    const error = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        GlobalProviders.with([{ provide: HUBTEL_JOB_RUNNER, useValue: runner }]),
        ParcelModule,
      ],
    })
      .compile()
      .then((moduleRef) => moduleRef.close())
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubtelConfigError);
    expect((error as HubtelConfigError).code).toBe('HUBTEL_CONFIG_INVALID');
    expect((error as HubtelConfigError).option).toBe('parcel.store');
    expect((error as Error).message).toMatch(
      /ParcelModule keeps its records in this process \(MemoryStore\)/,
    );
  });
});

@Global()
@Module({})
class GlobalProviders {
  static with(providers: Provider[]): DynamicModule {
    return {
      module: GlobalProviders,
      providers,
      exports: providers.map((p) => (p as { provide: symbol }).provide),
    };
  }
}
