/** A step's prompt checked and stored as a screen (shared between sessions and frozen). */
import type { ValidationIssue } from 'nestjs-hubtel';
import type { SelectOption } from '../service-app.types.js';
import type { ServiceFlowDefinition } from '../service-flow.context.js';
import type { InputPrompt, SelectPrompt, StoredScreen, StoredValidation } from '../service-flow.types.js';
import { fail, isText, optionValue } from './service-flow.responses.js';

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

/** A checked prompt as stored, every field present (one shape for V8). */
function screenOf(
  step: string,
  kind: StoredScreen['kind'],
  prompt: InputPrompt | SelectPrompt,
  next: string | undefined,
  options: readonly SelectOption[] | undefined,
  validation: StoredScreen['validation'],
): StoredScreen {
  return {
    step,
    kind,
    message: prompt.message,
    label: prompt.label ?? prompt.message,
    fieldType: prompt.fieldType ?? 'text',
    field: prompt.name ?? step,
    next,
    options,
    validation,
  };
}

function inputScreen(step: string, prompt: InputPrompt, next: string | undefined): StoredScreen {
  const issues: ValidationIssue[] = [];
  checkPrompt(prompt, issues);
  const validation = prompt?.validation;
  if (validation !== undefined && (validation === null || typeof validation !== 'object'))
    issues.push({ field: 'validation', message: 'must be an object' });
  if (issues.length > 0) fail(step, issues);
  let stored: StoredScreen['validation'];
  if (validation) {
    const { pattern, ...rest } = validation;
    const copy: StoredValidation = { ...rest };
    if (pattern !== undefined) {
      const regex = typeof pattern === 'string' ? new RegExp(pattern) : pattern;
      // `g`/`y` make RegExp#test stateful; drop them so a stored pattern always tests the same way.
      copy.pattern = { source: regex.source, flags: regex.flags.replace(/[gy]/g, '') };
    }
    stored = copy;
  }
  return screenOf(step, 'input', prompt, next, undefined, stored);
}

/** Checks a select prompt; returns its options, normalised. */
function checkSelect(step: string, prompt: SelectPrompt, checkOptions = true): SelectOption[] {
  const issues: ValidationIssue[] = [];
  checkPrompt(prompt, issues);
  const options: SelectOption[] = [];
  if (!checkOptions) {
    // The options were found equal to checked ones (ScreenCache): only the rest is checked.
  } else if (!Array.isArray(prompt?.options) || prompt.options.length === 0) {
    issues.push({ field: 'options', message: 'must be a non-empty array' });
  } else {
    const seen = new Set<string>();
    prompt.options.forEach((option, index) => {
      const at = `options[${index}]`;
      if (!option || typeof option !== 'object')
        return void issues.push({ field: at, message: 'must be an object' });
      if (!isText(option.Display)) issues.push({ field: `${at}.Display`, message: 'must be a string' });
      const value = optionValue(option.Value);
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
  return options;
}

/**
 * Shares stored screens between sessions: a prompt equal to its step's last screen gets that frozen
 * screen (equal options: the same options), its checks skipped. One screen per step of each flow.
 */
export class ScreenCache {
  private readonly flows = new Map<ServiceFlowDefinition, Map<string, StoredScreen>>();

  /** The stored form of a step's input or select prompt (throws on a bad prompt). */
  screen(
    flow: ServiceFlowDefinition,
    step: string,
    reply: { kind: 'input'; prompt: InputPrompt } | { kind: 'select'; prompt: SelectPrompt },
    next: string | undefined,
  ): StoredScreen {
    let steps = this.flows.get(flow);
    if (!steps) this.flows.set(flow, (steps = new Map()));
    const last = steps.get(step);
    let screen: StoredScreen;
    if (reply.kind === 'input') {
      if (
        last?.kind === 'input' &&
        sameHead(last, step, reply.prompt, next) &&
        sameValidation(reply.prompt.validation, last.validation)
      )
        return last;
      screen = inputScreen(step, reply.prompt, next);
    } else {
      if (last?.kind === 'select' && sameOptions(reply.prompt?.options, last.options!)) {
        if (sameHead(last, step, reply.prompt, next)) return last;
        checkSelect(step, reply.prompt, false);
        screen = screenOf(step, 'select', reply.prompt, next, last.options, undefined);
        steps.set(step, Object.freeze(screen));
        return screen;
      }
      screen = screenOf(step, 'select', reply.prompt, next, checkSelect(step, reply.prompt), undefined);
    }
    steps.set(step, deepFreeze(screen));
    return screen;
  }
}

/** The fields every prompt has, compared with how screenOf stores them (undefined = default). */
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
  for (let i = 0; i < stored.length; i++) {
    const option: unknown = options[i];
    if (!option || typeof option !== 'object') return false;
    const { Display, Value, Amount } = option as SelectPrompt['options'][number];
    const kept = stored[i]!;
    if (Display !== kept.Display || optionValue(Value) !== kept.Value || (Amount ?? 0) !== kept.Amount)
      return false;
  }
  return true;
}

function sameValidation(validation: unknown, stored: StoredScreen['validation']): boolean {
  if (validation === undefined || stored === undefined) return validation === stored;
  if (validation === null || typeof validation !== 'object') return false;
  const given = validation as Record<string, unknown>;
  const kept = stored as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(given)) {
    if (key === 'pattern') continue;
    if (!Object.hasOwn(kept, key) || given[key] !== kept[key]) return false;
    count++;
  }
  const pattern = given.pattern;
  const keptPattern = stored.pattern;
  if (Object.keys(kept).length !== count + (keptPattern === undefined ? 0 : 1)) return false;
  if (pattern === undefined || keptPattern === undefined) return pattern === keptPattern;
  if (typeof pattern === 'string') return pattern === keptPattern.source && keptPattern.flags === '';
  return (
    pattern instanceof RegExp &&
    pattern.source === keptPattern.source &&
    pattern.flags.replace(/[gy]/g, '') === keptPattern.flags
  );
}

/** Freezes a screen and what it holds: it is shared by every session showing it. */
function deepFreeze(screen: StoredScreen): StoredScreen {
  if (screen.options) {
    for (const option of screen.options) Object.freeze(option);
    Object.freeze(screen.options);
  }
  if (screen.validation) {
    if (screen.validation.pattern) Object.freeze(screen.validation.pattern);
    Object.freeze(screen.validation);
  }
  return Object.freeze(screen);
}
