import 'reflect-metadata';

// The tests that build fresh copies of the repository (packaging, example-app, docs-commands)
// share one build of the same sources (the package's, and the example app's): scripts/build.mjs
// keeps it here, keyed on its inputs.
process.env.NESTJS_HUBTEL_BUILD_CACHE ??= new URL('../.tmp/build-cache', import.meta.url).pathname;
