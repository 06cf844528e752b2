import type { ValidationIssue } from '../errors/hubtel.errors.js';

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

/**
 * Finds the first reason a parsed JSON body must not be validated at all: a key that could pollute
 * a prototype if anything copied it (Express's JSON parser keeps `"__proto__"` as an own key), or a
 * structure far deeper or larger than anything the platform sends. Inbound endpoints call it before
 * their DTO validation, because that validation accepts and ignores unknown keys, and these must
 * be refused, not ignored. Iterative, so a deep body cannot blow the stack.
 */
export function findHostileStructure(
  body: unknown,
  limits: HostileStructureLimits = {},
): ValidationIssue | undefined {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxNodes = limits.maxNodes ?? DEFAULT_MAX_NODES;
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: body, path: '', depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (++nodes > maxNodes)
      return { field: path || '(body)', message: `body has more than ${maxNodes} objects and arrays` };
    if (depth >= maxDepth)
      return { field: path || '(body)', message: `body is nested deeper than ${maxDepth} levels` };
    for (const key of Object.keys(value)) {
      const field = path ? `${path}.${key}` : key;
      if (PROTOTYPE_KEYS.has(key)) return { field, message: `key "${key}" is not allowed` };
      stack.push({ value: (value as Record<string, unknown>)[key], path: field, depth: depth + 1 });
    }
  }
  return undefined;
}
