import { HubtelValidationError, type ValidationIssue } from '../errors/hubtel.errors.js';
import { capLogText } from '../logging/log-sanitize.js';
import type { CompiledValidator } from '../validation/validation.ajv.js';

/** Keys that can reach an object's prototype when copied onto it: never part of a platform body. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Deepest nesting of objects and arrays accepted (the platform's bodies are 2–4 deep). */
const MAX_DEPTH = 8;
/** Most objects and arrays accepted in one body. */
const MAX_NODES = 2_000;
/** Longest `field` path named in a refusal (the keys on the way are the sender's, of any length). */
const MAX_FIELD_LENGTH = 256;
/** Put by the JSON parsers for invalid UTF-8: "ord-\xff" and "ord-\xfe" would arrive as one reference. */
const REPLACEMENT_CHARACTER = '\uFFFD';
/** False for a lone surrogate (`"\ud800"` in JSON): in UTF-8 every one becomes U+FFFD, two ids as one. */
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * Why a parsed body must be refused before DTO validation (which ignores unknown keys): a prototype
 * key, far too deep or large, invalid UTF-8 or a lone surrogate. Iterative: no stack to blow.
 */
export function findHostileStructure(body: unknown): ValidationIssue | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  // Every inbound request runs this: only objects and arrays are stacked and get a path.
  const values: object[] = [body];
  const paths: string[] = [''];
  const depths: number[] = [0];
  let nodes = 0;
  while (values.length > 0) {
    const value = values.pop()!;
    const path = paths.pop()!;
    const depth = depths.pop()!;
    if (++nodes > MAX_NODES) return refusal(path, `body has more than ${MAX_NODES} objects and arrays`);
    if (depth >= MAX_DEPTH) return refusal(path, `body is nested deeper than ${MAX_DEPTH} levels`);
    for (const key of Object.keys(value)) {
      if (PROTOTYPE_KEYS.has(key))
        return refusal(path ? `${path}.${key}` : key, `key "${key}" is not allowed`);
      const child = (value as Record<string, unknown>)[key];
      if (
        key.includes(REPLACEMENT_CHARACTER) ||
        (typeof child === 'string' && child.includes(REPLACEMENT_CHARACTER))
      )
        return refusal(path ? `${path}.${key}` : key, 'body is not valid UTF-8 (or holds U+FFFD)');
      if (!isWellFormed(key) || (typeof child === 'string' && !isWellFormed(child)))
        return refusal(
          path ? `${path}.${key}` : key,
          'body is not valid UTF-8 (holds a lone surrogate such as \\ud800)',
        );
      if (child !== null && typeof child === 'object') {
        values.push(child);
        paths.push(path ? `${path}.${key}` : key);
        depths.push(depth + 1);
      }
    }
  }
  return undefined;
}

function refusal(path: string, message: string): ValidationIssue {
  return { field: capLogText(path || '(body)', MAX_FIELD_LENGTH), message };
}

/**
 * The request a body holds, or a HubtelValidationError. Prototype keys and absurd nesting are refused,
 * not dropped: Express keeps `"__proto__"` where Fastify refuses it, so both answer the same 400.
 */
export function parseInbound<T>(validate: CompiledValidator<T>, body: unknown, what: string): T {
  const hostile = findHostileStructure(body);
  const checked = hostile ? { ok: false as const, issues: [hostile] } : validate(body);
  if (!checked.ok)
    throw new HubtelValidationError(
      `Invalid ${what}: ${checked.issues.map((i) => i.message).join('; ')}`,
      checked.issues,
    );
  return checked.value;
}
