import { HttpException } from '@nestjs/common';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { InboundAccessPolicy, PATH_SECRET_PARAM, type InboundRequestLike } from './inbound-access.js';

const SECRET = 'a-very-long-secret-123';

function request(remote: string, extra: Partial<InboundRequestLike> = {}): InboundRequestLike {
  return { headers: {}, socket: { remoteAddress: remote }, ...extra };
}

function statusOf(fn: () => void): number | 'passed' {
  try {
    fn();
    return 'passed';
  } catch (error) {
    if (error instanceof HttpException) return error.getStatus();
    throw error;
  }
}

describe('InboundAccessPolicy', () => {
  it('lets everything through when no option is set', () => {
    const policy = new InboundAccessPolicy();
    expect(policy.enabled).toBe(false);
    expect(statusOf(() => policy.check(request('8.8.8.8')))).toBe('passed');
  });

  it('requires the path secret when one is configured, answering 404 otherwise', () => {
    const policy = new InboundAccessPolicy({ pathSecret: SECRET });
    expect(
      statusOf(() => policy.check(request('1.2.3.4', { params: { [PATH_SECRET_PARAM]: SECRET } }))),
    ).toBe('passed');
    expect(
      statusOf(() => policy.check(request('1.2.3.4', { params: { [PATH_SECRET_PARAM]: `${SECRET}x` } }))),
    ).toBe(404);
    expect(statusOf(() => policy.check(request('1.2.3.4')))).toBe(404);
    // A token on a route that expects none is not a valid URL either.
    expect(
      statusOf(() =>
        new InboundAccessPolicy().check(request('1.2.3.4', { params: { [PATH_SECRET_PARAM]: 'x' } })),
      ),
    ).toBe(404);
  });

  it('allows addresses and CIDR ranges, IPv4, IPv6 and IPv4-mapped IPv6', () => {
    const policy = new InboundAccessPolicy({ allowedIps: ['52.50.116.54', '10.0.0.0/8', '2001:db8::/32'] });
    expect(statusOf(() => policy.check(request('52.50.116.54')))).toBe('passed');
    expect(statusOf(() => policy.check(request('::ffff:52.50.116.54')))).toBe('passed');
    expect(statusOf(() => policy.check(request('10.200.3.4')))).toBe('passed');
    expect(statusOf(() => policy.check(request('2001:db8:1::5')))).toBe('passed');
    expect(statusOf(() => policy.check(request('52.50.116.55')))).toBe(403);
    expect(statusOf(() => policy.check(request('2001:db9::1')))).toBe(403);
    expect(statusOf(() => policy.check({ headers: {} }))).toBe(403);
  });

  it('reads X-Forwarded-For only from trusted proxies, right to left', () => {
    const policy = new InboundAccessPolicy({
      allowedIps: ['52.50.116.54'],
      trustedProxies: ['127.0.0.1', '10.0.0.0/8'],
    });
    const via = (remote: string, xff: string) => request(remote, { headers: { 'x-forwarded-for': xff } });
    expect(statusOf(() => policy.check(via('127.0.0.1', '52.50.116.54')))).toBe('passed');
    expect(statusOf(() => policy.check(via('127.0.0.1', '52.50.116.54, 10.1.1.1')))).toBe('passed');
    // A client cannot spoof by prepending the allowed address: the right-most untrusted hop wins.
    expect(statusOf(() => policy.check(via('127.0.0.1', '52.50.116.54, 6.6.6.6')))).toBe(403);
    // From an untrusted peer the header is ignored altogether.
    expect(statusOf(() => policy.check(via('6.6.6.6', '52.50.116.54')))).toBe(403);
    expect(statusOf(() => policy.check(via('127.0.0.1', 'garbage')))).toBe(403);
  });

  it('reads an X-Forwarded-For chain in any form a proxy writes it', () => {
    const policy = new InboundAccessPolicy({
      allowedIps: ['2001:db8::/32', '10.9.9.9'],
      trustedProxies: ['127.0.0.1', '10.0.0.0/8'],
    });
    const via = (xff: string | string[]) => request('127.0.0.1', { headers: { 'x-forwarded-for': xff } });
    expect(statusOf(() => policy.check(via('[2001:db8:1::5]')))).toBe('passed'); // IPv6 in brackets
    expect(statusOf(() => policy.check(via('[2001:db9::5]')))).toBe(403);
    // Two headers are one chain, read right to left as one.
    expect(statusOf(() => policy.check(via(['2001:db8::1', '6.6.6.6'])))).toBe(403);
    expect(statusOf(() => policy.check(via(['6.6.6.6', '2001:db8::1'])))).toBe('passed');
    // Every hop a trusted proxy: the left-most is the client.
    expect(statusOf(() => policy.check(via('10.9.9.9, 10.1.1.1')))).toBe('passed');
    expect(statusOf(() => policy.check(via('10.8.8.8, 10.9.9.9')))).toBe(403);
  });

  it('reads the socket of a Fastify raw request', () => {
    const policy = new InboundAccessPolicy({ allowedIps: ['127.0.0.1'] });
    expect(
      statusOf(() => policy.check({ headers: {}, raw: { socket: { remoteAddress: '127.0.0.1' } } })),
    ).toBe('passed');
  });

  it('fails at construction naming the bad option', () => {
    expect(() => new InboundAccessPolicy({ allowedIps: ['10.0.0.0/33'] }, 'callback.')).toThrow(
      /callback\.allowedIps.*10\.0\.0\.0\/33/,
    );
    expect(() => new InboundAccessPolicy({ trustedProxies: ['nope'] })).toThrow(HubtelConfigError);
    expect(() => new InboundAccessPolicy({ pathSecret: 'short' })).toThrow(/pathSecret/);
  });
});

describe('InboundAccessPolicy.warnUnguarded: a named account left open while the default is guarded', () => {
  const warnings = (defaults: InboundAccessPolicy, own: InboundAccessPolicy) => {
    const lines: string[] = [];
    defaults.warnUnguarded(own, 'south-east', 'its routes', 'HUBTEL_SERVICE_APP_PATH_SECRET', {
      warn: (m) => lines.push(m),
    });
    return lines;
  };

  it('warns once, naming the account, its route and its own variable, never the secret', () => {
    const lines = warnings(new InboundAccessPolicy({ pathSecret: SECRET }), new InboundAccessPolicy({}));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('Account "south-east" has no path secret while the default account has one');
    expect(lines[0]).toContain('HUBTEL_SOUTH_EAST_SERVICE_APP_PATH_SECRET');
    expect(lines[0]).not.toContain(SECRET);
  });

  it('says nothing when the account has its own secret, or the default account has none', () => {
    expect(
      warnings(
        new InboundAccessPolicy({ pathSecret: SECRET }),
        new InboundAccessPolicy({ pathSecret: 'another-long-secret-456' }),
      ),
    ).toEqual([]);
    expect(warnings(new InboundAccessPolicy({}), new InboundAccessPolicy({}))).toEqual([]);
  });
});
