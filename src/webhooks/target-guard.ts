import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may not go, unless an operator allows a host or range
 * (RESTGRAPH_WEBHOOK_ALLOW_HOSTS): private, loopback, link-local (cloud metadata), carrier-grade
 * NAT, multicast and reserved IPv4 addresses; every IPv6 address outside global unicast
 * (2000::/3), and the special ranges inside it. IPv6 forms that carry an IPv4 address are judged
 * by it (see {@link TargetGuard}).
 */
const BLOCKED_IPV4 = new BlockList();
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
  BLOCKED_IPV4.addSubnet(network, prefix, 'ipv4');
}

/** Global unicast: the only IPv6 space webhooks may reach directly (RFC 4291, section 2.4). */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** Special ranges inside global unicast, each refused whole (IANA IPv6 Special-Purpose Address Registry). */
const SPECIAL_GLOBAL: readonly (readonly [network: string, prefix: number, what: string])[] = [
  ['2001::', 32, 'a Teredo address (RFC 4380), tunnelled through IPv4 relays'],
  ['2002::', 16, 'a 6to4 address (RFC 3056), tunnelled through IPv4 relays'],
  ['2001:2::', 48, 'a benchmarking address (RFC 5180)'],
  ['2001:10::', 28, 'an ORCHID address (RFC 4843), not routable'],
  ['2001:20::', 28, 'an ORCHIDv2 address (RFC 7343), not routable'],
  ['2001:db8::', 32, 'a documentation address (RFC 3849)'],
  ['3fff::', 20, 'a documentation address (RFC 9637)'],
];
const SPECIAL_GLOBAL_LISTS = SPECIAL_GLOBAL.map(([network, prefix, what]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, 'ipv6');
  return { list, what };
});

/** IPv6 forms that stand for one IPv4 address, found in their last 32 bits: judged as that address. */
const CARRYING_IPV4: readonly (readonly [network: string, what: string])[] = [
  ['::ffff:0:0', 'IPv4-mapped'], // RFC 4291, section 2.5.5.2: the socket connects over IPv4
  ['::ffff:0:0:0', 'IPv4-translated'], // RFC 6145 (SIIT): a translator connects to the IPv4 address
  ['64:ff9b::', 'NAT64'], // RFC 6052, the well-known prefix: a translator connects to it
];
const CARRYING_IPV4_LISTS = CARRYING_IPV4.map(([network, what]) => {
  const list = new BlockList();
  list.addSubnet(network, 96, 'ipv6');
  return { list, what };
});

const REFUSAL_ADVICE = 'webhooks may not target it (RESTGRAPH_WEBHOOK_ALLOW_HOSTS can allow it)';

export class TargetRefusedError extends Error {}

/** Resolves a host name to all its addresses (as `dns.promises.lookup` with `all: true` does). */
export type HostLookup = (host: string) => Promise<{ address: string; family: number }[]>;

export interface TargetGuardOptions {
  /** Hosts (exact names or addresses) and CIDR ranges that may be targeted although private. */
  allow: readonly string[];
  /** How host names are resolved. @default the system resolver (dns.promises.lookup) */
  lookup?: HostLookup;
}

/**
 * Checks webhook targets, and resolves them to the address to connect to (so a later DNS answer
 * cannot differ). Every address a name resolves to must pass.
 *
 * IPv6 addresses that carry an IPv4 address in their last 32 bits (IPv4-mapped `::ffff:0:0/96`,
 * IPv4-translated `::ffff:0:0:0/96`, NAT64 `64:ff9b::/96`) are judged by that IPv4 address: a
 * public one passes, as it must for webhooks from IPv6-only hosts behind DNS64, and a private one
 * is refused like the address itself. The other transition forms are refused whole: 6to4
 * (`2002::/16`) and Teredo (`2001::/32`) reach their IPv4 address through relays (and Teredo's is
 * obfuscated), IPv4-compatible addresses (`::/96`) are deprecated (RFC 4291), and the local-use
 * NAT64 prefix (`64:ff9b:1::/48`, RFC 8215) is a site's own translator. They are named in the
 * refusal with the IPv4 address they embed, where they embed one.
 */
