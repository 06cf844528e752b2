import { DeadLetterEvent } from './inbound-job.types.js';

describe('DeadLetterEvent.account (issue 24; one rule on every event since 0.2.0)', () => {
  it("is the payload's account when it names one, else 'default', so handler decorators can filter dead letters by account", () => {
    const at = new Date(0);
    expect(new DeadLetterEvent('paid', 'r1', { account: 'north' }, 3, 'down', at).account).toBe('north');
    expect(new DeadLetterEvent('paid', 'r1', { clientReference: 'r1' }, 3, 'down', at).account).toBe(
      'default',
    );
    expect(new DeadLetterEvent('paid', 'r1', { account: 7 }, 3, 'down', at).account).toBe('default');
    expect(new DeadLetterEvent('paid', 'r1', null, 3, 'down', at).account).toBe('default');
    expect(new DeadLetterEvent('paid', 'r1', 'text', 3, 'down', at).account).toBe('default');
  });
});
