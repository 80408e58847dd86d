/**
 * The data types set keys and map values are declared with, as nft names
 * them, and their values: text and numbers to the kernel's bytes and back.
 *
 * The kernel stores a set's key type as an opaque number (NFTA_SET_KEY_TYPE)
 * that only nft interprets; these are nft's own numbers for its types
 * (nftables' datatype.h, six bits each in a concatenation), which no kernel
 * header has. Writing the same numbers is what makes `nft list` show
 * `type ipv4_addr . inet_service` for a set this library made.
 */
import ipaddr from 'ipaddr.js';

import { dottedQuadValue, ipv4Text, ipv6Spelling } from '../util/address.js';
import { outOfRange, wrongType, wrongValue } from '../util/check.js';
import { l4protos } from './names.js';

/** The key and value types sets and maps take, by nft's names. */
export type DataType = 'ipv4_addr' | 'ipv6_addr' | 'ether_addr' | 'inet_proto' | 'inet_service' | 'mark' | 'ifname' | 'integer';

interface TypeInfo {
  /** nft's number for the type. */
  id: number;
  /** Bytes a value takes (before padding to a register's 4 bytes in a concatenation). */
  len: number;
  /** nft's BYTEORDER_* for the type: 1 host, 2 big endian. */
  byteorder: 1 | 2;
}

const TYPES: Readonly<Record<DataType, TypeInfo>> = {
  ipv4_addr: { id: 7, len: 4, byteorder: 2 },
  ipv6_addr: { id: 8, len: 16, byteorder: 2 },
  ether_addr: { id: 9, len: 6, byteorder: 2 },
  inet_proto: { id: 12, len: 1, byteorder: 2 },
  inet_service: { id: 13, len: 2, byteorder: 2 },
  mark: { id: 19, len: 4, byteorder: 1 },
  ifname: { id: 41, len: 16, byteorder: 1 },
  // nft's plain integer, as numgen and hash make it (4 bytes, host order): `typeof numgen random mod 2`.
  integer: { id: 4, len: 4, byteorder: 1 },
};
/** Every DataType, for checks and messages. */
export const dataTypes = Object.keys(TYPES) as DataType[];
/** nft's number for its verdict type (a map's value type when it maps to verdicts). */
export const VERDICT_TYPE_ID = 1;
/** Bits per type in a concatenation's type number (nft's TYPE_BITS). */
const TYPE_BITS = 6;
/** nft's expression type number for a concatenation (EXPR_CONCAT), in a set's key "typeof" record. */
export const EXPR_CONCAT = 13;

/** nft's number, length and byte order of a type. */
export function typeInfo(t: DataType): TypeInfo {
  return TYPES[t];
}

/** The type nft numbers `id`, if this library knows it. */
export function typeById(id: number): DataType | undefined {
  return dataTypes.find((t) => TYPES[t].id === id);
}

/** A key of one or more types: its type number, length, and each field's length (unpadded). */
export function keyLayout(types: readonly DataType[]): { id: number; len: number; fields: number[] } {
  let id = 0;
  let len = 0;
  for (const t of types) {
    id = (id << TYPE_BITS) | TYPES[t].id;
    len += types.length > 1 ? pad4(TYPES[t].len) : TYPES[t].len;
  }
  return { id: id >>> 0, len, fields: types.map((t) => TYPES[t].len) };
}

/** The types of a key type number; undefined when one is not a type this library knows. */
export function typesOfKey(id: number): DataType[] | undefined {
  const out: DataType[] = [];
  for (let rest = id >>> 0; rest !== 0; rest = Math.floor(rest / (1 << TYPE_BITS))) {
    const t = typeById(rest & ((1 << TYPE_BITS) - 1));
    if (!t) return undefined;
    out.unshift(t);
  }
  return out.length ? out : undefined;
}

/** `n` rounded up to a register's 4 bytes. */
export function pad4(n: number): number {
  return (n + 3) & ~3;
}

/** One value of type `t` as the kernel compares it (network order where nft uses it). */
export function valueBytes(t: DataType, v: unknown, field: string): Buffer {
  const b = Buffer.alloc(TYPES[t].len);
  writeValue(t, v, field, -1, b, 0);
  return b;
}

