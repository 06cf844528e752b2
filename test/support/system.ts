/**
 * For tests that need a program from a Debian package (chromium, redis-server, ...).
 *
 *   const chromium = systemBinary({ what: 'checkout page browser tests', aptPackage: 'chromium',
 *                                   binaries: ['/usr/bin/chromium', 'chromium'] });
 *   chromium.describe('hosted pay page', () => { ... chromium.path ... });
 *
 * Present: a plain `describe`. Missing on a developer machine: the block is skipped and says so in
 * one plain line. Missing under CI (`CI` set): the block FAILS, because a skipped test proves
 * nothing and .ci/run is expected to install every package the suite needs.
 */
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

export interface SystemBinaryRequirement {
  /** What needs the program, for the message ("checkout page browser tests"). */
  what: string;
  /** The Debian package that provides it. */
  aptPackage: string;
  /** Absolute paths or names looked up on PATH, in order of preference. */
  binaries: string[];
}

export interface SystemBinary {
  /** Absolute path of the first binary found, or undefined when none is installed. */
  readonly path: string | undefined;
  readonly available: boolean;
  /** `describe` when available; otherwise skips (locally) or fails (CI). */
  describe(name: string, fn: () => void): void;
  /** `it` when available; otherwise skips (locally) or fails (CI). */
  it(name: string, fn: () => unknown, timeout?: number): void;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path of an executable: as given if absolute, else the first hit on PATH. */
export function findExecutable(nameOrPath: string): string | undefined {
  if (path.isAbsolute(nameOrPath)) return isExecutable(nameOrPath) ? nameOrPath : undefined;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, nameOrPath))) return path.join(dir, nameOrPath);
  }
  return undefined;
}

export function isCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

export function systemBinary(requirement: SystemBinaryRequirement): SystemBinary {
  const found = requirement.binaries.map(findExecutable).find((p) => p !== undefined);
  const install = `apt-get install -y ${requirement.aptPackage}`;
  const missing = `${requirement.what} — ${requirement.aptPackage} not installed (${install})`;
  let announced = false;

  const onMissing = (register: () => void, failName: string): void => {
    if (isCi()) {
      // Failing test, not a thrown error at collection: the report names what is missing.
      it(failName, () => {
        throw new Error(`FAILED: ${missing}; CI must install it (.ci/run)`);
      });
      return;
    }
    if (!announced) {
      announced = true;
      // Straight to stderr: one plain line, not buried in Jest's console-capture block.
      process.stderr.write(`SKIPPED: ${missing}\n`);
    }
    register();
  };

  return {
    path: found,
    available: found !== undefined,
    // The only skips in the suite: a missing Debian package, outside CI, announced as SKIPPED.
    describe(name, fn) {
      if (found) describe(name, fn);
      else onMissing(() => describe.skip(name, fn), `${name} (needs ${requirement.aptPackage})`);
    },
    it(name, fn, timeout) {
      if (found) it(name, fn as jest.ProvidesCallback, timeout);
      else
        onMissing(
          () => it.skip(name, fn as jest.ProvidesCallback, timeout),
          `${name} (needs ${requirement.aptPackage})`,
        );
    },
  };
}
