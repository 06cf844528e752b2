import { CheckoutRecheckInterruptedError, CheckoutRechecks } from './checkout-rechecks.js';

describe('CheckoutRechecks', () => {
  it('nudges only confirmations held here', () => {
    const rechecks = new CheckoutRechecks<string>();
    expect(rechecks.nudge('r:paid', 'a')).toBe(false);
    rechecks.hold('r:paid');
    expect(rechecks.nudge('r:paid', 'a')).toBe(true);
    expect(rechecks.latest('r:paid')).toBe('a');
  });

  it('a nudge wakes a wait (true); a wait that reaches its time ends false', async () => {
    const rechecks = new CheckoutRechecks<string>();
    rechecks.hold('k');
    const waiting = rechecks.waitUntil('k', Date.now() + 60_000);
    rechecks.nudge('k', 'genuine');
    await expect(waiting).resolves.toBe(true);
    await expect(rechecks.waitUntil('k', Date.now() + 1)).resolves.toBe(false);
    await expect(rechecks.waitUntil('k', Date.now() - 1)).resolves.toBe(false);
  });

  it('nudges while not waiting coalesce into one, taken by the next wait', async () => {
    const rechecks = new CheckoutRechecks<number>();
    rechecks.hold('k');
    for (let i = 1; i <= 10; i++) rechecks.nudge('k', i);
    expect(rechecks.latest('k')).toBe(10);
    await expect(rechecks.waitUntil('k', Date.now() + 60_000)).resolves.toBe(true);
    await expect(rechecks.waitUntil('k', Date.now() - 1)).resolves.toBe(false);
  });

  it('forgets a key once every holder released it', () => {
    const rechecks = new CheckoutRechecks<string>();
    rechecks.hold('k');
    rechecks.hold('k');
    rechecks.nudge('k', 'a');
    rechecks.release('k');
    expect(rechecks.nudge('k', 'b')).toBe(true);
    rechecks.release('k');
    expect(rechecks.latest('k')).toBeUndefined();
    expect(rechecks.takeNudge('k')).toBe(false);
    expect(rechecks.nudge('k', 'c')).toBe(false);
  });

  it('stop() ends waits with a typed error, and refuses new ones', async () => {
    const rechecks = new CheckoutRechecks<string>();
    rechecks.hold('k');
    const waiting = rechecks.waitUntil('k', Date.now() + 60_000);
    rechecks.stop();
    await expect(waiting).rejects.toBeInstanceOf(CheckoutRecheckInterruptedError);
    await expect(rechecks.waitUntil('k', Date.now() + 60_000)).rejects.toMatchObject({
      code: 'HUBTEL_SEND_ABORTED',
    });
  });
});
