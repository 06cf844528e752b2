import { parseArgs } from './config.js';

describe('bench command line', () => {
  // test/bench-smoke.e2e-spec.ts runs these rows at one rate: the full run's rates are these.
  it("runs the latency section's two-replica rows at 100, 300 and 500 req/s unless --rates says otherwise", () => {
    expect(parseArgs([], 'RESULTS.md').latency.rates).toEqual([100, 300, 500]);
    expect(parseArgs(['--smoke'], 'RESULTS.md').latency.rates).toEqual([100, 300, 500]);
    expect(parseArgs(['--smoke', '--rates=100'], 'RESULTS.md').latency.rates).toEqual([100]);
  });
});
