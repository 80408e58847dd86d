/**
 * IP addresses as every API takes and returns them: strict parsing with
 * ipaddr.js (a fast path for plain dotted quads), the family an address
 * belongs to, the kernel's 16-byte form, and text for the bytes the kernel
 * returns. A refused address throws the checking module's error naming the
 * field (util/check.ts), before a byte is sent.
 */
import ipaddr from 'ipaddr.js';

import { wrongType, wrongValue } from './check.js';

/** An address family by the names `ip` uses: IPv4 or IPv6. */
export type AddressFamily = 'inet' | 'inet6';

/** An address as parseAddress() accepted it. */
export interface ParsedAddress {
  /** Which family the address belongs to. */
  family: AddressFamily;
  /** Canonical text: dotted quad, or RFC 5952 compressed IPv6. */
  text: string;
}

/**
 * IPv6 text as ipaddr.js must be given it. It reads "::a.b.c.d", the
 * deprecated IPv4-compatible form (RFC 4291 2.5.5.1, ::0:a.b.c.d to the
 * kernel, inet_pton and `ip`), as IPv4-mapped (::ffff:a.b.c.d), another
 * address; spelt with the zero group it reads it as written.
 */
export function ipv6Spelling(value: string): string {
  return value.charCodeAt(0) === 58 && IPV4_COMPATIBLE.test(value) ? `::0:${value.slice(2)}` : value;
}

const IPV4_COMPATIBLE = /^::\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/**
 * A strict IPv4 dotted quad or IPv6 address (no zone, no prefix length).
 * Not a string: TypeError ERR_INVALID_ARG_TYPE; a string that is not an
 * address: TypeError ERR_INVALID_ARG_VALUE; both name `field`.
 */
export function parseAddress(value: unknown, field: string): ParsedAddress {
  if (typeof value !== 'string') throw wrongType(field, 'an IPv4 or IPv6 address string', value);
  if (ipaddr.IPv4.isValidFourPartDecimal(value)) {
    return { family: 'inet', text: ipaddr.IPv4.parse(value).toString() };
  }
  if (!value.includes('%') && ipaddr.IPv6.isValid(value)) {
    return { family: 'inet6', text: ipaddr.IPv6.parse(ipv6Spelling(value)).toRFC5952String() };
  }
  throw wrongValue(field, 'an IPv4 or IPv6 address', value);
}

/**
 * Writes an address into `out` at `offset` in the kernel's 16-byte form
 * (union nf_inet_addr: IPv4 in the first four bytes, the rest left as they
 * are) and returns its family. Same acceptance and errors as
 * parseAddress(), naming `field.name`.
 */
export function writeAddress(value: unknown, out: Uint8Array, offset: number, field: string, name: string): AddressFamily {
  if (typeof value === 'string') {
    if (writeDottedQuad(value, out, offset)) return 'inet';
    if (value.includes(':') && !value.includes('%') && ipaddr.IPv6.isValid(value)) {
      out.set(ipaddr.IPv6.parse(ipv6Spelling(value)).toByteArray(), offset);
      return 'inet6';
    }
  }
  // The field's name is built only now: a large batch validates millions of fields.
  return parseAddress(value, `${field}.${name}`).family; // throws, naming the field
}

/** Where ipv4Text spells an address: at most 15 characters. */
const quad = new Uint8Array(16);

/**
 * The dotted quad of the 4 bytes at `at`, spelled into a scratch buffer and
 * made one flat string by a single String.fromCharCode: no array or string
 * pieces per address (a template literal or `+` builds a tree of pieces for
 * 13 characters or more, twice the memory until flattened), and no call
 * out of JavaScript (Buffer's latin1 decoding is one), which matters in a
 * dump of 100,000 destinations.
 */
export function ipv4Text(bytes: Uint8Array, at: number): string {
  let n = 0;
  for (let k = 0; k < 4; k++) {
    if (k) quad[n++] = 0x2e; // '.'
    let v = bytes[at + k];
    if (v >= 100) {
      quad[n++] = 0x30 + ((v / 100) | 0);
      v %= 100;
      quad[n++] = 0x30 + ((v / 10) | 0);
      v %= 10;
    } else if (v >= 10) {
      quad[n++] = 0x30 + ((v / 10) | 0);
      v %= 10;
    }
    quad[n++] = 0x30 + v;
  }
  return quadString(n);
}

/** The first n (7 to 15) characters of `quad` as a string, with as many arguments as characters. */
function quadString(n: number): string {
  const q = quad;
  switch (n) {
    case 7: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6]);
    case 8: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]);
    case 9: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8]);
    case 10: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9]);
    case 11: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10]);
    case 12: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11]);
    case 13: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12]);
    case 14: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12], q[13]);
    default: return String.fromCharCode(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7], q[8], q[9], q[10], q[11], q[12], q[13], q[14]);
  }
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
  // One loop with one character read, kept small: the optimizing compiler
  // copies this function into every caller it inlines it into, and a
  // batch's first call pays for each of those compilations (on V8's
  // compiler threads, while the batch is being written).
  let result = 0;
  let part = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x2e) {
      // '.'
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

/** IPv4 netmask text for a prefix length (24 -> 255.255.255.0). */
export function ipv4MaskFromPrefix(prefix: number): string {
  return ipaddr.IPv4.subnetMaskFromPrefixLength(prefix).toString();
}

/** The prefix length of a contiguous IPv4 mask, or null when it is not one. */
export function ipv4PrefixFromMask(mask: string): number | null {
  if (!ipaddr.IPv4.isValidFourPartDecimal(mask)) return null;
  return ipaddr.IPv4.parse(mask).prefixLengthFromSubnetMask();
}
