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

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/libs', '<rootDir>/src', '<rootDir>/test', '<rootDir>/bench'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/test/fixtures/'],
  modulePathIgnorePatterns: ['<rootDir>/dist/', '<rootDir>/test/fixtures/'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^nestjs-hubtel$': '<rootDir>/libs/core/src/index.ts',
    '^#internal$': '<rootDir>/libs/core/src/internal.ts',
    '^nestjs-hubtel/(sms|checkout|service-app|sandbox|testing|redis|bullmq|health|metrics)$':
      '<rootDir>/libs/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  setupFiles: ['<rootDir>/test/setup.ts'],
  testTimeout: 30000,
  // Two cores: two workers keep both busy while one suite waits on a child process (the packaging
  // test). Native-ESM mode grows a worker's heap file after file, so recycle workers that bloat.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
};
