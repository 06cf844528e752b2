/**
 * Each entry point's exported names, read from libs/<lib>/src with the TypeScript compiler API
 * (scripts/api-names.mjs), are the ones listed in test/api/<entry>.api.txt. Widening or narrowing
 * the API is then a deliberate change, reviewed in the diff of those files: after one, run
 * `npm run api:update` and commit them.
 */
import {
  ENTRY_POINTS,
  readApi,
  readSnapshot,
  snapshotText,
  type EntryPoint,
} from '../../scripts/api-names.mjs';

function difference(entry: EntryPoint, actual: string[], pinned: string | undefined): string {
  const before = new Set((pinned ?? '').split('\n').filter(Boolean));
  const now = new Set(actual);
  const added = actual.filter((line) => !before.has(line)).map((line) => `  + ${line}`);
  const removed = [...before].filter((line) => !now.has(line)).map((line) => `  - ${line}`);
  return [
    `${entry.name} (${entry.file}) no longer matches test/api/${entry.snapshot}:`,
    ...added,
    ...removed,
    'If this change of the public API is deliberate, run `npm run api:update` and commit test/api/.',
  ].join('\n');
}

describe('public API', () => {
  let api: Record<string, string[]>;
  beforeAll(() => {
    api = readApi();
  }, 120_000);

  it.each(ENTRY_POINTS.map((entry) => [entry.name, entry] as const))(
    '%s exports exactly the names pinned in test/api',
    (_name, entry) => {
      const pinned = readSnapshot(entry);
      const actual = api[entry.name];
      if (pinned !== snapshotText(actual)) throw new Error(difference(entry, actual, pinned));
    },
  );

  it("#internal (the libraries' shared code) shares no name with a public entry point", () => {
    const names = (entry: string) => new Set(api[entry].map((line) => line.split(' ').pop()));
    const internal = names('#internal');
    const clashes = ENTRY_POINTS.filter((e) => e.name !== '#internal').flatMap((e) =>
      [...names(e.name)].filter((name) => internal.has(name)).map((name) => `${e.name}: ${name}`),
    );
    expect(clashes).toEqual([]);
  });
});
