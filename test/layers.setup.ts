/**
 * The rule of the suite's two layers, kept by itself (jest.config.js, setupFilesAfterEnv of both):
 * a unit spec (`*.spec.ts`) starts no process. One that tries (redis-server, a child app, npm, a
 * browser) gets an error saying where it belongs: an end-to-end spec, `test/*.e2e-spec.ts`.
 *
 * Every way to start a process ends in ChildProcess#spawn (spawn, fork, exec, execFile) or in one
 * of the three *Sync functions. The child_process module is the worker's own, shared by the files
 * it runs one after another, so those four are wrapped once per worker and each file, as it
 * starts, says whether they refuse: no file depends on the one before it having cleaned up.
 */
import type * as ChildProcessModule from 'node:child_process';
import { createRequire } from 'node:module';

// Required, not imported: an import here would fix the module's named exports for this file's
// imports before they are wrapped (Jest builds them once per file, at the first import).
const childProcess = createRequire(import.meta.url)('node:child_process') as typeof ChildProcessModule;

const GUARD = Symbol.for('nestjs-hubtel.test-layers');
type Guarded = Record<string | symbol, unknown> & { [GUARD]?: { refuse: boolean } };
const guarded = childProcess as unknown as Guarded;

if (!guarded[GUARD]) {
  const guard = { refuse: false };
  guarded[GUARD] = guard;
  const check = (command: unknown): void => {
    if (!guard.refuse) return;
    throw Object.assign(
      new Error(
        `A unit spec (*.spec.ts) starts no process, yet this one ran ${JSON.stringify(String(command))}. ` +
          'A spec that needs a process is an end-to-end spec: test/<name>.e2e-spec.ts (jest.config.js).',
      ),
      { code: 'UNIT_SPEC_STARTED_PROCESS' },
    );
  };
  const proto = childProcess.ChildProcess.prototype as unknown as Record<string, unknown>;
  const spawn = proto.spawn as (this: unknown, options?: { file?: string }) => unknown;
  proto.spawn = function (this: unknown, options?: { file?: string }) {
    check(options?.file);
    return spawn.call(this, options);
  };
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const original = guarded[name] as (...args: unknown[]) => unknown;
    guarded[name] = function (this: unknown, ...args: unknown[]) {
      check(args[0]);
      return original.apply(this, args);
    };
  }
}

guarded[GUARD]!.refuse = !String(expect.getState().testPath).endsWith('.e2e-spec.ts');
