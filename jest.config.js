import { fileURLToPath } from 'node:url';

// Jest runs in native-ESM mode (node --experimental-vm-modules): Nest 12 is ESM-only and
// Jest's CommonJS mode cannot load it on Node 20. SWC strips types and keeps decorator metadata.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

/** What both layers share: how a spec is loaded. */
export const base = {
  testEnvironment: 'node',
  rootDir: fileURLToPath(new URL('.', import.meta.url)),
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/test/fixtures/'],
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/test/fixtures/'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^nestjs-hubtel$': '<rootDir>/libs/core/src/index.ts',
    '^#internal$': '<rootDir>/libs/core/src/internal.ts',
    '^#light/(core|sandbox)$': '<rootDir>/libs/$1/src/light.ts',
    '^nestjs-hubtel/(sms|checkout|service-app|sandbox|testing|redis|bullmq|health|metrics)$':
      '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFiles: ['<rootDir>/test/setup.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/layers.setup.ts'],
};

/**
 * Two layers, told apart by the file name:
 * - unit: `*.spec.ts`, next to the code (and test/*.spec.ts for checks over the repo). They start
 *   no process (no redis-server, no child app, no npm, no browser): test/layers.setup.ts refuses one.
 *   `npm run test:unit` runs only these.
 * - e2e: `*.e2e-spec.ts` under test/: every spec that starts a process. `npm test` runs both.
 */
export const unit = {
  ...base,
  displayName: 'unit',
  roots: ['<rootDir>/libs', '<rootDir>/src', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/*.spec.ts'],
};

export const e2e = {
  ...base,
  displayName: 'e2e',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.e2e-spec.ts'],
  // The children's TypeScript compiled once per run; a count of the children started.
  globalSetup: '<rootDir>/test/global-setup.mjs',
  globalTeardown: '<rootDir>/test/global-teardown.mjs',
};

/** @type {import('jest').Config} */
export default {
  projects: [unit, e2e],
  // Jest reads the time-out from here, not from a project.
  testTimeout: 30000,
  // Two cores, four workers: the three longest end-to-end files start first and mostly wait
  // (replicas, npm, outages: about 60% of the two cores in their first 200 s in a clean-clone CI),
  // so a fourth runs the short files meanwhile; `npm run test:unit`, CPU-bound, runs two.
  // Native-ESM mode grows a worker's heap file after file, so recycle workers that bloat.
  maxWorkers: 4,
  workerIdleMemoryLimit: '1GB',
};
