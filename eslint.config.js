// ESLint flat config. Not type-aware on purpose: `npm run typecheck` is the type gate, and lint
// stays fast on two cores.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Node's globals for the plain .js/.mjs scripts (TypeScript files get theirs from @types/node).
const nodeGlobals = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'AbortController',
    'AbortSignal',
    'TextEncoder',
    'TextDecoder',
    'fetch',
    'structuredClone',
    'queueMicrotask',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'clearImmediate',
    'performance',
    'global',
    'globalThis',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      'dist/**',
      'coverage/**',
      '.tmp/**',
      'bench/results/**',
      // Fixture apps are type-checked and run by test/packaging.e2e-spec.ts against the packed build.
      'test/fixtures/nest*/**',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: nodeGlobals },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // No consistent-type-imports: its fix turns a constructor-injected class into `import type`,
      // which erases the class decorator metadata needs at runtime (Nest DI breaks silently).
      // Nest's own typings (Type<any>, DynamicModule, mixins, reflect metadata) make `any` and
      // `Function` idiomatic at the framework boundary; strict tsc guards the rest.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Flags harmless defensive initialisations around try/finally; worth a look, not a failure.
      'no-useless-assignment': 'warn',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'off',
      // A public name for a generic instance (`SmsEnvAccounts`) is an interface extending it.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
