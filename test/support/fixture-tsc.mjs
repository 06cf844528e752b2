// `node fixture-tsc.mjs <tsconfig> [--noEmit]` in a fixture app (test/packaging.e2e-spec.ts): the
// fixture's own TypeScript compiles its project as `tsc -p` does, and reports what tsc reports for
// the app's files and for nestjs-hubtel's declarations, which skipLibCheck: false checks in full.
// Other packages' declaration files (Nest's, Node's, ...) are read for the types the app and ours
// use but not checked from end to end: they are not this package's, and checking them was two
// thirds of each compile.
import { createRequire } from 'node:module';
import path from 'node:path';

const [project, ...flags] = process.argv.slice(2);
const ts = createRequire(path.join(process.cwd(), 'package.json'))('typescript');
const diagnostics = [];
const config = ts.getParsedCommandLineOfConfigFile(
  project,
  flags.includes('--noEmit') ? { noEmit: true } : {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => diagnostics.push(d) },
);
if (config) {
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: config.options,
    projectReferences: config.projectReferences,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
  const checked = program
    .getSourceFiles()
    .filter((f) => !/[\\/]node_modules[\\/](?!nestjs-hubtel[\\/])/.test(f.fileName));
  const perFile = checked.flatMap((f) => [
    ...program.getSyntacticDiagnostics(f),
    ...program.getSemanticDiagnostics(f),
  ]);
  // File by file: emitting every file at once would first check every file, theirs included.
  const emitted = config.options.noEmit
    ? []
    : checked.filter((f) => !f.isDeclarationFile).flatMap((f) => program.emit(f).diagnostics);
  // Global diagnostics last: the checker collects them while it checks.
  diagnostics.push(
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...perFile,
    ...emitted,
    ...program.getGlobalDiagnostics(),
  );
  // What the check covered, for the test to see that our declarations were among it.
  console.log(
    `checked ${checked.filter((f) => /[\\/]nestjs-hubtel[\\/]/.test(f.fileName)).length} declaration files of nestjs-hubtel`,
  );
}
const errors = diagnostics.filter((d) => d.category === ts.DiagnosticCategory.Error);
if (errors.length) {
  const host = {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => '\n',
  };
  process.stderr.write(ts.formatDiagnostics(errors, host));
  process.exit(1);
}