/**
 * Writes one value of type `t` into `out` at `at` (its typeInfo().len
 * bytes). A refused value names `field`, or `field[part]` when `part` is 0
 * or more: the path is built only for a value that is refused, as a set of
 * 100,000 elements writes this many values.
 */
export function writeValue(t: DataType, v: unknown, field: string, part: number, out: Buffer, at: number): void {
  switch (t) {
    case 'ipv4_addr': {
      const n = typeof v === 'string' ? dottedQuadValue(v) : -1;
      if (n < 0) throw typeof v === 'string' ? wrongValue(at_(field, part), 'an IPv4 address', v) : wrongType(at_(field, part), 'an IPv4 address string', v);
      out.writeUInt32BE(n, at);
      return;
    }
    case 'ipv6_addr':
      if (typeof v !== 'string') throw wrongType(at_(field, part), 'an IPv6 address string', v);
      if (!v.includes(':') || v.includes('%') || !ipaddr.IPv6.isValid(v)) throw wrongValue(at_(field, part), 'an IPv6 address', v);
      out.set(ipaddr.IPv6.parse(ipv6Spelling(v)).toByteArray(), at);
      return;
    case 'ether_addr':
      if (typeof v !== 'string') throw wrongType(at_(field, part), 'an Ethernet address string', v);
      if (!/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(v)) throw wrongValue(at_(field, part), 'an Ethernet address (aa:bb:cc:dd:ee:ff)', v);
      v.split(':').forEach((x, i) => (out[at + i] = parseInt(x, 16)));
      return;
    case 'inet_proto': {
      const n = typeof v === 'string' ? l4protos.byName[v as keyof typeof l4protos.byName] : v;
      if (typeof v === 'string' && n === undefined) throw wrongValue(at_(field, part), `a protocol (${l4protos.names.join(', ')}) or its number`, v);
      out[at] = uint(n, field, part, 0xff);
      return;
    }
    case 'inet_service':
      out.writeUInt16BE(uint(v, field, part, 0xffff), at);
      return;
    case 'mark':
    case 'integer':
      out.writeUInt32LE(uint(v, field, part, 0xffffffff), at); // nft keeps these in host order
      return;
    case 'ifname': {
      if (typeof v !== 'string') throw wrongType(at_(field, part), 'an interface name', v);
      const s = Buffer.from(v);
      if (s.length === 0 || s.length > 15 || s.includes(0)) throw outOfRange(at_(field, part), 'an interface name of 1 to 15 bytes', v);
      out.fill(0, at, at + 16);
      s.copy(out, at);
      return;
    }
  }
}

/** A value of type `t` back from the kernel's bytes, as valueBytes() takes it. */
export function valueOf(t: DataType, b: Buffer): string | number {
  return valueAt(t, b, 0);
}

/** A value of type `t` back from the bytes at `at`. */
export function valueAt(t: DataType, b: Buffer, at: number): string | number {
  switch (t) {
    case 'ipv4_addr':
      return ipv4Text(b, at);
    case 'ipv6_addr':
      return (ipaddr.fromByteArray([...b.subarray(at, at + 16)]) as ipaddr.IPv6).toRFC5952String();
    case 'ether_addr':
      return [...b.subarray(at, at + 6)].map((x) => x.toString(16).padStart(2, '0')).join(':');
    case 'inet_proto':
      return l4protos.name(b[at]);
    case 'inet_service':
      return b.readUInt16BE(at);
    case 'mark':
    case 'integer':
      return b.readUInt32LE(at);
    case 'ifname': {
      const end = b.indexOf(0, at);
      return b.toString('utf8', at, end < 0 || end > at + 16 ? at + 16 : end);
    }
  }
}

/** A refused value's path. */
function at_(field: string, part: number): string {
  return part < 0 ? field : `${field}[${part}]`;
}

function uint(v: unknown, field: string, part: number, max: number): number {
  if (typeof v !== 'number') throw wrongType(at_(field, part), `an integer from 0 to ${max}`, v);
  if (!Number.isInteger(v) || v < 0 || v > max) throw outOfRange(at_(field, part), `an integer from 0 to ${max}`, v);
  return v;
}
