import { ErrorLogThrottle } from './log-throttle.js';

describe('ErrorLogThrottle', () => {
  it('logs one line per distinct error per interval, then says how many it held back', () => {
    let now = 0;
    const lines: string[] = [];
    const throttle = new ErrorLogThrottle({ error: (line: string) => lines.push(line) }, 1_000, () => now);
    for (let i = 0; i < 20_000; i++) throttle.error("CROSSSLOT Keys in request don't hash to the same slot");
    throttle.error('Connection is closed.');
    expect(lines).toEqual(["CROSSSLOT Keys in request don't hash to the same slot", 'Connection is closed.']);
    now = 1_000;
    throttle.error("CROSSSLOT Keys in request don't hash to the same slot");
    expect(lines[2]).toBe(
      "CROSSSLOT Keys in request don't hash to the same slot (and 19999 more like it in the last 1 s)",
    );
  });
});
