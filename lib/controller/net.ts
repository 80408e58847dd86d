/**
 * Address helpers the controller needs on top of lib/util/address.ts:
 * CIDRs (canonical network form, containment) and one sort order for
 * everything we print.
 */
import ipaddr from 'ipaddr.js';
import { dottedQuadValue, parseAddress, type AddressFamily } from '../util/address.js';

export type { AddressFamily };

export interface Cidr {
  family: AddressFamily;
  /** The network address, canonical. */
  network: string;
  prefix: number;
  /** "10.0.0.0/8" */
  text: string;
}

export function familyOf(address: string): AddressFamily {
  if (dottedQuadValue(address) >= 0) return 'inet';
  return parseAddress(address, 'address').family;
}

/**
 * Canonical text of an address (RFC 5952 for IPv6), or undefined when it is
 * not one. A canonical dotted quad comes back as the very string given, so
 * every copy of an address parsed from the objects shares one string.
 */
export function canonicalAddress(value: string): string | undefined {
  if (dottedQuadValue(value) >= 0) return value;
  try {
    return parseAddress(value, 'address').text;
  } catch {
    return undefined;
  }
}

/** Parses "a.b.c.d/n" or "x::/n"; the host bits are cleared, as the kernel and ipset do. */
export function parseCidr(value: string, field: string): Cidr {
  const text = value.trim();
  const slash = text.indexOf('/');
  if (slash < 0) throw new TypeError(`${field} must be a CIDR (address/prefix), got '${value}'`);
  const base = parseAddress(text.slice(0, slash), field);
  const prefixText = text.slice(slash + 1);
  const max = base.family === 'inet' ? 32 : 128;
  const prefix = Number(prefixText);
  if (!/^\d+$/.test(prefixText) || prefix > max) {
    throw new TypeError(`${field} must be a CIDR with a prefix length from 0 to ${max}, got '${value}'`);
  }
  const network = networkAddress(base.text, prefix);
  return { family: base.family, network, prefix, text: `${network}/${prefix}` };
}

function networkAddress(address: string, prefix: number): string {
  const bytes = ipaddr.parse(address).toByteArray();
  for (let bit = prefix; bit < bytes.length * 8; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  const ip = ipaddr.fromByteArray(bytes);
  return ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();
}

export function cidrContains(cidr: Cidr, address: string): boolean {
  const parsed = canonicalAddress(address);
  if (parsed === undefined || familyOf(parsed) !== cidr.family) return false;
  return networkAddress(parsed, cidr.prefix) === cidr.network;
}

const collator = new Intl.Collator('en', { numeric: true });

/** Natural order ("10.0.0.2" before "10.0.0.10"): the order of every list we print. */
export function naturalCompare(a: string, b: string): number {
  return collator.compare(a, b);
}
