import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Each bin answers --help and malformed arguments before it loads its command: what it imports
 * statically (followed through the package's own files) is Node's alone, no Nest, no library of
 * the package. Loading Nest and every library costs a start about 1.7 s of CPU; the command is
 * loaded with `import()` only to run.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { bin } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
};

/** The specifiers of a module's static imports and re-exports (type-only ones are erased). */
function staticSpecifiers(file: string): string[] {
  const code = readFileSync(file, 'utf8');
  const statements = /^(?:import|export)(?!\s+type\b)(?:[^;'"]*?\bfrom)?\s*'([^']+)'/gm;
  return [...code.matchAll(statements)].map((m) => m[1]!);
}

/** What loading `file` loads from outside the package's own relative files, followed transitively. */
function outsideImports(file: string, seen = new Set<string>()): Set<string> {
  const outside = new Set<string>();
  if (seen.has(file)) return outside;
  seen.add(file);
  for (const specifier of staticSpecifiers(file)) {
    // `#light/<lib>`: the part of a library the bins' commands load (libs/<lib>/src/light.ts).
    const light = /^#light\/([a-z-]+)$/.exec(specifier);
    const local = light
      ? path.join(root, 'libs', light[1]!, 'src', 'light.ts')
      : specifier.startsWith('.') && path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts'));
    if (!local) outside.add(specifier);
    else for (const name of outsideImports(local, seen)) outside.add(name);
  }
  return outside;
}

it.each(Object.entries(bin))('%s loads only Node built-ins before it reads its arguments', (_name, built) => {
  // dist/esm/<lib>/cli/<bin>.js is built from libs/<lib>/src/cli/<bin>.ts.
  const [, lib, rest] = /^dist\/esm\/([^/]+)\/(.+)\.js$/.exec(built)!;
  const source = path.join(root, 'libs', lib!, 'src', `${rest}.ts`);
  const loaded = [...outsideImports(source)];
  expect(loaded.filter((name) => !name.startsWith('node:'))).toEqual([]);
  expect(loaded.length).toBeGreaterThan(0); // the parser was followed (node:util)
});

it("hubtel-trigger runs its commands (dead-letters aside) on Node built-ins and the package's light parts only", () => {
  // No Nest, axios or class-validator: each run (docs/dev-tools.md shows seven) starts in a fraction
  // of the time. dead-letters, which opens the app's Redis store, is loaded with `import()`; so is
  // undici (the sandbox's HTTP client), on the first request.
  const loaded = [...outsideImports(path.join(root, 'libs', 'testing', 'src', 'cli', 'trigger.cli.ts'))];
  expect(loaded.filter((name) => !name.startsWith('node:'))).toEqual([]);
});
