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

/**
 * Writes an address into `out` at `offset` in the kernel's 16-byte form
 * (union nf_inet_addr: IPv4 in the first four bytes, the rest left as they
 * are) and returns its family. Same acceptance as parseAddress(); a bad
 * one throws a TypeError naming `field.name`.
 */
export function writeAddress(value: unknown, out: Uint8Array, offset: number, field: string, name: string): AddressFamily {
  if (typeof value === 'string') {
    if (writeDottedQuad(value, out, offset)) return 'inet';
    if (value.includes(':') && !value.includes('%') && ipaddr.IPv6.isValid(value)) {
      out.set(ipaddr.IPv6.parse(value).toByteArray(), offset);
      return 'inet6';
    }
  }
  // The field's name is built only now: a large batch validates millions of fields.
  return parseAddress(value, `${field}.${name}`).family; // throws, naming the field
}

/** Where ipv4Text spells an address: at most 15 characters. */
const quadText = Buffer.alloc(16);

/**
 * The dotted quad of the 4 bytes at `at`, spelled into a scratch buffer and
 * read as one flat string: no array or string pieces per address (a
 * template literal or `+` builds a tree of pieces for 13 characters or
 * more, twice the memory until flattened), which matters in a dump of
 * 100,000 destinations.
 */
export function ipv4Text(bytes: Uint8Array, at: number): string {
  let n = 0;
  for (let k = 0; k < 4; k++) {
    if (k) quadText[n++] = 0x2e; // '.'
    let v = bytes[at + k];
    if (v >= 100) {
      quadText[n++] = 0x30 + ((v / 100) | 0);
      v %= 100;
      quadText[n++] = 0x30 + ((v / 10) | 0);
      v %= 10;
    } else if (v >= 10) {
      quadText[n++] = 0x30 + ((v / 10) | 0);
      v %= 10;
    }
    quadText[n++] = 0x30 + v;
  }
  return quadText.toString('latin1', 0, n);
}

/**
 * The value of a strict dotted quad ("10.0.0.1": four decimal parts, no
 * leading zeros, each at most 255; what ipaddr.js's isValidFourPartDecimal
 * accepts), or -1 for anything else. The hot path of a large IPVS batch and
 * of the controller's address handling, where ipaddr.js's regular
 * expressions cost ~1.5 us per address, more than the kernel spends on the
 * whole operation; anything that is not a plain dotted quad goes to
 * ipaddr.js.
 */
export function dottedQuadValue(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let result = 0;
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || part === 3) return -1;
      result = result * 256 + value;
      part++;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && value === 0) return -1; // a leading zero
      value = value * 10 + (c - 0x30);
      if (value > 255) return -1;
      digits++;
    } else {
      return -1;
    }
  }
  if (part !== 3 || digits === 0) return -1;
  return result * 256 + value;
}

/** A strict dotted quad written as four bytes (network order); false for anything else. */
function writeDottedQuad(s: string, out: Uint8Array, at: number): boolean {
  const v = dottedQuadValue(s);
  if (v < 0) return false;
  out[at] = v >>> 24;
  out[at + 1] = (v >>> 16) & 255;
  out[at + 2] = (v >>> 8) & 255;
  out[at + 3] = v & 255;
  return true;
}

export function checkInteger(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${field} must be an integer, got ${typeof value === 'number' ? value : typeof value}`);
  }
  if (value < min || value > max) throw new RangeError(`${field} must be from ${min} to ${max}, got ${value}`);
  return value;
}

/** checkInteger() for hot paths: `field.name` is built only when the value is refused. */
export function checkIntegerIn(value: unknown, min: number, max: number, field: string, name: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) return value;
  return checkInteger(value, `${field}.${name}`, min, max);
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
