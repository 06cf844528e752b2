/**
 * Real Chromium for browser tests: Debian's /usr/bin/chromium (installed by .ci/run) driven by
 * playwright-core, headless, with a fresh profile per launch and everything that would reach the
 * network on its own turned off.
 *
 *   const chromium = chromiumBinary('example shop browser tests');
 *   chromium.describe('...', () => {
 *     let browser: ChromiumSession;
 *     beforeAll(async () => { browser = await launchChromium(chromium.path!); });
 *     afterAll(() => browser?.close());
 *   });
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { systemBinary, type SystemBinary } from './system.js';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where tests put screenshots: the repository's .tmp/ (ignored by git). */
export const SCREENSHOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.tmp');

export function chromiumBinary(what: string): SystemBinary {
  return systemBinary({ what, aptPackage: 'chromium', binaries: ['/usr/bin/chromium', 'chromium'] });
}

export interface ChromiumSession {
  context: BrowserContext;
  newPage(): Promise<Page>;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export async function launchChromium(executablePath: string): Promise<ChromiumSession> {
  const userDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'nestjs-hubtel-chromium-'));
  let context: BrowserContext;
  try {
    // A persistent context is how playwright takes a profile directory (--user-data-dir).
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 850 },
      timeout: 60_000,
    });
  } catch (error) {
    await fs.rm(userDataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    context,
    newPage: () => context.newPage(),
    close: async () => {
      await context.close().catch(() => undefined);
      await fs.rm(userDataDir, { recursive: true, force: true });
    },
  };
}
