import type { HubtelRouteOptions } from 'nestjs-hubtel';
/* The wire shapes, field for field as the contract writes them (PascalCase, case-sensitive). */

/** `Type` of a service-flow request, lower-cased (the platform writes `Response`, docs `response`). */
export type ServiceFlowRequestType = 'initiation' | 'response' | 'release' | 'timeout' | 'query' | 'favorite';

/** One option of a select prompt (`Data`). */
export interface SelectOption {
  Display: string;
  /** Sent back in `Message` when chosen. */
  Value: string;
  Amount: number;
}

/** Values a cart item hands back at fulfillment (`destination`, `amount`, `bundle` in the contract's example). */
export type ServiceData = Record<string, unknown>;

/** Cart item of an AddToCart answer (`Item`). */
export interface CartItem {
  ItemName: string;
  Qty: number;
  /** Unit price. */
  Price: number;
  ServiceData?: ServiceData;
}

export type ResponseDataType = 'input' | 'select' | 'display';

/** `FieldType` values: the contract shows `phone` and `text`; newer documentation adds the rest. */
export type FieldType = 'text' | 'phone' | 'number' | 'decimal' | 'email' | 'textarea';

/** `release` ends the session; `Release` (the SDK's casing) carries the USSD cart and polite ends. */
export type ServiceFlowResponseType = 'Response' | 'AddToCart' | 'release' | 'Release';

/** Service-flow response (app → platform). */
export interface ServiceFlowResponse {
  SessionId: string;
  Type: ServiceFlowResponseType;
  Message: string;
  Mask: null;
  MaskNextRoute: null;
  /** The cart item for AddToCart (and the USSD cart's `Release`); null otherwise. */
  Item: CartItem | null;
  ServiceCode: null;
  Label: string | null;
  DataType: ResponseDataType;
  FieldType: FieldType | string;
  /** The field's name for input; '' for select; null for the cart (and the final message). */
  FieldName: string | null;
  ClientState: null;
  /** null for input (and the final message); the options for select; [] for the cart. */
  Data: SelectOption[] | [] | null;
}

/** `ServiceStatus` of a fulfillment callback (platform facts: `success` or `failed`). */
export type FulfillmentServiceStatus = 'success' | 'failed';

/** Fulfillment callback (app → platform, `POST {callback_url}/callback`). */
export interface FulfillmentCallback {
  SessionId: string;
  OrderId: string;
  ServiceStatus: FulfillmentServiceStatus;
  MetaData: unknown;
}

/** Where the two endpoints are mounted (a module extra: routes are fixed before async options). */
export interface ServiceAppRouteOptions extends HubtelRouteOptions {
  /** Prefix of both endpoints. Default `api` (→ `POST /api/service-flow`, `POST /api/fulfillment`). */
  path?: string;
  /** Paths under the prefix. Defaults `service-flow`, `fulfillment`. */
  serviceFlowPath?: string;
  fulfillmentPath?: string;
}

export interface ServiceAppModuleExtras {
  /** Register the module globally. Default false. */
  isGlobal?: boolean;
  routes?: ServiceAppRouteOptions;
}
