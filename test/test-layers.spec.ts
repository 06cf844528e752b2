import { exec, execFile, execFileSync, execSync, fork, spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

/*
 * The two layers of the suite (jest.config.js): unit specs (`*.spec.ts`) start no process, and
 * everything that does is an end-to-end spec under test/ (`*.e2e-spec.ts`).
 */

const root = new URL('..', import.meta.url);

/** What a unit spec gets when it tries to start a process (test/layers.setup.ts). */
function refusal(start: () => unknown): unknown {
  try {
    start();
  } catch (error) {
    return { code: (error as { code?: unknown }).code, message: (error as Error).message };
  }
  return 'started';
}

describe('test layers', () => {
  it('a unit spec cannot start a process, by any of the child_process functions', () => {
    const node = process.execPath;
    const starts: Record<string, () => unknown> = {
      spawn: () => spawn(node, ['-e', '0']),
      fork: () => fork('-e', ['0']),
      exec: () => exec(`"${node}" -e 0`),
      execFile: () => execFile(node, ['-e', '0']),
      spawnSync: () => spawnSync(node, ['-e', '0']),
      execSync: () => execSync(`"${node}" -e 0`),
      execFileSync: () => execFileSync(node, ['-e', '0']),
    };
    for (const [name, start] of Object.entries(starts)) {
      expect({ [name]: refusal(start) }).toEqual({
        [name]: {
          code: 'UNIT_SPEC_STARTED_PROCESS',
          message: expect.stringContaining('test/<name>.e2e-spec.ts'),
        },
      });
    }
  });

  it('end-to-end specs live under test/ (the e2e layer looks nowhere else)', () => {
    const stray = ['libs', 'src', 'bench'].flatMap((dir) =>
      readdirSync(new URL(`${dir}/`, root), { recursive: true })
        .map(String)
        .filter((file) => file.endsWith('.e2e-spec.ts') && !file.includes('node_modules'))
        .map((file) => `${dir}/${file}`),
    );
    expect(stray).toEqual([]);
  });
});
