import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findExecutable, isCi } from './system.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
// The project's own Jest config (a .js file tsc does not type), so the child transforms alike.
const configUrl = new URL('../../jest.config.js', import.meta.url).href;

interface JestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  testResults: { assertionResults: { title: string; status: string; failureMessages: string[] }[] }[];
}

/** Runs test/fixtures/system/system-usage.spec.ts in a child Jest with the given CI value. */
async function runUsage(ci: string | undefined): Promise<{ report: JestReport; stderr: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'system-helper-'));
  try {
    const { base } = (await import(configUrl)) as { base: Record<string, unknown> };
    const config = {
      ...base,
      rootDir: repoRoot,
      roots: ['<rootDir>/test/fixtures/system'],
      testMatch: ['**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/'],
      modulePathIgnorePatterns: ['<rootDir>/dist/'],
    };
    const env = { ...process.env };
    delete env.CI;
    delete env.JEST_WORKER_ID;
    if (ci !== undefined) env.CI = ci;
    const outputFile = path.join(dir, 'report.json');
    const child = spawn(
      process.execPath,
      [
        '--experimental-vm-modules',
        path.join(repoRoot, 'node_modules/jest/bin/jest.js'),
        '--config',
        JSON.stringify(config),
        '--json',
        `--outputFile=${outputFile}`,
      ],
      { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    await new Promise((resolve) => child.on('close', resolve));
    const report = JSON.parse(await fs.readFile(outputFile, 'utf8')) as JestReport;
    return { report, stderr };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function statuses(report: JestReport): Record<string, string> {
  return Object.fromEntries(
    report.testResults.flatMap((r) => r.assertionResults.map((a) => [a.title, a.status])),
  );
}

describe('test/support/system: tests that need a Debian package', () => {
  it('finds executables by absolute path or on PATH', () => {
    expect(findExecutable(process.execPath)).toBe(process.execPath);
    expect(findExecutable('node')).toMatch(/node$/);
    expect(findExecutable('/nonexistent/bin/no-such-binary')).toBeUndefined();
    expect(findExecutable('no-such-binary-on-path')).toBeUndefined();
  });

  it('reads CI the way CI services set it', () => {
    const saved = process.env.CI;
    try {
      for (const [value, expected] of [
        ['true', true],
        ['1', true],
        ['false', false],
        ['0', false],
        ['', false],
      ] as const) {
        process.env.CI = value;
        expect(isCi()).toBe(expected);
      }
      delete process.env.CI;
      expect(isCi()).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });

  it('locally: runs what it can, skips the rest and says so plainly', async () => {
    const { report, stderr } = await runUsage(undefined);
    expect(statuses(report)).toEqual({
      'runs and knows where the binary is': 'passed',
      'never runs': 'pending',
      'a single test without the binary': 'pending',
    });
    expect(stderr).toContain(
      'SKIPPED: missing-binary tests — no-such-package not installed (apt-get install -y no-such-package)',
    );
  }, 120_000);

  it('under CI: a missing package fails instead of skipping', async () => {
    const { report } = await runUsage('true');
    expect(report.numPendingTests).toBe(0);
    expect(report.numPassedTests).toBe(1);
    expect(report.numFailedTests).toBe(2);
    const failures = report.testResults.flatMap((r) => r.assertionResults.flatMap((a) => a.failureMessages));
    expect(failures.join('\n')).toContain('FAILED: missing-binary tests — no-such-package not installed');
  }, 120_000);
});
