// Types of scripts/api-names.mjs, for test/api/public-api.spec.ts.
export interface EntryPoint {
  name: string;
  file: string;
  snapshot: string;
}
export const repoRoot: string;
export const snapshotDir: string;
export const ENTRY_POINTS: EntryPoint[];
/** Per entry point name, its sorted `kind name` lines. */
export function readApi(): Record<string, string[]>;
export function snapshotText(lines: string[]): string;
export function readSnapshot(entry: EntryPoint): string | undefined;
