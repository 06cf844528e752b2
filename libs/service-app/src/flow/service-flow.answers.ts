import { tryNormalizeMsisdn } from 'nestjs-hubtel';
import type { ServiceAppMessages } from '../service-app.constants.js';
import type { SelectOption } from '../service-app.types.js';
import type { FlowValue, StoredScreen } from '../service-flow.types.js';

export type AnswerCheck =
  { ok: true; value: FlowValue; option?: SelectOption } | { ok: false; reason: string };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const WHOLE = /^\d+$/;
const DECIMAL = /^(\d+(\.\d+)?|\.\d+)$/;

function fill(template: string, values: Record<string, number | undefined>): string {
  return template.replace(/\{(\w+)\}/g, (match, key: string) =>
    values[key] === undefined ? match : String(values[key]),
  );
}

/** An entry checked by FieldType (`phone` normalised) and `validation`, or as an option's Value, any case. */
export function checkAnswer(
  screen: StoredScreen,
  raw: string,
  messages: ServiceAppMessages,
  countryCode: string,
): AnswerCheck {
  if (screen.kind === 'select') {
    const options = screen.options ?? [];
    const option =
      options.find((o) => o.Value === raw) ??
      options.find((o) => o.Value.toLowerCase() === raw.toLowerCase());
    return option ? { ok: true, value: option.Value, option } : { ok: false, reason: messages.select };
  }

  const rules = screen.validation ?? {};
  const reject = (reason: string): AnswerCheck => ({ ok: false, reason: rules.message ?? reason });

  if (raw === '') return rules.required === false ? { ok: true, value: '' } : reject(messages.required);
  if (rules.minLength !== undefined && raw.length < rules.minLength)
    return reject(fill(messages.tooShort, { min: rules.minLength }));
  if (rules.maxLength !== undefined && raw.length > rules.maxLength)
    return reject(fill(messages.tooLong, { max: rules.maxLength }));
  if (rules.pattern && !new RegExp(rules.pattern.source, rules.pattern.flags).test(raw))
    return reject(messages.pattern);

  let value: FlowValue = raw;
  const type = screen.fieldType.toLowerCase();
  switch (type) {
    case 'phone': {
      const result = tryNormalizeMsisdn(raw, countryCode);
      if (!result.ok) return reject(messages.phone);
      value = result.msisdn;
      break;
    }
    case 'number':
    case 'decimal': {
      const compact = raw.replace(/[\s,]/g, '');
      const [form, fits] = type === 'number' ? [WHOLE, Number.isSafeInteger] : [DECIMAL, Number.isFinite];
      if (!form.test(compact) || !fits(Number(compact))) return reject(messages[type]);
      value = Number(compact);
      break;
    }
    case 'email':
      if (!EMAIL.test(raw)) return reject(messages.email);
  }
  if (typeof value === 'number') {
    if (rules.min !== undefined && value < rules.min)
      return reject(fill(messages.tooSmall, { min: rules.min }));
    if (rules.max !== undefined && value > rules.max)
      return reject(fill(messages.tooLarge, { max: rules.max }));
  }
  return { ok: true, value };
}
