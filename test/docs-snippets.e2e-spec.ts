/**
 * Every ```ts block of the README and the docs compiles as pasted: each block is type-checked
 * as its own module, with the imports it shows and nothing else, by the TypeScript compiler
 * against this repo's sources (`nestjs-hubtel/*` mapped to `libs/*` as tsconfig.json does). A
 * failure names the document and line: `docs/testing.md:154: TS2304 Cannot find name ...`.
 *
 * A block that is a deliberate fragment (a few option lines, a method of a class shown earlier)
 * is marked with `<!-- snippet: partial -->` on the line before its fence and skipped; their
 * number is capped so fragments stay the exception. A block that another one imports (a test
 * importing the app shown above it) is named with `<!-- snippet: app.ts -->`: `./app.js` in any
 * block is then that block, type-checked like the others.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
  'libs/sandbox/README.md',
];
const MARKER = /^<!-- snippet: (\S+) -->$/;
/** At most this many blocks may be marked partial. */
const MAX_PARTIAL = 2;

interface Block {
  document: string;
  /** 1-based line of the block's first code line in the document. */
  line: number;
  code: string;
  partial: boolean;
  /** The file name other blocks import it by (`app.ts` → `./app.js`), if named. */
  name?: string;
}

function extractBlocks(document: string): Block[] {
  const lines = fs.readFileSync(path.join(root, document), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    if (end < 0) throw new Error(`${document}:${i + 1}: unclosed code block`);
    if (fence[2] === 'ts' || fence[2] === 'typescript') {
      const indent = fence[1]!.length;
      const marker = MARKER.exec(lines[i - 1]?.trim() ?? '') ?? MARKER.exec(lines[i - 2]?.trim() ?? '');
      blocks.push({
        document,
        line: i + 2,
        code: lines
          .slice(i + 1, end)
          .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
          .join('\n'),
        partial: marker?.[1] === 'partial',
        ...(marker && marker[1] !== 'partial' ? { name: marker[1] } : {}),
      });
    }
    i = end;
  }
  return blocks;
}

function compilerOptions(): ts.CompilerOptions {
  const configPath = path.join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  return { ...parsed.options, noEmit: true, declaration: false, sourceMap: false, types: ['node', 'jest'] };
}

/** Type-checks the blocks, each as its own module; returns one line per error. */
function typeCheck(blocks: Block[]): string[] {
  const dir = path.join(root, '.docs-snippets');
  const files = new Map<string, Block>();
  blocks.forEach((block, index) => {
    const name = block.name ?? `${block.document.replace(/[\\/]/g, '__')}.L${block.line}.${index}.ts`;
    if (files.has(path.join(dir, name))) throw new Error(`two blocks are named ${name}`);
    files.set(path.join(dir, name), block);
  });
  const options = compilerOptions();
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => files.has(path.resolve(f)) || fileExists.call(host, f);
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (d) =>
    path.resolve(d) === dir || (directoryExists?.(d) ?? ts.sys.directoryExists(d));
  host.readFile = (f) => {
    const block = files.get(path.resolve(f));
    // `export {}` makes every block a module of its own, whatever it imports.
    return block ? `${block.code}\nexport {};\n` : readFile.call(host, f);
  };
  host.getSourceFile = (f, language, onError, create) => {
    const block = files.get(path.resolve(f));
    if (block) return ts.createSourceFile(f, `${block.code}\nexport {};\n`, language, true);
    return getSourceFile.call(host, f, language, onError, create);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  const errors: string[] = [];
  for (const [file, block] of files) {
    const source = program.getSourceFile(file)!;
    const diagnostics = [
      ...program.getSyntacticDiagnostics(source),
      ...program.getSemanticDiagnostics(source),
    ];
    for (const d of diagnostics) {
      const { line } = d.start === undefined ? { line: 0 } : source.getLineAndCharacterOfPosition(d.start);
      errors.push(
        `${block.document}:${block.line + line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
      );
    }
  }
  return errors;
}

describe('docs: every TypeScript block of README.md and docs/*.md compiles as pasted', () => {
  const blocks = DOCUMENTS.flatMap(extractBlocks);
  const partial = blocks.filter((b) => b.partial);

  it('finds the blocks, and only a few are marked partial', () => {
    expect(blocks.length).toBeGreaterThan(30);
    for (const document of ['README.md', 'docs/testing.md', 'docs/checkout.md', 'docs/service-app.md'])
      expect(blocks.some((b) => b.document === document && !b.partial)).toBe(true);
    expect(partial.map((b) => `${b.document}:${b.line}`).length).toBeLessThanOrEqual(MAX_PARTIAL);
  });

  it('type-checks each complete block with its own imports against the sources', () => {
    expect(typeCheck(blocks.filter((b) => !b.partial))).toEqual([]);
  }, 180_000);
});
