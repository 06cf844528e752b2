import { Injectable, Module, type DynamicModule, type LoggerService, type Provider } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { type DeadLetterEvent } from 'nestjs-hubtel';
import {
  FlowContext,
  FlowStep,
  FulfillmentService,
  OnFulfillment,
  OnFulfillmentCallbackSent,
  OnFulfillmentRejected,
  OnFulfillmentAttention,
  OnServiceAppDeadLetter,
  ServiceAppEvents,
  ServiceAppModule,
  ServiceFlow,
  ServiceFlowBuilder,
  deferFulfillment,
  failFulfillment,
  type FulfillmentCallbackSentEvent,
  type FulfillmentRejectedEvent,
  type FulfillmentAttentionEvent,
  type FulfillmentRequestedEvent,
  type ServiceAppModuleExtras,
  type ServiceAppModuleOptions,
} from 'nestjs-hubtel/service-app';

/*
 * A merchant app for the service-app tests: the contract's bundle flow as the default flow, an
 * airtime flow routed by ServiceCode 711, a builder flow on code `quiz`, a flow whose step can be
 * held past the step budget, and scripted fulfillment handlers.
 */

export const BUNDLES = [
  { Display: '1GB for GHS 5.00', Value: '1gb', Amount: 5 },
  { Display: '5GB for GHS 20.00', Value: '5gb', Amount: 20 },
];

/** Numbers the bundle flow refuses with ctx.reject(). */
export const BLOCKED_NUMBER = '233200000000';

/** The contract's use case: phone input, bundle select, AddToCart. */
@ServiceFlow()
export class BundleFlow {
  @FlowStep({ start: true })
  phone(ctx: FlowContext) {
    return ctx.input({
      message: 'Enter the mobile number to buy data for',
      label: 'Mobile number',
      fieldType: 'phone',
      name: 'destination',
    });
  }

  @FlowStep()
  bundle(ctx: FlowContext<{ destination: string }>) {
    if (ctx.data.destination === BLOCKED_NUMBER) return ctx.reject('This number cannot receive bundles.');
    return ctx.select({
      message: `Choose a bundle for ${ctx.data.destination}`,
      label: 'Bundles',
      name: 'bundle',
      options: BUNDLES,
    });
  }

  @FlowStep()
  confirm(ctx: FlowContext<{ destination: string; bundle: string }>) {
    const option = ctx.selected()!;
    return ctx.addToCart({
      message: `You are buying ${option.Display} for ${ctx.data.destination}`,
      label: 'Confirm purchase',
      item: {
        ItemName: option.Display,
        Qty: 1,
        Price: option.Amount,
        ServiceData: {
          destination: ctx.data.destination,
          amount: option.Amount.toFixed(2),
          bundle: option.Value,
        },
      },
    });
  }
}

/** Routed by ServiceCode 711: a decimal input with bounds, then the cart. */
@ServiceFlow({ serviceCode: '711' })
export class AirtimeFlow {
  @FlowStep()
  amount(ctx: FlowContext) {
    return ctx.input({
      message: 'Amount of airtime (GHS 1 to 100)',
      fieldType: 'decimal',
      validation: { min: 1, max: 100 },
    });
  }

  @FlowStep()
  cart(ctx: FlowContext) {
    const amount = Number(ctx.answer);
    return ctx.addToCart({
      message: `Pay GHS ${amount.toFixed(2)} for airtime`,
      item: {
        ItemName: `Airtime for ${ctx.mobile}`,
        Qty: 1,
        Price: amount,
        ServiceData: { destination: ctx.mobile, amount: amount.toFixed(2) },
      },
    });
  }
}

/** Holds gated steps until the test opens the gate (to pass the step budget, or race two answers). */
@Injectable()
export class Gate {
  private readonly held: Array<() => void> = [];
  private readonly arrivals: Array<{ count: number; resolve: () => void }> = [];
  private holds = 0;

  /** The next `count` gated steps wait at the gate until open(). */
  hold(count = 1): void {
    this.holds += count;
  }

  async pass(): Promise<void> {
    if (this.holds === 0) return;
    this.holds--;
    await new Promise<void>((resolve) => {
      this.held.push(resolve);
      for (const arrival of this.arrivals.filter((a) => this.held.length >= a.count)) {
        this.arrivals.splice(this.arrivals.indexOf(arrival), 1);
        arrival.resolve();
      }
    });
  }

  /** Resolves once `count` steps are waiting at the gate. */
  waiting(count: number): Promise<void> {
    if (this.held.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push({ count, resolve }));
  }

  open(): void {
    this.holds = 0;
    for (const resolve of this.held.splice(0)) resolve();
  }
}

/** Routed by ServiceCode `slow`: its second step passes the gate, so a test can hold it. */
@ServiceFlow({ serviceCode: 'slow' })
export class SlowFlow {
  constructor(private readonly gate: Gate) {}

  @FlowStep()
  name(ctx: FlowContext) {
    return ctx.input({ message: 'Your name?', name: 'name', next: 'age' });
  }

  @FlowStep()
  async age(ctx: FlowContext) {
    await this.gate.pass();
    return ctx.input({
      message: `Hello ${String(ctx.data.name)}, how old are you?`,
      name: 'age',
      fieldType: 'number',
    });
  }

  @FlowStep()
  greet(ctx: FlowContext) {
    return ctx.end(`${String(ctx.data.name)} is ${String(ctx.data.age)}`);
  }
}

