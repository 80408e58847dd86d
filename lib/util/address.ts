/**
 * Address checks shared by every API: strict parsing with ipaddr.js, and the
 * family an address belongs to. Anything that fails throws a TypeError that
 * names the field, before a byte is sent.
 */
import ipaddr from 'ipaddr.js';

export type AddressFamily = 'inet' | 'inet6';

export interface ParsedAddress {
  family: AddressFamily;
  /** Canonical text: dotted quad, or RFC 5952 compressed IPv6. */
  text: string;
}

export function parseAddress(value: unknown, field: string): ParsedAddress {
  if (typeof value !== 'string') throw new TypeError(`${field} must be an IP address string, got ${typeof value}`);
  if (ipaddr.IPv4.isValidFourPartDecimal(value)) {
    return { family: 'inet', text: ipaddr.IPv4.parse(value).toString() };
  }
  if (!value.includes('%') && ipaddr.IPv6.isValid(value)) {
    return { family: 'inet6', text: ipaddr.IPv6.parse(value).toRFC5952String() };
  }
  throw new TypeError(`${field} must be an IPv4 or IPv6 address, got '${value}'`);
}

export function checkInteger(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${field} must be an integer, got ${typeof value === 'number' ? value : typeof value}`);
  }
  if (value < min || value > max) throw new RangeError(`${field} must be from ${min} to ${max}, got ${value}`);
  return value;
}

export function checkPort(value: unknown, field: string): number {
  return checkInteger(value, field, 0, 65535);
}

/** IPv4 netmask text for a prefix length (24 -> 255.255.255.0). */
export function ipv4MaskFromPrefix(prefix: number): string {
  return ipaddr.IPv4.subnetMaskFromPrefixLength(prefix).toString();
}

/** The prefix length of a contiguous IPv4 mask, or null when it is not one. */
export function ipv4PrefixFromMask(mask: string): number | null {
  if (!ipaddr.IPv4.isValidFourPartDecimal(mask)) return null;
  return ipaddr.IPv4.parse(mask).prefixLengthFromSubnetMask();
}