export class TargetGuard {
  readonly #allowedHosts = new Set<string>();
  readonly #allowedRanges = new BlockList();
  readonly #lookup: HostLookup;

  constructor(options: TargetGuardOptions) {
    for (const entry of options.allow) {
      const [network, prefix] = entry.split('/');
      const address = (network ?? '').replace(/^\[|\]$/g, '');
      const version = isIP(address);
      if (prefix !== undefined && version !== 0) {
        this.#allowedRanges.addSubnet(address, Number(prefix), version === 4 ? 'ipv4' : 'ipv6');
      } else {
        this.#allowedHosts.add(entry.toLowerCase().replace(/^\[|\]$/g, ''));
        // An allowed address is allowed however it is reached: by a name, or in an IPv6 form carrying it.
        if (version !== 0) this.#allowedRanges.addAddress(address, version === 4 ? 'ipv4' : 'ipv6');
      }
    }
    this.#lookup = options.lookup ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
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
        addresses = await this.#lookup(host);
      } catch (error) {
        throw new TargetRefusedError(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`);
      }
    }
    if (addresses.length === 0) throw new TargetRefusedError(`${host} does not resolve`);
    for (const { address, family } of addresses) {
      const refusal = hostAllowed ? undefined : this.#refusal(address, family === 6 ? 'ipv6' : 'ipv4');
      if (refusal !== undefined) throw new TargetRefusedError(`${host} resolves to ${address}, ${refusal}; ${REFUSAL_ADVICE}`);
    }
    const chosen = addresses[0] as { address: string; family: number };
    return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
  }

  /** Why an address may not be targeted (what it is), or undefined when it may. */
  #refusal(address: string, type: 'ipv4' | 'ipv6'): string | undefined {
    if (this.#allowedRanges.check(address, type)) return undefined;
    if (type === 'ipv4') return BLOCKED_IPV4.check(address, 'ipv4') ? 'a private, loopback, link-local or reserved address' : undefined;
    let bytes: number[];
    try {
      bytes = ipaddr.IPv6.parse(address).toByteArray();
    } catch {
      return 'not an IPv6 address this server can judge';
    }
    const last32 = bytes.slice(12).join('.');
    const carrier = CARRYING_IPV4_LISTS.find(({ list }) => list.check(address, 'ipv6'));
    if (carrier !== undefined) {
      if (this.#allowedRanges.check(last32, 'ipv4') || !BLOCKED_IPV4.check(last32, 'ipv4')) return undefined;
      return `an ${carrier.what} address of ${last32}, a private, loopback, link-local or reserved address`;
    }
    if (!GLOBAL_UNICAST.check(address, 'ipv6')) {
      // ::/96 beyond :: and ::1 (the unspecified and loopback addresses, described below).
      const low32 = bytes.slice(12).reduce((n, b) => n * 256 + b, 0);
      if (bytes.slice(0, 12).every((b) => b === 0) && low32 > 1) {
        return `an IPv4-compatible address of ${last32} (deprecated, RFC 4291), refused whole`;
      }
      if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) return 'a local-use NAT64 address (RFC 8215), refused whole';
      return 'not a global unicast address (loopback, unspecified, link-local, site-local, unique local, multicast or reserved)';
    }
    const special = SPECIAL_GLOBAL_LISTS.find(({ list }) => list.check(address, 'ipv6'));
    if (special === undefined) return undefined;
    return `${special.what}${describeEmbedded(bytes)}, refused whole`;
  }
}

/** ", embedding 10.0.0.1" for 6to4 (bits 16–47) and Teredo (the client, bits 96–127 inverted). */
function describeEmbedded(bytes: readonly number[]): string {
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return `, embedding ${bytes.slice(2, 6).join('.')}`;
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0 && bytes[3] === 0) return `, embedding ${bytes.slice(12).map((b) => b ^ 0xff).join('.')}`;
  return '';
}