/** A flow from the builder, routed by ServiceCode `quiz`. */
export const quizFlow = new ServiceFlowBuilder('quiz')
  .forServiceCode('quiz')
  .step('question', (ctx) =>
    ctx.select({
      message: 'Capital of Ghana?',
      options: [
        { Display: 'Accra', Value: 'accra' },
        { Display: 'Kumasi', Value: 'kumasi' },
      ],
    }),
  )
  .step('answer', (ctx) => (ctx.answer === 'accra' ? ctx.end('Correct!') : ctx.goTo('wrong')))
  .step('wrong', (ctx) => ctx.end(`Wrong: not ${ctx.selected('question')?.Display}`))
  .build();

/** What the Fulfiller's handler returns for an order (the callback's MetaData). */
export const voucherFor = (orderId: string) => ({ voucher: `V-${orderId}` });

/** The fulfillment callback the platform receives when the Fulfiller delivered an order. */
export const successCallback = (sessionId: string, orderId: string) => ({
  SessionId: sessionId,
  OrderId: orderId,
  ServiceStatus: 'success',
  MetaData: voucherFor(orderId),
});

export type HandlerMode = 'ok' | 'throw' | 'defer' | 'fail' | 'hold';

/** Scripted fulfillment handlers: each records what it saw; `modes` set the outcome per OrderId. */
@Injectable()
export class Fulfiller {
  readonly seen: FulfillmentRequestedEvent[] = [];
  readonly seen711: FulfillmentRequestedEvent[] = [];
  /** `<handler>:<OrderId>` in the order the handlers ran. */
  readonly trace: string[] = [];
  readonly calls = new Map<string, number>();
  readonly modes = new Map<string, HandlerMode>();
  readonly sent: FulfillmentCallbackSentEvent[] = [];
  readonly dead: DeadLetterEvent[] = [];
  readonly rejected: FulfillmentRejectedEvent[] = [];
  readonly attention: FulfillmentAttentionEvent[] = [];
  private readonly waiters: Array<{ test: () => boolean; resolve: () => void }> = [];
  private readonly holds = new Map<string, () => void>();

  @OnFulfillment()
  async deliver(order: FulfillmentRequestedEvent): Promise<unknown> {
    this.seen.push(order);
    this.trace.push(`all:${order.orderId}`);
    this.calls.set(order.orderId, (this.calls.get(order.orderId) ?? 0) + 1);
    this.notify();
    switch (this.modes.get(order.orderId) ?? 'ok') {
      case 'throw':
        throw new Error(`vendor API down for ${order.orderId}`);
      case 'defer':
        return deferFulfillment();
      case 'fail':
        return failFulfillment({ reason: 'out of stock' });
      case 'hold':
        await new Promise<void>((resolve) => this.holds.set(order.orderId, resolve));
        return voucherFor(order.orderId);
      default:
        return voucherFor(order.orderId);
    }
  }

  @OnFulfillment('711')
  async deliverAirtime(order: FulfillmentRequestedEvent): Promise<void> {
    this.seen711.push(order);
    this.trace.push(`711:${order.orderId}`);
  }

  @OnFulfillmentCallbackSent()
  onSent(event: FulfillmentCallbackSentEvent): void {
    this.sent.push(event);
    this.notify();
  }

  @OnServiceAppDeadLetter()
  onDead(event: DeadLetterEvent): void {
    this.dead.push(event);
    this.notify();
  }

  @OnFulfillmentRejected()
  onRejected(event: FulfillmentRejectedEvent): void {
    this.rejected.push(event);
    this.notify();
  }

  @OnFulfillmentAttention()
  onAttention(event: FulfillmentAttentionEvent): void {
    this.attention.push(event);
    this.notify();
  }

  /** Lets every handler held in mode `hold` finish. */
  releaseHeld(): void {
    for (const resolve of this.holds.values()) resolve();
    this.holds.clear();
  }

  /** Resolves once `test()` holds (checked after every handler call and event). */
  until(test: () => boolean, timeoutMs = 15_000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('Fulfiller.until timed out')), timeoutMs);
      this.waiters.push({
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  private notify(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.test()) this.waiters.splice(i, 1)[0]!.resolve();
    }
  }
}

export function merchantModule(
  options: ServiceAppModuleOptions,
  extras: ServiceAppModuleExtras = {},
  how: { async?: boolean; providers?: Provider[]; imports?: DynamicModule[] } = {},
): DynamicModule {
  const all = { ...options, flows: [quizFlow, ...(options.flows ?? [])] };
  @Module({
    imports: [
      EventEmitterModule.forRoot(),
      // More modules of the host app (e.g. the job runner of a Redis store: stores.jobRunnerImports()).
      ...(how.imports ?? []),
      how.async
        ? ServiceAppModule.forRootAsync({ useFactory: async () => all, ...extras })
        : ServiceAppModule.forRoot({ ...all, ...extras }),
    ],
    providers: [BundleFlow, AirtimeFlow, SlowFlow, Gate, Fulfiller, ...(how.providers ?? [])],
  })
  class MerchantModule {}
  return { module: MerchantModule };
}

/** A logger that keeps every line (every level), to check what reaches logs. */
export class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown, ...rest: unknown[]): void {
    this.lines.push([message, ...rest].map(String).join(' '));
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.log(message, ...rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.log(message, ...rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.log(message, ...rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.log(message, ...rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.log(message, ...rest);
  }
}

export { FulfillmentService, ServiceAppEvents };
