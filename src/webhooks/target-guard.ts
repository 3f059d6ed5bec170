import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may not go: private, loopback, link-local (cloud metadata), carrier-grade NAT,
 * multicast and reserved addresses, for IPv4 and IPv6 (IPv4-mapped IPv6 included), unless an
 * operator allows a host or range (RESTGRAPH_WEBHOOK_ALLOW_HOSTS).
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

export class TargetRefusedError extends Error {}

export interface TargetGuardOptions {
  /** Hosts (exact names or addresses) and CIDR ranges that may be targeted although private. */
  allow: readonly string[];
}

/** Checks webhook targets, and resolves them to the address to connect to (so a later DNS answer cannot differ). */
export class TargetGuard {
  readonly #allowedHosts = new Set<string>();
  readonly #allowedRanges = new BlockList();

  constructor(options: TargetGuardOptions) {
    for (const entry of options.allow) {
      const [network, prefix] = entry.split('/');
      const version = network === undefined ? 0 : isIP(network);
      if (prefix !== undefined && network !== undefined && version !== 0) {
        this.#allowedRanges.addSubnet(network, Number(prefix), version === 4 ? 'ipv4' : 'ipv6');
      } else {
        this.#allowedHosts.add(entry.toLowerCase().replace(/^\[|\]$/g, ''));
      }
    }
  }

  /** Parses an allow-list entry; undefined when it is valid. */
  static problemWith(entry: string): string | undefined {
    const [network, prefix, extra] = entry.split('/');
    if (extra !== undefined || network === undefined || network === '') return `"${entry}" is not a host or CIDR range`;
    if (prefix === undefined) return /^[A-Za-z0-9.:[\]-]+$/.test(network) ? undefined : `"${entry}" is not a host name or address`;
    const version = isIP(network);
    const bits = Number(prefix);
    if (version === 0 || !/^\d{1,3}$/.test(prefix) || bits > (version === 4 ? 32 : 128)) return `"${entry}" is not a CIDR range like 10.0.0.0/8`;
    return undefined;
  }

  /**
   * The address to connect to for `url`'s host: its first resolved address, when every resolved
   * address is public or allowed. @throws TargetRefusedError saying why not.
   */
  async resolve(url: URL): Promise<{ address: string; family: 4 | 6 }> {
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const hostAllowed = this.#allowedHosts.has(host);
    let addresses: { address: string; family: number }[];
    if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await lookup(host, { all: true, verbatim: true });
      } catch (error) {
        throw new TargetRefusedError(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`);
      }
    }
    if (addresses.length === 0) throw new TargetRefusedError(`${host} does not resolve`);
    for (const { address, family } of addresses) {
      if (hostAllowed || !this.#blocked(address, family === 6 ? 'ipv6' : 'ipv4')) continue;
      throw new TargetRefusedError(
        `${host} resolves to ${address}, a private, loopback, link-local or reserved address; webhooks may not target it (RESTGRAPH_WEBHOOK_ALLOW_HOSTS can allow it)`,
      );
    }
    const chosen = addresses[0] as { address: string; family: number };
    return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
  }

  #blocked(address: string, type: 'ipv4' | 'ipv6'): boolean {
    if (this.#allowedRanges.check(address, type)) return false;
    // IPv4-mapped IPv6 (::ffff:10.0.0.1) is checked as the IPv4 address it is.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped !== undefined) return !this.#allowedRanges.check(mapped, 'ipv4') && BLOCKED.check(mapped, 'ipv4');
    return BLOCKED.check(address, type);
  }
}
