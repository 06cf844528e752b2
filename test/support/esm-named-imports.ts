/**
 * Every named import of a package (a bare specifier) in an ES module build, read with the
 * TypeScript parser: what Node's ESM loader must find as a named export of that package. For a
 * CommonJS package Node finds only what its static analysis (cjs-module-lexer) detects, which
 * differs between versions of one package: the packaging test checks this list against each
 * fixture's installed versions (test/support/esm-import-check.mjs).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import ts from 'typescript';

export async function namedImportsOf(dir: string): Promise<Record<string, string[]>> {
  const found = new Map<string, Set<string>>();
  const files = (await fs.readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => path.join(e.parentPath, e.name));
  for (const file of files) {
    const source = ts.createSourceFile(file, await fs.readFile(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const from =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
        statement.moduleSpecifier &&
        ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier.text
          : undefined;
      if (!from || from.startsWith('.') || from.startsWith('node:')) continue;
      const names = found.get(from) ?? new Set<string>();
      found.set(from, names);
      if (ts.isImportDeclaration(statement)) {
        const bindings = statement.importClause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings))
          for (const el of bindings.elements)
            if (!el.isTypeOnly) names.add((el.propertyName ?? el.name).text);
        if (statement.importClause?.name) names.add('default');
      } else if (
        ts.isExportDeclaration(statement) &&
        statement.exportClause &&
        ts.isNamedExports(statement.exportClause)
      ) {
        for (const el of statement.exportClause.elements)
          if (!el.isTypeOnly) names.add((el.propertyName ?? el.name).text);
      }
    }
  }
  return Object.fromEntries([...found].sort().map(([k, v]) => [k, [...v].sort()]));
}
