import { BlockList, isIP } from 'node:net';
import { timingSafeEqual, createHash } from 'node:crypto';
import { HubtelConfigError } from '../errors/hubtel.errors.js';
import { inboundHttpError } from './inbound-http-errors.js';
import { accountEnvVariable } from '../accounts/accounts-env.js';

/** Optional guards for endpoints the platform calls (it signs nothing); both are off by default. */
export interface InboundAccessOptions {
  /** Secret expected as the last path segment: a request without it (or another) gets 404, nothing runs. */
  pathSecret?: string;
  /** Source addresses allowed to call: IPv4/IPv6 addresses or CIDR ranges (`52.50.116.54`, `10.0.0.0/8`). */
  allowedIps?: string[];
  /**
   * Reverse proxies (addresses or CIDR ranges) in front of the app: only from one of them is
   * `X-Forwarded-For` read (right to left, the first untrusted hop is the client). Else it is ignored.
   */
  trustedProxies?: string[];
}

/** The subset of Express and Fastify requests this check reads. */
export interface InboundRequestLike {
  headers: Record<string, string | string[] | undefined>;
  socket?: { remoteAddress?: string };
  raw?: { socket?: { remoteAddress?: string } };
  params?: Record<string, string | undefined>;
}

/** Route parameter that carries the path secret. */
export const PATH_SECRET_PARAM = 'hubtelToken';
/** Route parameter that carries the account name (or, alone, the default account's path secret). */
export const ACCOUNT_PARAM = 'hubtelAccount';

export class InboundAccessPolicy {
  private readonly allowed?: BlockList;
  private readonly proxies?: BlockList;
  private readonly secretDigest?: Buffer;

  /** Validates the options at bootstrap; `optionPrefix` names the bad one in errors. */
  constructor(options: InboundAccessOptions = {}, optionPrefix = '') {
    if (options.pathSecret !== undefined) {
      if (typeof options.pathSecret !== 'string' || !/^[A-Za-z0-9._~-]{16,}$/.test(options.pathSecret))
        throw new HubtelConfigError(
          `${optionPrefix}pathSecret`,
          'must be at least 16 URL-safe characters (letters, digits, . _ ~ -)',
        );
      this.secretDigest = digest(options.pathSecret);
    }
    if (options.allowedIps !== undefined)
      this.allowed = buildList(options.allowedIps, `${optionPrefix}allowedIps`);
    if (options.trustedProxies !== undefined)
      this.proxies = buildList(options.trustedProxies, `${optionPrefix}trustedProxies`);
  }

  get enabled(): boolean {
    return this.allowed !== undefined || this.secretDigest !== undefined;
  }

  /** Warns of an account without a path secret while the default has one (secrets are never inherited). */
  warnUnguarded(
    own: InboundAccessPolicy,
    account: string,
    route: string,
    variable: string,
    logger: { warn(message: string): void },
  ): void {
    if (this.secretDigest && !own.secretDigest)
      logger.warn(
        `Account "${account}" has no path secret while the default account has one: ${route} takes requests without a secret (secrets are not inherited). Set its access.pathSecret (${accountEnvVariable(account, variable)}), or allowedIps.`,
      );
  }

  /** Whether `segment` is the path secret (in constant time). */
  isSecret(segment: string): boolean {
    return this.secretDigest !== undefined && timingSafeEqual(digest(segment), this.secretDigest);
  }

  /** Throws a 404 or 403 HttpException when the request may not pass (`token`: its path secret). */
  check(request: InboundRequestLike, token = request.params?.[PATH_SECRET_PARAM]): void {
    if (this.secretDigest ? !token || !this.isSecret(token) : token !== undefined)
      throw inboundHttpError(404, 'HUBTEL_NOT_FOUND', 'Not found');
    if (this.allowed) {
      const client = this.clientAddress(request);
      if (!client || !this.allowed.check(client.address, client.family))
        throw inboundHttpError(
          403,
          'HUBTEL_SOURCE_NOT_ALLOWED',
          `Source address ${client?.address ?? 'unknown'} is not on this endpoint's allow-list`,
        );
    }
  }

  clientAddress(request: InboundRequestLike): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
    const peer = parseAddress(request.socket?.remoteAddress ?? request.raw?.socket?.remoteAddress);
    if (!peer || !this.proxies || !this.proxies.check(peer.address, peer.family)) return peer;
    const header = request.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((hop) => hop.trim())
      .filter(Boolean);
    let client = peer;
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = parseAddress(hops[index]);
      if (!hop) return undefined; // a garbled chain: trust nothing
      client = hop;
      if (!this.proxies.check(hop.address, hop.family)) return hop;
    }
    return client;
  }
}

function digest(value: string): Buffer {
  // Hashing first gives equal-length buffers, so timingSafeEqual never leaks the secret's length.
  return createHash('sha256').update(value).digest();
}

function parseAddress(raw: string | undefined): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  if (!raw) return undefined;
  let address = raw.trim();
  if (address.startsWith('[') && address.includes(']')) address = address.slice(1, address.indexOf(']'));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1]!;
  const version = isIP(address);
  return version === 0 ? undefined : { address, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function buildList(entries: unknown, option: string): BlockList {
  if (!Array.isArray(entries))
    throw new HubtelConfigError(option, 'must be an array of IP addresses or CIDR ranges');
  const list = new BlockList();
  for (const entry of entries) {
    if (typeof entry !== 'string')
      throw new HubtelConfigError(option, `"${String(entry)}" is not an IP address or CIDR range`);
    const [base, bits, extra] = entry.trim().split('/');
    const parsed = parseAddress(base);
    const prefix = bits === undefined ? undefined : Number(bits);
    const max = parsed?.family === 'ipv4' ? 32 : 128;
    if (
      !parsed ||
      extra !== undefined ||
      (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max))
    ) {
      throw new HubtelConfigError(option, `"${entry}" is not an IP address or CIDR range`);
    }
    if (prefix === undefined) list.addAddress(parsed.address, parsed.family);
    else list.addSubnet(parsed.address, prefix, parsed.family);
  }
  return list;
}
