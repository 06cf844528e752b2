/**
 * The three inbound request bodies, shaped exactly like the wire contract's samples. `[<id>]` is
 * replaced per request by a fresh id (`<prefix><n>`, counting up), so every request carries a
 * unique key and the suite's de-duplication never takes its cheap "already seen" path; counting
 * ids let the module's server prepare what the next ids need (carts, invoices) beforehand.
 */
export type ShapeName = 'checkout-callback' | 'service-flow' | 'fulfillment';

export interface Shape {
  name: ShapeName;
  label: string;
  path: string;
  /** Body with `[<id>]` placeholders. */
  body: string;
  /** The key a host handler sees for id (OrderId, ClientReference), for the latency probe. */
  keyOf(id: string): string;
  /** Builds one body for a given id (for in-process drivers that do not use autocannon). */
  make(id: string): Record<string, unknown>;
}

export const SHAPE_NAMES: ShapeName[] = ['checkout-callback', 'service-flow', 'fulfillment'];

const checkoutCallback = (id: string) => ({
  ResponseCode: '0000',
  Status: 'Success',
  Data: {
    CheckoutId: `co-${id}`,
    SalesInvoiceId: `inv-${id}`,
    ClientReference: id,
    Status: 'Success',
    Amount: 0.5,
    CustomerPhoneNumber: '233242825109',
    PaymentDetails: { MobileMoneyNumber: '233242825109', PaymentType: 'mobilemoney', Channel: 'mtn-gh' },
    Description: 'The MTN Mobile Money payment has been approved and processed successfully.',
  },
});

const serviceFlow = (id: string) => ({
  Sequence: '1',
  Type: 'initiation',
  Message: '',
  ServiceCode: '11684',
  // The app channel (what the inbound figures have always measured): a telco such as `mtn` is the
  // USSD channel since issue 22, whose paged step is measured by the sessions section.
  Operator: 'Hubtel-Android',
  ClientState: '',
  Mobile: '233242825109',
  SessionId: id,
});

const fulfillment = (id: string) => ({
  OrderId: id,
  SessionId: `s-${id}`,
  ExtraData: {},
  OrderInfo: null,
});

const ID = '[<id>]';

export const SHAPES: Record<ShapeName, Shape> = {
  'checkout-callback': {
    name: 'checkout-callback',
    label: 'checkout callback',
    path: '/hubtel/checkout/callback',
    body: JSON.stringify(checkoutCallback(ID)),
    make: checkoutCallback,
    keyOf: (id) => id,
  },
  'service-flow': {
    name: 'service-flow',
    label: 'service-flow step',
    path: '/api/service-flow',
    body: JSON.stringify(serviceFlow(ID)),
    make: serviceFlow,
    keyOf: (id) => id,
  },
  fulfillment: {
    name: 'fulfillment',
    label: 'fulfillment request',
    path: '/api/fulfillment',
    body: JSON.stringify(fulfillment(ID)),
    make: fulfillment,
    keyOf: (id) => id,
  },
};

/** What the baselines answer: the same payload sizes a real service application would send. */
export function serviceFlowReply(sessionId: string): Record<string, unknown> {
  return {
    SessionId: sessionId,
    Type: 'Response',
    Message: 'Enter the phone number to top up',
    Mask: null,
    MaskNextRoute: null,
    Item: null,
    ServiceCode: null,
    Label: 'Phone number',
    DataType: 'input',
    FieldType: 'phone',
    FieldName: 'destination',
    ClientState: null,
    Data: null,
  };
}

/** Fresh bodies for one server and shape: ids `<prefix>0`, `<prefix>1`, ... */
export class IdSequence {
  next = 0;
  private readonly parts: string[];

  constructor(
    readonly shape: Shape,
    readonly prefix: string,
  ) {
    this.parts = shape.body.split(ID);
  }

  /** The next body, and the id it carries. */
  take(): { id: string; body: string } {
    const id = `${this.prefix}${this.next++}`;
    return { id, body: this.parts.join(id) };
  }
}
