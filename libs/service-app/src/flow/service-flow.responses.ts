import { HubtelValidationError, type ValidationIssue } from 'nestjs-hubtel';
import type { CartItem, SelectOption, ServiceFlowResponse } from '../service-app.types.js';
import type { StoredScreen } from '../service-flow.types.js';

type Varying = Pick<ServiceFlowResponse, 'Type' | 'Message'> &
  Partial<Pick<ServiceFlowResponse, 'Item' | 'Label' | 'DataType' | 'FieldType' | 'FieldName' | 'Data'>>;

/** Every response as the contract orders it: a `display` of `text` unless told, the rest null. */
function response(sessionId: string, fields: Varying): ServiceFlowResponse {
  return {
    SessionId: sessionId,
    Type: fields.Type,
    Message: fields.Message,
    Mask: null,
    MaskNextRoute: null,
    Item: fields.Item ?? null,
    ServiceCode: null,
    Label: fields.Label ?? null,
    DataType: fields.DataType ?? 'display',
    FieldType: fields.FieldType ?? 'text',
    FieldName: fields.FieldName ?? null,
    ClientState: null,
    Data: fields.Data ?? null,
  };
}

/** `Response` to a prompt (`prefix`: a re-ask's explanation; `shown`: the USSD rendering). */
export function promptResponse(
  sessionId: string,
  screen: StoredScreen,
  prefix?: string,
  shown?: string,
): ServiceFlowResponse {
  const select = screen.kind === 'select';
  return response(sessionId, {
    Type: 'Response',
    Message: shown ?? (prefix ? `${prefix}\n${screen.message}` : screen.message),
    Label: screen.label,
    DataType: select ? 'select' : 'input',
    FieldType: screen.fieldType,
    FieldName: select ? '' : screen.field,
    Data: select
      ? (screen.options ?? []).map((o) => ({ Display: o.Display, Value: o.Value, Amount: o.Amount }))
      : null,
  });
}

/** `AddToCart` (on USSD a `Release`, as the platform's SDK: payment follows). `item` is checked. */
export function cartResponse(
  sessionId: string,
  message: string,
  label: string | null,
  item: CartItem,
  type: 'AddToCart' | 'Release' = 'AddToCart',
): ServiceFlowResponse {
  return response(sessionId, { Type: type, Message: message, Item: item, Label: label, Data: [] });
}

/** `release`: a final message; the session is over. */
export function releaseResponse(
  sessionId: string,
  message: string,
  label: string | null = null,
  type: 'release' | 'Release' = 'release',
): ServiceFlowResponse {
  return response(sessionId, { Type: type, Message: message, Label: label });
}

/** A flow bug is reported to the developer, never sent. */
export function fail(step: string, issues: ValidationIssue[]): never {
  throw new HubtelValidationError(
    `Step "${step}" answered an invalid reply: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`,
    issues,
  );
}

/** An option's Value as stored: a finite number becomes its string. */
export function optionValue(value: unknown): unknown {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
}

/** Checks a cart item; returns a copy holding only the contract's fields. */
export function checkCartItem(step: string, message: unknown, item: CartItem): CartItem {
  const issues: ValidationIssue[] = [];
  const bad = (field: string, message: string) => void issues.push({ field, message });
  if (typeof message !== 'string') bad('message', 'must be a string');
  if (!item || typeof item !== 'object')
    fail(step, [...issues, { field: 'item', message: 'must be an object' }]);
  const { ItemName, Qty, Price, ServiceData } = item;
  if (typeof ItemName !== 'string' || ItemName.trim() === '')
    bad('item.ItemName', 'must be a non-empty string');
  if (typeof Qty !== 'number' || !Number.isInteger(Qty) || Qty < 1)
    bad('item.Qty', 'must be a whole number of 1 or more');
  if (typeof Price !== 'number' || !Number.isFinite(Price) || Price <= 0)
    bad('item.Price', 'must be a number above 0');
  const copy: CartItem = { ItemName, Qty, Price };
  if (ServiceData === null || typeof ServiceData !== 'object' || Array.isArray(ServiceData)) {
    if (ServiceData !== undefined) bad('item.ServiceData', 'must be a plain object');
  } else {
    try {
      copy.ServiceData = JSON.parse(JSON.stringify(ServiceData)) as Record<string, unknown>;
    } catch {
      bad('item.ServiceData', 'must be JSON-serialisable');
    }
  }
  if (issues.length > 0) fail(step, issues);
  return copy;
}

/** The answer to a `query` from @OnServiceQuery()'s value; undefined unless a string or `{ message }`. */
export function queryResponse(sessionId: string, answer: unknown): ServiceFlowResponse | undefined {
  const reply = typeof answer === 'string' ? { message: answer } : answer;
  if (!reply || typeof reply !== 'object') return undefined;
  const { message, label, data } = reply as { message?: unknown; label?: unknown; data?: unknown };
  if (typeof message !== 'string' || (label !== undefined && typeof label !== 'string')) return undefined;
  let options: SelectOption[] | null = null;
  if (data !== undefined) {
    if (!Array.isArray(data)) return undefined;
    options = [];
    for (const option of data as Array<Record<string, unknown>>) {
      const value = optionValue(option?.Value);
      const amount = option?.Amount ?? 0;
      if (
        typeof option?.Display !== 'string' ||
        typeof value !== 'string' ||
        typeof amount !== 'number' ||
        !Number.isFinite(amount)
      )
        return undefined;
      options.push({ Display: option.Display, Value: value, Amount: amount });
    }
  }
  return response(sessionId, { Type: 'Response', Message: message, Label: label, Data: options });
}
