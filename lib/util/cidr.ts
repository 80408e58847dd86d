/**
 * Address and CIDR helpers for programs built on the library, with no
 * kernel behind them: canonical text, families, networks and containment,
 * and one sort order. Pure (loads no addon), so a planner can use it
 * without the netlink sockets; published as `ipvs-netlink/address`.
 *
 * Addresses are compared as canonical text (a dotted quad, or RFC 5952
 * compressed IPv6), the form the library's reads return and the kernel
 * tools print.
 */
import ipaddr from 'ipaddr.js';
import { dottedQuadValue, parseAddress, type AddressFamily } from './address.js';
import { wrongValue } from './check.js';

export type { AddressFamily };
export { dottedQuadValue };
/** Natural order ("10.0.0.2" before "10.0.0.10"), for lists of addresses, keys and names that people read. */
export { naturalCompare } from './natural-order.js';

/** A network: an address with its host bits cleared, and a prefix length. */
export interface Cidr {
  /** `inet` (IPv4) or `inet6` (IPv6). */
  family: AddressFamily;
  /** The network address, canonical. */
  network: string;
  /** The prefix length: 0-32 for IPv4, 0-128 for IPv6. */
  prefix: number;
  /** "10.0.0.0/8", canonical. */
  text: string;
}

/** The family of an address; throws a TypeError when `address` is not one. */
export function familyOf(address: string): AddressFamily {
  if (dottedQuadValue(address) >= 0) return 'inet';
  return parseAddress(address, 'address').family;
}

/**
 * Canonical text of an address (RFC 5952 for IPv6), or undefined when it is
 * not one. A canonical dotted quad comes back as the very string given, so
 * every copy of an address read from many objects can share one string.
 */
export function canonicalAddress(value: string): string | undefined {
  if (dottedQuadValue(value) >= 0) return value;
  try {
    return parseAddress(value, 'address').text;
  } catch {
    return undefined;
  }
}

/**
 * Parses "a.b.c.d/n" or "x::/n" (white space around it is ignored); the
 * host bits are cleared, as the kernel and ipset do. A value that is not
 * a CIDR throws a TypeError naming `field`.
 */
export function parseCidr(value: string, field: string): Cidr {
  const text = value.trim();
  const slash = text.indexOf('/');
  if (slash < 0) throw wrongValue(field, 'a CIDR (address/prefix)', value);
  const base = parseAddress(text.slice(0, slash), field);
  const prefixText = text.slice(slash + 1);
  const max = base.family === 'inet' ? 32 : 128;
  const prefix = Number(prefixText);
  if (!/^\d+$/.test(prefixText) || prefix > max) throw wrongValue(field, `a CIDR with a prefix length from 0 to ${max}`, value);
  const network = networkAddress(base.text, prefix);
  return { family: base.family, network, prefix, text: `${network}/${prefix}` };
}

/** Whether `address` (any spelling) is inside `cidr`; false for an address of the other family or none at all. */
export function cidrContains(cidr: Cidr, address: string): boolean {
  const parsed = canonicalAddress(address);
  if (parsed === undefined || familyOf(parsed) !== cidr.family) return false;
  return networkAddress(parsed, cidr.prefix) === cidr.network;
}

function networkAddress(address: string, prefix: number): string {
  const bytes = ipaddr.parse(address).toByteArray();
  for (let bit = prefix; bit < bytes.length * 8; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  const ip = ipaddr.fromByteArray(bytes);
  return ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();
}

