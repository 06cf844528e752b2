#!/usr/bin/env node
// The exported names of each public entry point, read from libs/*/src with the TypeScript
// compiler API (no build needed). test/api/public-api.spec.ts compares them with the snapshots in
// test/api/<entry>.api.txt, so that widening or narrowing the API is a deliberate change:
//   node scripts/api-names.mjs            print the count per entry point
//   node scripts/api-names.mjs --list     print every name with its kind
//   node scripts/api-names.mjs --update   rewrite the snapshots (npm run api:update)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const snapshotDir = path.join(repoRoot, 'test', 'api');

/** Every entry point: its package specifier, its source file, and its snapshot's file name. */
export const ENTRY_POINTS = [
  { name: 'nestjs-hubtel', file: 'libs/core/src/index.ts', snapshot: 'core.api.txt' },
  { name: '#internal', file: 'libs/core/src/internal.ts', snapshot: 'internal.api.txt' },
  { name: 'nestjs-hubtel/sms', file: 'libs/sms/src/index.ts', snapshot: 'sms.api.txt' },
  { name: 'nestjs-hubtel/checkout', file: 'libs/checkout/src/index.ts', snapshot: 'checkout.api.txt' },
  {
    name: 'nestjs-hubtel/service-app',
    file: 'libs/service-app/src/index.ts',
    snapshot: 'service-app.api.txt',
  },
  { name: 'nestjs-hubtel/sandbox', file: 'libs/sandbox/src/index.ts', snapshot: 'sandbox.api.txt' },
  { name: 'nestjs-hubtel/testing', file: 'libs/testing/src/index.ts', snapshot: 'testing.api.txt' },
  { name: 'nestjs-hubtel/redis', file: 'libs/redis/src/index.ts', snapshot: 'redis.api.txt' },
  { name: 'nestjs-hubtel/bullmq', file: 'libs/bullmq/src/index.ts', snapshot: 'bullmq.api.txt' },
  { name: 'nestjs-hubtel/health', file: 'libs/health/src/index.ts', snapshot: 'health.api.txt' },
  { name: 'nestjs-hubtel/metrics', file: 'libs/metrics/src/index.ts', snapshot: 'metrics.api.txt' },
].filter((entry) => fs.existsSync(path.join(repoRoot, entry.file)));

function kindOf(symbol) {
  const f = ts.SymbolFlags;
  const flags = symbol.flags;
  if (flags & f.Class) return 'class';
  if (flags & f.Enum) return 'enum';
  if (flags & f.Function) return 'function';
  if (flags & f.Variable) {
    // getCombinedNodeFlags also sees the `const` of a destructuring (`export const { A } = ...`).
    const decl = symbol.valueDeclaration;
    return decl && ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Const ? 'const' : 'let';
  }
  if (flags & f.Interface) return 'interface';
  if (flags & f.TypeAlias) return 'type';
  if (flags & (f.ValueModule | f.NamespaceModule)) return 'namespace';
  return 'unknown';
}

/** True when the name reaches the entry point only as a type (`export type {...}`, `export type *`). */
function typeOnly(checker, symbol) {
  for (let s = symbol; s.flags & ts.SymbolFlags.Alias; s = checker.getImmediateAliasedSymbol(s) ?? s) {
    for (const decl of s.declarations ?? []) {
      if (ts.isTypeOnlyImportOrExportDeclaration?.(decl)) return true;
      if (ts.isExportSpecifier(decl) && (decl.isTypeOnly || decl.parent.parent.isTypeOnly)) return true;
    }
    if (!checker.getImmediateAliasedSymbol(s)) break;
  }
  return false;
}

/**
 * Reads every entry point and returns, per entry, its sorted `kind name` lines. A class or const
 * that only reaches the entry through `export type` is listed as `type-only class` and so on.
 */
export function readApi() {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(repoRoot, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  const roots = ENTRY_POINTS.map((e) => path.join(repoRoot, e.file));
  const program = ts.createProgram({ rootNames: roots, options: { ...config.options, noEmit: true } });
  const checker = program.getTypeChecker();
  const result = {};
  for (const entry of ENTRY_POINTS) {
    const source = program.getSourceFile(path.join(repoRoot, entry.file));
    const moduleSymbol = source && checker.getSymbolAtLocation(source);
    if (!moduleSymbol) throw new Error(`${entry.file}: not a module`);
    const lines = checker.getExportsOfModule(moduleSymbol).map((exported) => {
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const kind = kindOf(target);
      const valueKind = ['class', 'enum', 'function', 'const', 'let', 'namespace'].includes(kind);
      return `${valueKind && typeOnly(checker, exported) ? `type-only ${kind}` : kind} ${exported.name}`;
    });
    result[entry.name] = lines.sort(
      (a, b) => a.split(' ').pop().localeCompare(b.split(' ').pop()) || a.localeCompare(b),
    );
  }
  return result;
}

export function snapshotText(lines) {
  return `${lines.join('\n')}\n`;
}

export function readSnapshot(entry) {
  const file = path.join(snapshotDir, entry.snapshot);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const api = readApi();
  const mode = process.argv[2];
  if (mode === '--update') {
    fs.mkdirSync(snapshotDir, { recursive: true });
    for (const entry of ENTRY_POINTS) {
      fs.writeFileSync(path.join(snapshotDir, entry.snapshot), snapshotText(api[entry.name]));
      console.log(
        `${path.relative(repoRoot, path.join(snapshotDir, entry.snapshot))}: ${api[entry.name].length} names`,
      );
    }
  } else {
    let total = 0;
    for (const entry of ENTRY_POINTS) {
      const lines = api[entry.name];
      total += lines.length;
      console.log(`${entry.name.padEnd(28)} ${String(lines.length).padStart(4)}`);
      if (mode === '--list') for (const line of lines) console.log(`  ${line}`);
    }
    console.log(`${'total'.padEnd(28)} ${String(total).padStart(4)}`);
  }
}
