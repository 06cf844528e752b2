// Types of bench/loader/entry.mjs, for test/support/multi-process.ts and bench/lib/ipc.ts.
/** The node arguments (before the program's own) that run `file`, a `.ts` path. */
export function tsNodeArgs(file: string): string[];
