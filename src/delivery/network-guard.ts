/**
 * Outbound address guard: no request may make the service fetch an address of the
 * operator's private network. Provider URLs (webhook, WhatsApp API base) are checked when an operator
 * stores them and again, address by address, when a connection is made (so a DNS answer that changes
 * after the check cannot redirect a delivery). Media URLs are only passed on, never fetched.
 *
 * Allowed: public unicast addresses, plus the hosts and CIDR ranges an operator lists in
 * PROVIDER_ALLOWED_HOSTS (e.g. `127.0.0.1,10.1.2.0/24,hooks.internal`), for tests and on-premise receivers.
 */
import dns from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface AddressPolicy {
  /** Host names (lowercase) allowed whatever they resolve to. */
  readonly hosts: ReadonlySet<string>;
  /** Extra ranges allowed although private. */
  readonly ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

/** Parses a PROVIDER_ALLOWED_HOSTS value (comma-separated hosts, addresses and CIDR ranges). */
export function parseAddressPolicy(value: string | undefined): AddressPolicy {
  const hosts = new Set<string>();
  const ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  for (const item of (value ?? '').split(',').map((x) => x.trim().toLowerCase()).filter(Boolean)) {
    if (item.includes('/') && ipaddr.isValidCIDR(item)) ranges.push(ipaddr.parseCIDR(item));
    else if (ipaddr.isValid(item)) {
      const addr = ipaddr.parse(item);
      ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
    } else hosts.add(item);
  }
  return { hosts, ranges };
}

/** True when `ip` may be connected to: public unicast, or inside an allowed range. */
export function isAllowedAddress(ip: string, policy: AddressPolicy): boolean {
  if (!ipaddr.isValid(ip)) return false;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  for (const [range, bits] of policy.ranges) {
    if (range.kind() !== addr.kind()) continue;
    const inside = addr.kind() === 'ipv4' ? (addr as ipaddr.IPv4).match(range as ipaddr.IPv4, bits) : (addr as ipaddr.IPv6).match(range as ipaddr.IPv6, bits);
    if (inside) return true;
  }
  return addr.range() === 'unicast';
}

/**
 * How an operator allows a refused private host (the refusal names the variable):
 * `to allow it, add <host> to PROVIDER_ALLOWED_HOSTS (comma-separated hosts and CIDR ranges)`.
 */
export function howToAllow(host: string): string {
  return `to allow it, add ${host} to PROVIDER_ALLOWED_HOSTS (comma-separated hosts, addresses and CIDR ranges) and restart the service`;
}

/**
 * Checks a provider URL before it is stored: http(s), and every address its host resolves to allowed.
 * Returns a problem text, or null when the URL is acceptable; a private address's text ends with
 * `howToAllow` (names PROVIDER_ALLOWED_HOSTS).
 */
export async function checkProviderUrl(url: string, policy: AddressPolicy): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must be an http or https URL';
  if (parsed.username || parsed.password) return 'must not carry credentials';
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (policy.hosts.has(host)) return null;
  let addresses: string[];
  try {
    addresses = ipaddr.isValid(host) ? [host] : (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return `host ${host} does not resolve`;
  }
  const refused = addresses.find((a) => !isAllowedAddress(a, policy));
  return refused ? `resolves to ${refused}, an address of a private or reserved network; ${howToAllow(host)}` : null;
}

/**
 * The send-time check of a provider URL before any connection (names are checked at connect time by
 * {@link guardedLookup}): the problem with its literal IP address when that address is refused
 * (`refused to connect to <ip>: private or reserved address`), `the provider URL is not a URL`, or
 * null when nothing is wrong before connecting.
 */
export function literalAddressProblem(url: string, policy: AddressPolicy): string | null {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return 'the provider URL is not a URL';
  }
  if (isIP(host) && !policy.hosts.has(host) && !isAllowedAddress(host, policy)) {
    return `refused to connect to ${host}: private or reserved address`;
  }
  return null;
}

/**
 * A `lookup` for sockets (undici's `connect.lookup`, net.connect) that refuses disallowed addresses at
 * connection time: the check that DNS rebinding cannot get around.
 */
export function guardedLookup(policy: AddressPolicy): typeof dns.lookup {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    const host = hostname.toLowerCase();
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const list = addresses as dns.LookupAddress[];
      const allowed = policy.hosts.has(host) ? list : list.filter((a) => isAllowedAddress(a.address, policy));
      if (allowed.length === 0) {
        const e = Object.assign(new Error(`refused to connect to ${hostname}: private or reserved address; ${howToAllow(host)}`), { code: 'EADDRNOTALLOWED' });
        return callback(e);
      }
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0].address, allowed[0].family);
    });
  }) as typeof dns.lookup;
}
