import { HubtelValidationError, type ValidationIssue } from 'nestjs-hubtel';
import type { CartItem, SelectOption, ServiceFlowResponse } from './service-app.types.js';
import type { InputPrompt, SelectPrompt, StoredScreen } from './service-flow.types.js';

/*
 * The service-flow response shapes, exactly as the contract's tables and "Service-session
 * exchange" give them: Mask, MaskNextRoute, ServiceCode and ClientState always null; Item null
 * except for the cart; FieldName '' for select and null for the cart; Data null for input, the
 * options for select, [] for the cart. The final message (not shown by the contract) uses
 * `Type: 'release'`, the value the platform's documentation gives for ending a session, with the
 * cart's display shape and no options.
 */

/** Every response, field by field in the contract's order: the fields that vary, the rest null. */
function response(
  sessionId: string,
  fields: Pick<
    ServiceFlowResponse,
    'Type' | 'Message' | 'Item' | 'Label' | 'DataType' | 'FieldType' | 'FieldName' | 'Data'
  >,
): ServiceFlowResponse {
  return {
    SessionId: sessionId,
    Type: fields.Type,
    Message: fields.Message,
    Mask: null,
    MaskNextRoute: null,
    Item: fields.Item,
    ServiceCode: null,
    Label: fields.Label,
    DataType: fields.DataType,
    FieldType: fields.FieldType,
    FieldName: fields.FieldName,
    ClientState: null,
    Data: fields.Data,
  };
}

/** `Response` to an input or select prompt (optionally prefixed by an explanation, for re-asks). */
export function promptResponse(
  sessionId: string,
  screen: StoredScreen,
  prefix?: string,
): ServiceFlowResponse {
  const select = screen.kind === 'select';
  return response(sessionId, {
    Type: 'Response',
    Message: prefix ? `${prefix}\n${screen.message}` : screen.message,
    Item: null,
    Label: screen.label,
    DataType: select ? 'select' : 'input',
    FieldType: screen.fieldType,
    FieldName: select ? '' : screen.field,
    Data: select
      ? (screen.options ?? []).map((o) => ({ Display: o.Display, Value: o.Value, Amount: o.Amount }))
      : null,
  });
}

/** `AddToCart`: hands the user over to payment. `item` is already checked (checkCartItem). */
export function cartResponse(
  sessionId: string,
  message: string,
  label: string | null,
  item: CartItem,
): ServiceFlowResponse {
  return response(sessionId, {
    Type: 'AddToCart',
    Message: message,
    Item: item,
    Label: label,
    DataType: 'display',
    FieldType: 'text',
    FieldName: null,
    Data: [],
  });
}

/** `release`: a final message; the session is over. */
export function releaseResponse(
  sessionId: string,
  message: string,
  label: string | null = null,
): ServiceFlowResponse {
  return response(sessionId, {
    Type: 'release',
    Message: message,
    Item: null,
    Label: label,
    DataType: 'display',
    FieldType: 'text',
    FieldName: null,
    Data: null,
  });
}

/* --- Checks of what a step answered: a flow bug is reported to the developer, never sent. --- */

function fail(step: string, issues: ValidationIssue[]): never {
  throw new HubtelValidationError(
    `Step "${step}" answered an invalid reply: ${issues.map((i) => `${i.field} ${i.message}`).join('; ')}`,
    issues,
  );
}

function isText(value: unknown): value is string {
  return typeof value === 'string';
}

/** Checks shared by both prompts (a flow bug is named to the developer, never sent). */
function checkPrompt(prompt: InputPrompt | SelectPrompt, issues: ValidationIssue[]): void {
  if (!isText(prompt?.message)) issues.push({ field: 'message', message: 'must be a string' });
  if (prompt?.label !== undefined && !isText(prompt.label))
    issues.push({ field: 'label', message: 'must be a string' });
  if (prompt?.name !== undefined && (!isText(prompt.name) || prompt.name.trim() === ''))
    issues.push({ field: 'name', message: 'must be a non-empty string' });
  if (prompt?.fieldType !== undefined && (!isText(prompt.fieldType) || prompt.fieldType.trim() === ''))
    issues.push({ field: 'fieldType', message: 'must be a non-empty string' });
}

/** A checked prompt as stored in the session (Label defaults to the message, field to the step). */
function screenOf(
  step: string,
  kind: StoredScreen['kind'],
  prompt: InputPrompt | SelectPrompt,
  next: string | undefined,
): StoredScreen {
  const screen: StoredScreen = {
    step,
    kind,
    message: prompt.message,
    label: prompt.label ?? prompt.message,
    fieldType: prompt.fieldType ?? 'text',
    field: prompt.name ?? step,
  };
  if (next !== undefined) screen.next = next;
  return screen;
}

