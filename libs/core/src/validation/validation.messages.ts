import type { ValidationArguments } from 'class-validator';

/*
 * Error messages must read exactly as class-validator writes them (users match on them, docs show
 * them). class-validator does not export its token replacement, so these two functions repeat
 * `constraintToString` and `ValidationUtils.replaceMessageSpecialTokens` of class-validator 0.14/0.15
 * step for step, including their quirks (`$constraint1` also matching `$constraint10`, `$value`
 * only for primitives, String.replace patterns in values).
 */

function constraintToString(constraint: unknown): string {
  if (Array.isArray(constraint)) return constraint.join(', ');
  if (typeof constraint === 'symbol') return `${constraint.description}`;
  return `${constraint as string}`;
}

export function replaceMessageTokens(
  message: string | ((args: ValidationArguments) => string) | undefined,
  args: ValidationArguments,
): string | undefined {
  let text: string | undefined;
  if (message instanceof Function) text = message(args);
  else if (typeof message === 'string') text = message;
  if (text && Array.isArray(args.constraints)) {
    args.constraints.forEach((constraint: unknown, index: number) => {
      text = text!.replace(new RegExp(`\\$constraint${index + 1}`, 'g'), constraintToString(constraint));
    });
  }
  const value: unknown = args.value;
  if (
    text &&
    value !== undefined &&
    value !== null &&
    ['string', 'boolean', 'number'].includes(typeof value)
  ) {
    text = text.replace(/\$value/g, value as string);
  }
  if (text) text = text.replace(/\$property/g, args.property);
  if (text) text = text.replace(/\$target/g, args.targetName);
  return text;
}

/** Message for an issue the compiler adds on its own (not a class-validator constraint). */
export const ROOT_NOT_OBJECT = (received: string): string =>
  `request body must be a JSON object (received ${received})`;

export const TOO_DEEP = (maxDepth: number): string =>
  `value is nested deeper than the allowed ${maxDepth} levels`;

export const FALLBACK_FAILED = 'value could not be validated';

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
