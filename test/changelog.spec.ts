/**
 * The release a user upgrades to: CHANGELOG.md has a section for the package's version (and
 * package-lock.json's root entries say the same version), and every "removed in <version>" that a
 * start-up error says names a version whose section lists that option under "Removed".
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const changelog = read('CHANGELOG.md');
const version = (JSON.parse(read('package.json')) as { version: string }).version;

/** The text of one version's section (up to the next `## `). */
function section(v: string): string | undefined {
  const start = changelog.search(
    new RegExp(`^## \\[?${v.replace(/\./g, '\\.')}\\]?( - \\d{4}-\\d{2}-\\d{2})?$`, 'm'),
  );
  if (start < 0) return undefined;
  const rest = changelog.slice(start + 3);
  const end = rest.search(/^## /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The list under `### <heading>` in a section. */
function list(text: string, heading: string): string {
  const start = text.indexOf(`### ${heading}\n`);
  if (start < 0) return '';
  const rest = text.slice(start + heading.length + 5);
  const end = rest.search(/^### /m);
  return end < 0 ? rest : rest.slice(0, end);
}

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

describe('CHANGELOG.md', () => {
  it("names the package's current version, dated, and package-lock.json agrees", () => {
    expect(changelog).toMatch(
      new RegExp(`^## ${version.replace(/\./g, '\\.')} - \\d{4}-\\d{2}-\\d{2}$`, 'm'),
    );
    const lock = JSON.parse(read('package-lock.json')) as {
      version: string;
      packages: Record<string, { version?: string }>;
    };
    expect([lock.version, lock.packages['']!.version]).toEqual([version, version]);
    for (const heading of ['Added', 'Changed', 'Removed', 'Fixed'])
      expect(list(section(version)!, heading).trim()).not.toBe('');
  });

  it('every "removed in <version>" of the sources names a full version whose Removed list names the option', () => {
    const files = sources(path.join(root, 'libs'));
    const versions = new Set<string>();
    for (const file of files)
      for (const [, v] of fs.readFileSync(file, 'utf8').matchAll(/removed in (\d+(?:\.\d+)*)/g))
        versions.add(v!);
    expect(versions.size).toBeGreaterThan(0);
    for (const v of versions) {
      expect(v).toMatch(/^\d+\.\d+\.\d+$/);
      expect(section(v)).toBeDefined();
    }
    // The options refused as removed (core's REMOVED_JOB_OPTIONS), each in its version's list.
    const dto = read('libs/core/src/options/hubtel-options.dto.ts');
    const block = /const REMOVED_JOB_OPTIONS[^{]*\{([\s\S]*?)\n\};/.exec(dto)![1]!;
    const options = [...block.matchAll(/^\s{2}(\w+):/gm)].map((m) => m[1]!);
    expect(options).toEqual(['leaseMs', 'sweepIntervalMs', 'recoverOnBootstrap']);
    const [removedIn] = [...versions];
    for (const option of options) expect(list(section(removedIn!)!, 'Removed')).toContain(`\`${option}\``);
  });
});