/** The stored form of an input prompt. */
export function inputScreen(step: string, prompt: InputPrompt, next: string | undefined): StoredScreen {
  const issues: ValidationIssue[] = [];
  checkPrompt(prompt, issues);
  const validation = prompt?.validation;
  if (validation !== undefined && (validation === null || typeof validation !== 'object'))
    issues.push({ field: 'validation', message: 'must be an object' });
  if (issues.length > 0) fail(step, issues);
  const screen = screenOf(step, 'input', prompt, next);
  if (validation) {
    const { pattern, ...rest } = validation;
    screen.validation = { ...rest };
    if (pattern !== undefined) {
      const regex = typeof pattern === 'string' ? new RegExp(pattern) : pattern;
      // `g`/`y` make RegExp#test stateful; drop them so a stored pattern always tests the same way.
      screen.validation.pattern = { source: regex.source, flags: regex.flags.replace(/[gy]/g, '') };
    }
  }
  return screen;
}

/** The stored form of a select prompt (options checked and normalised: Value as string, Amount number). */
export function selectScreen(step: string, prompt: SelectPrompt, next: string | undefined): StoredScreen {
  const issues: ValidationIssue[] = [];
  checkPrompt(prompt, issues);
  const options: SelectOption[] = [];
  if (!Array.isArray(prompt?.options) || prompt.options.length === 0) {
    issues.push({ field: 'options', message: 'must be a non-empty array' });
  } else {
    const seen = new Set<string>();
    prompt.options.forEach((option, index) => {
      const at = `options[${index}]`;
      if (!option || typeof option !== 'object')
        return void issues.push({ field: at, message: 'must be an object' });
      if (!isText(option.Display)) issues.push({ field: `${at}.Display`, message: 'must be a string' });
      const value =
        typeof option.Value === 'number' && Number.isFinite(option.Value)
          ? String(option.Value)
          : option.Value;
      if (!isText(value) || value.trim() === '')
        issues.push({ field: `${at}.Value`, message: 'must be a non-empty string' });
      else if (seen.has(value))
        issues.push({ field: `${at}.Value`, message: `"${value}" is used by another option` });
      else seen.add(value);
      const amount = option.Amount ?? 0;
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0)
        issues.push({ field: `${at}.Amount`, message: 'must be a number of 0 or more' });
      options.push({ Display: option.Display, Value: value as string, Amount: amount });
    });
  }
  if (issues.length > 0) fail(step, issues);
  return { ...screenOf(step, 'select', prompt, next), options };
}

/** Checks a cart item; returns a copy holding only the contract's fields. */
export function checkCartItem(step: string, message: unknown, item: CartItem): CartItem {
  const issues: ValidationIssue[] = [];
  if (!isText(message)) issues.push({ field: 'message', message: 'must be a string' });
  if (!item || typeof item !== 'object')
    fail(step, [...issues, { field: 'item', message: 'must be an object' }]);
  if (!isText(item.ItemName) || item.ItemName.trim() === '')
    issues.push({ field: 'item.ItemName', message: 'must be a non-empty string' });
  if (typeof item.Qty !== 'number' || !Number.isInteger(item.Qty) || item.Qty < 1)
    issues.push({ field: 'item.Qty', message: 'must be a whole number of 1 or more' });
  if (typeof item.Price !== 'number' || !Number.isFinite(item.Price) || item.Price <= 0)
    issues.push({ field: 'item.Price', message: 'must be a number above 0' });
  if (item.ServiceData !== undefined) {
    if (
      item.ServiceData === null ||
      typeof item.ServiceData !== 'object' ||
      Array.isArray(item.ServiceData)
    ) {
      issues.push({ field: 'item.ServiceData', message: 'must be a plain object' });
    } else {
      try {
        JSON.stringify(item.ServiceData);
      } catch {
        issues.push({ field: 'item.ServiceData', message: 'must be JSON-serialisable' });
      }
    }
  }
  if (issues.length > 0) fail(step, issues);
  const copy: CartItem = { ItemName: item.ItemName, Qty: item.Qty, Price: item.Price };
  if (item.ServiceData !== undefined)
    copy.ServiceData = JSON.parse(JSON.stringify(item.ServiceData)) as Record<string, unknown>;
  return copy;
}
