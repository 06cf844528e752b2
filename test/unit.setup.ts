/**
 * The unit layer's one rule, kept by itself (jest.config.js, setupFilesAfterEnv of `unit`): a
 * `*.spec.ts` starts no process. Starting one (redis-server, a child app, npm, a browser) throws
 * here, so the spec fails and says where it belongs: an end-to-end spec, `test/*.e2e-spec.ts`.
 *
 * Every way to start a process ends in ChildProcess#spawn (spawn, fork, exec, execFile) or in one
 * of the three *Sync functions, so those four are refused for the duration of the spec file.
 * The module object is the worker's own, shared with the e2e files that run after this one in the
 * same worker: everything is put back in afterAll.
 */
import type * as ChildProcessModule from 'node:child_process';
import { createRequire } from 'node:module';

// Required, not imported: an import here would fix the module's named exports for this file's
// imports before they are replaced below (Jest builds them once per file, at the first import).
const childProcess = createRequire(import.meta.url)('node:child_process') as typeof ChildProcessModule;

export class UnitSpecStartedProcessError extends Error {
  readonly code = 'UNIT_SPEC_STARTED_PROCESS';
  constructor(command: unknown) {
    super(
      `A unit spec (*.spec.ts) starts no process, yet this one ran ${JSON.stringify(String(command))}. ` +
        'A spec that needs a process is an end-to-end spec: test/<name>.e2e-spec.ts (jest.config.js).',
    );
  }
}

const proto = childProcess.ChildProcess.prototype as unknown as {
  spawn(options: { file?: string }): unknown;
};
const saved = {
  spawn: proto.spawn,
  spawnSync: childProcess.spawnSync,
  execSync: childProcess.execSync,
  execFileSync: childProcess.execFileSync,
};
const refuse = (command: unknown): never => {
  throw new UnitSpecStartedProcessError(command);
};
proto.spawn = (options) => refuse(options?.file);
Object.assign(childProcess, {
  spawnSync: refuse,
  execSync: refuse,
  execFileSync: refuse,
});

afterAll(() => {
  proto.spawn = saved.spawn;
  Object.assign(childProcess, {
    spawnSync: saved.spawnSync,
    execSync: saved.execSync,
    execFileSync: saved.execFileSync,
  });
});
