// Preloaded (`--import`) into every child of test/support/multi-process.ts, which sets
// HUBTEL_EXIT_WITH_PARENT=1 and gives it a pipe as stdin: the pipe closes when the test process
// dies, however it dies (even SIGKILL), and the child then exits too. A test runner killed
// outright leaves no app, sandbox or port behind.
if (process.env.HUBTEL_EXIT_WITH_PARENT === '1' && typeof process.stdin.unref === 'function') {
  process.stdin.on('end', () => process.exit(1));
  process.stdin.on('error', () => process.exit(1));
  process.stdin.resume();
  // The pipe alone must not keep a finished program alive.
  process.stdin.unref();
}
