/** A step's prompt checked and stored as a screen (shared between sessions and frozen). */
import { isDeepStrictEqual } from 'node:util';
import type { ValidationIssue } from 'nestjs-hubtel';
import type { SelectOption } from '../service-app.types.js';
import type { ServiceFlowDefinition } from '../service-flow.context.js';
import type { InputPrompt, SelectPrompt, StoredScreen, StoredValidation } from '../service-flow.types.js';
import { fail, optionValue } from './service-flow.responses.js';

type Reply = { kind: 'input'; prompt: InputPrompt } | { kind: 'select'; prompt: SelectPrompt };

/** Checks a prompt (a flow bug is named to the developer, never sent); a select's options, normalised. */
function checkPrompt(step: string, reply: Reply, checkOptions: boolean): SelectOption[] | undefined {
  const issues: ValidationIssue[] = [];
  const bad = (field: string, message: string) => void issues.push({ field, message });
  const prompt = reply.prompt;
  if (typeof prompt?.message !== 'string') bad('message', 'must be a string');
  if (prompt?.label !== undefined && typeof prompt.label !== 'string') bad('label', 'must be a string');
  for (const field of ['name', 'fieldType'] as const) {
    const value = prompt?.[field];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === ''))
      bad(field, 'must be a non-empty string');
  }
  let options: SelectOption[] | undefined;
  if (reply.kind === 'input') {
    const validation = reply.prompt?.validation;
    if (validation !== undefined && (validation === null || typeof validation !== 'object'))
      bad('validation', 'must be an object');
  } else if (!checkOptions) {
    // The options were found equal to checked ones (ScreenCache): only the rest is checked.
  } else if (!Array.isArray(reply.prompt?.options) || reply.prompt.options.length === 0) {
    bad('options', 'must be a non-empty array');
  } else {
    const seen = new Set<string>();
    options = [];
    reply.prompt.options.forEach((option, index) => {
      const at = `options[${index}]`;
      if (!option || typeof option !== 'object') return bad(at, 'must be an object');
      if (typeof option.Display !== 'string') bad(`${at}.Display`, 'must be a string');
      const value = optionValue(option.Value);
      if (typeof value !== 'string' || value.trim() === '') bad(`${at}.Value`, 'must be a non-empty string');
      else if (seen.has(value)) bad(`${at}.Value`, `"${value}" is used by another option`);
      else seen.add(value);
      const amount = option.Amount ?? 0;
      if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0)
        bad(`${at}.Amount`, 'must be a number of 0 or more');
      options!.push({ Display: option.Display, Value: value as string, Amount: amount });
    });
  }
  if (issues.length > 0) fail(step, issues);
  return options;
}

/** An input prompt's checks as stored: the pattern as source and flags, so it survives JSON. */
function storedValidation(reply: Reply): StoredValidation | undefined {
  if (reply.kind !== 'input' || !reply.prompt.validation) return undefined;
  const { pattern, ...copy } = reply.prompt.validation;
  if (pattern === undefined) return copy;
  const regex = typeof pattern === 'string' ? new RegExp(pattern) : pattern;
  // `g`/`y` make RegExp#test stateful; drop them so a stored pattern always tests the same way.
  return { ...copy, pattern: { source: regex.source, flags: regex.flags.replace(/[gy]/g, '') } };
}

/** One frozen screen per flow step, shared: a prompt equal to the last one reuses it, checks skipped. */
export class ScreenCache {
  private readonly flows = new Map<ServiceFlowDefinition, Map<string, StoredScreen>>();

  /** The stored form of a step's input or select prompt (throws on a bad prompt). */
  screen(flow: ServiceFlowDefinition, step: string, reply: Reply, next: string | undefined): StoredScreen {
    let steps = this.flows.get(flow);
    if (!steps) this.flows.set(flow, (steps = new Map()));
    const last = steps.get(step);
    const { kind, prompt } = reply;
    const same =
      last?.kind === kind &&
      (reply.kind === 'input'
        ? sameValidation(reply, last.validation)
        : sameOptions(reply.prompt?.options, last.options!));
    if (same && sameHead(last, step, prompt, next)) return last;
    const options = checkPrompt(step, reply, !same);
    // Every field present, in one order (one shape for V8); frozen: every session showing it shares it.
    const screen: StoredScreen = {
      step,
      kind,
      message: prompt.message,
      label: prompt.label ?? prompt.message,
      fieldType: prompt.fieldType ?? 'text',
      field: prompt.name ?? step,
      next,
      options: same ? last.options : options && Object.freeze(options.map((o) => Object.freeze(o))),
      validation: same ? last.validation : freezeValidation(storedValidation(reply)),
    };
    steps.set(step, Object.freeze(screen));
    return screen;
  }
}

function freezeValidation(validation: StoredValidation | undefined): StoredValidation | undefined {
  if (validation?.pattern) Object.freeze(validation.pattern);
  return validation && Object.freeze(validation);
}

/** The fields every prompt has, compared with how they are stored (undefined = default). */
function sameHead(
  screen: StoredScreen,
  step: string,
  prompt: InputPrompt | SelectPrompt,
  next: string | undefined,
): boolean {
  if (!prompt || typeof prompt !== 'object') return false;
  const { message, label, fieldType, name } = prompt;
  return (
    screen.message === message &&
    screen.label === (label === undefined ? message : label) &&
    screen.fieldType === (fieldType === undefined ? 'text' : fieldType) &&
    screen.field === (name === undefined ? step : name) &&
    screen.next === next
  );
}

function sameOptions(options: unknown, stored: readonly SelectOption[]): boolean {
  if (!Array.isArray(options) || options.length !== stored.length) return false;
  return stored.every((kept, i) => {
    const option: unknown = options[i];
    if (!option || typeof option !== 'object') return false;
    const { Display, Value, Amount } = option as SelectPrompt['options'][number];
    return Display === kept.Display && optionValue(Value) === kept.Value && (Amount ?? 0) === kept.Amount;
  });
}

function sameValidation(reply: Reply, stored: StoredScreen['validation']): boolean {
  const validation: unknown = reply.kind === 'input' ? reply.prompt?.validation : undefined;
  if (validation === undefined || stored === undefined) return validation === stored;
  if (validation === null || typeof validation !== 'object') return false;
  try {
    return isDeepStrictEqual(storedValidation(reply), stored);
  } catch {
    return false; // a bad pattern: checked (and named) by the slow path
  }
}
