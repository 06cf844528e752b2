// `OrderInfo` read into typed fields: unsigned CLAIMS, never evidence of payment (the status check
// is). Field names match without regard to case (as .NET does); a field of the wrong type is left out.
import { fieldOf } from '#internal';

/** One item of `OrderInfo.Items`. */
export interface FulfillmentClaimedItem {
  itemId?: string;
  name?: string;
  quantity?: number;
  unitPrice?: number;
}

/** `OrderInfo.Payment`, as claimed. */
export interface FulfillmentClaimedPayment {
  paymentType?: string;
  /** What the payer paid, as claimed (with a payer-borne charge, more than the cart). */
  amountPaid?: number;
  /** What reaches the merchant, as claimed. */
  amountAfterCharges?: number;
  paymentDate?: string;
  paymentDescription?: string;
  isSuccessful?: boolean;
}

/** `OrderInfo` in the platform's 2026 shape, as claimed. Personal data: mask it before logging. */
export interface FulfillmentOrderClaims {
  customerMobileNumber?: string;
  customerEmail?: string;
  customerName?: string;
  /** `Paid` in the platform's samples. */
  status?: string;
  orderDate?: string;
  currency?: string;
  branchName?: string;
  isRecurring?: boolean;
  recurringInvoiceId?: string;
  subtotal?: number;
  items: FulfillmentClaimedItem[];
  payment?: FulfillmentClaimedPayment;
}

const MAX_ITEMS = 100;

type Kind = 'string' | 'number' | 'boolean';

function pick<T extends object>(source: unknown, fields: Array<[keyof T & string, string, Kind]>): T {
  const out: Record<string, unknown> = {};
  for (const [key, name, kind] of fields) {
    const value = fieldOf(source, name);
    if (typeof value === kind && (kind !== 'number' || Number.isFinite(value))) out[key] = value;
    // Amounts written as decimal text are read rather than lost.
    else if (kind === 'number' && typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value))
      out[key] = Number(value);
  }
  return out as T;
}

/** The claims of an `OrderInfo`; undefined when there is none (null in the contract's sample). */
export function readOrderClaims(orderInfo: unknown): FulfillmentOrderClaims | undefined {
  if (!orderInfo || typeof orderInfo !== 'object' || Array.isArray(orderInfo)) return undefined;
  const claims = pick<FulfillmentOrderClaims>(orderInfo, [
    ['customerMobileNumber', 'CustomerMobileNumber', 'string'],
    ['customerEmail', 'CustomerEmail', 'string'],
    ['customerName', 'CustomerName', 'string'],
    ['status', 'Status', 'string'],
    ['orderDate', 'OrderDate', 'string'],
    ['currency', 'Currency', 'string'],
    ['branchName', 'BranchName', 'string'],
    ['isRecurring', 'IsRecurring', 'boolean'],
    ['recurringInvoiceId', 'RecurringInvoiceId', 'string'],
    ['subtotal', 'Subtotal', 'number'],
  ]);
  const items = fieldOf(orderInfo, 'Items');
  claims.items = Array.isArray(items)
    ? items.slice(0, MAX_ITEMS).map((item) =>
        pick<FulfillmentClaimedItem>(item, [
          ['itemId', 'ItemId', 'string'],
          ['name', 'Name', 'string'],
          ['quantity', 'Quantity', 'number'],
          ['unitPrice', 'UnitPrice', 'number'],
        ]),
      )
    : [];
  const payment = fieldOf(orderInfo, 'Payment');
  if (payment && typeof payment === 'object')
    claims.payment = pick<FulfillmentClaimedPayment>(payment, [
      ['paymentType', 'PaymentType', 'string'],
      ['amountPaid', 'AmountPaid', 'number'],
      ['amountAfterCharges', 'AmountAfterCharges', 'number'],
      ['paymentDate', 'PaymentDate', 'string'],
      ['paymentDescription', 'PaymentDescription', 'string'],
      ['isSuccessful', 'IsSuccessful', 'boolean'],
    ]);
  return claims;
}
