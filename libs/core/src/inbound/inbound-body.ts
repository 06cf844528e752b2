import type { ValidationIssue } from '../errors/hubtel.errors.js';
import { capLogText } from '../logging/log-sanitize.js';

/** Keys that can reach an object's prototype when copied onto it: never part of a platform body. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export interface HostileStructureLimits {
  /** Deepest nesting of objects and arrays accepted. Default 8 (the platform's bodies are 2–4 deep). */
  maxDepth?: number;
  /** Most objects and arrays accepted in one body. Default 2,000. */
  maxNodes?: number;
}

const DEFAULT_MAX_DEPTH = 8;
const DEFAULT_MAX_NODES = 2_000;
/** Longest `field` path named in a refusal (the keys on the way are the sender's, of any length). */
const MAX_FIELD_LENGTH = 256;
/**
 * U+FFFD, what Express's and Fastify's JSON parsers put in place of bytes that are not valid
 * UTF-8. The parsed body no longer holds the bytes, so two different references ("ord-\xff",
 * "ord-\xfe") would arrive as one; the platform never sends the character itself.
 */
const REPLACEMENT_CHARACTER = '\uFFFD';
/**
 * `String.prototype.isWellFormed` (Node 20, typed from ES2024): false for a lone surrogate, which
 * JSON lets a sender write as `"\ud800"`. It is no character at all: encoded to UTF-8 (Redis keys,
 * logs) every lone surrogate becomes the same U+FFFD, so `ord-\ud800` and `ord-\udbff` were one id.
 */
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * Finds the first reason a parsed JSON body must not be validated at all: a key that could pollute
 * a prototype if anything copied it (Express's JSON parser keeps `"__proto__"` as an own key), a
 * structure far deeper or larger than anything the platform sends, or a key or string holding
 * U+FFFD, the mark of a body that was not valid UTF-8, or a lone surrogate (`\ud800` escaped in
 * the JSON), which no UTF-8 can carry. Inbound endpoints call it before
 * their DTO validation, because that validation accepts and ignores unknown keys, and these must
 * be refused, not ignored. Iterative, so a deep body cannot blow the stack.
 */
export function findHostileStructure(
  body: unknown,
  limits: HostileStructureLimits = {},
): ValidationIssue | undefined {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxNodes = limits.maxNodes ?? DEFAULT_MAX_NODES;
  if (body === null || typeof body !== 'object') return undefined;
  // Only objects and arrays are stacked, and a path is only built for those (or for a refusal):
  // every inbound request runs this, so leaves cost a key check (and a string one scan for U+FFFD).
  const values: object[] = [body];
  const paths: string[] = [''];
  const depths: number[] = [0];
  let nodes = 0;
  while (values.length > 0) {
    const value = values.pop()!;
    const path = paths.pop()!;
    const depth = depths.pop()!;
    if (++nodes > maxNodes) return refusal(path, `body has more than ${maxNodes} objects and arrays`);
    if (depth >= maxDepth) return refusal(path, `body is nested deeper than ${maxDepth} levels`);
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
