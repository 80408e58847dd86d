/**
 * Set keys: what a caller writes (`'10.0.0.1'`, `80`, `'10.0.0.0/8'`,
 * `'1000-2000'`, `['10.0.0.1', 'tcp', 80]` for a concatenation) to the
 * kernel's key bytes and back. Ranges and prefixes go in interval sets
 * only; each is kept as a first and last value.
 */
import { wrongType, wrongValue } from '../util/check.js';
import { type DataType, pad4, typeInfo, valueAt, valueBytes, writeValue } from './datatypes.js';

/** One part of a key: a value, or in an interval set a prefix (`'10.0.0.0/8'`) or range (`'1000-2000'`). */
export type KeyPart = string | number;
/** A key: one part, or one per type of a concatenation. */
export type Key = KeyPart | KeyPart[];

/** A key as first and last bytes (equal unless a part is a range or prefix). */
export interface KeyBytes {
  first: Buffer;
  last: Buffer;
}

const isAddress = (t: DataType) => t === 'ipv4_addr' || t === 'ipv6_addr';

/**
 * Marks and integers are kept in host order, but nft writes them big end
 * first in interval sets (concatenations included): the kernel orders
 * interval keys byte by byte, and only that way is their byte order their
 * numeric order. Plain sets and map values keep them in host order.
 */
const bigEndInInterval = (t: DataType, interval: boolean) => interval && (t === 'mark' || t === 'integer');

/** A value's bytes in a key, in the order the set keeps it (valueBytes() gives host order). */
function keyValueBytes(t: DataType, v: unknown, interval: boolean, field: string): Buffer {
  const b = valueBytes(t, v, field);
  return bigEndInInterval(t, interval) ? b.swap32() : b;
}

/** A value back from a key's bytes at `at`, in the order the set keeps it. */
function keyValueAt(t: DataType, b: Buffer, at: number, interval: boolean): KeyPart {
  return bigEndInInterval(t, interval) ? b.readUInt32BE(at) : valueAt(t, b, at);
}

/** One part's first and last value bytes. */
function partBytes(t: DataType, v: unknown, interval: boolean, field: string): KeyBytes {
  if (interval && typeof v === 'string') {
    const slash = isAddress(t) ? v.indexOf('/') : -1;
    if (slash >= 0) {
      const first = keyValueBytes(t, v.slice(0, slash), interval, field);
      const text = v.slice(slash + 1);
      const bits = Number(text);
      if (!/^\d+$/.test(text) || bits > first.length * 8) throw wrongValue(field, `a prefix length from 0 to ${first.length * 8}`, v);
      const last = Buffer.from(first);
      for (let i = 0; i < first.length * 8; i++) {
        const byte = i >> 3;
        const mask = 0x80 >> (i & 7);
        if (i < bits) continue;
        if (first[byte] & mask) throw wrongValue(field, 'a prefix whose address has no bits set past its length', v);
        last[byte] |= mask;
      }
      return { first, last };
    }
    const dash = v.indexOf('-', 1);
    if (dash > 0) {
      const lo = v.slice(0, dash);
      const hi = v.slice(dash + 1);
      const num = (s: string) => (/^\d+$/.test(s) && t !== 'ipv4_addr' ? Number(s) : s);
      const first = keyValueBytes(t, num(lo), interval, field);
      const last = keyValueBytes(t, num(hi), interval, field);
      // The kernel's order, byte by byte (keyValueBytes() gives marks big end first here).
      if (Buffer.compare(first, last) > 0) throw wrongValue(field, 'a range whose first value is not above its last', v);
      return { first, last };
    }
  }
  const b = keyValueBytes(t, v, interval, field);
  return { first: b, last: b };
}

/** A key's bytes for a set of `types` (concatenated parts padded to 4 bytes each). */
export function keyBytes(types: readonly DataType[], key: unknown, interval: boolean, field: string): KeyBytes {
  if (types.length === 1) {
    if (Array.isArray(key)) throw wrongType(field, `a ${types[0]} value`, key);
    return partBytes(types[0], key, interval, field);
  }
  if (!Array.isArray(key) || key.length !== types.length)
    throw wrongType(field, `an array of ${types.length} values (${types.join(' . ')})`, key);
  const first: Buffer[] = [];
  const last: Buffer[] = [];
  types.forEach((t, i) => {
    const p = partBytes(t, key[i], interval, `${field}[${i}]`);
    const pad = Buffer.alloc(pad4(p.first.length) - p.first.length);
    first.push(p.first, pad);
    last.push(p.last, pad);
  });
  return { first: Buffer.concat(first), last: Buffer.concat(last) };
}

/**
 * Writes a plain key (no range or prefix) of a set of `types` into `out` at
 * `at`: each part at its register's offset, the padding left as it is (the
 * caller gives zeroed room). The same bytes as keyBytes(..., false, ...).first.
 */
export function writeKey(types: readonly DataType[], key: unknown, field: string, out: Buffer, at: number): void {
  if (types.length === 1) {
    if (Array.isArray(key)) throw wrongType(field, `a ${types[0]} value`, key);
    writeValue(types[0], key, field, -1, out, at);
    return;
  }
  if (!Array.isArray(key) || key.length !== types.length)
    throw wrongType(field, `an array of ${types.length} values (${types.join(' . ')})`, key);
  for (let i = 0; i < types.length; i++) {
    writeValue(types[i], key[i], field, i, out, at);
    at += pad4(typeInfo(types[i]).len);
  }
}

/**
 * A reader of plain keys of `types` (keyOf() with first and last equal,
 * without copies): each part at its register's offset. `interval`: the
 * keys are an interval set's; without it, a plain set's or a map's values.
 */
export function keyReader(types: readonly DataType[], interval = false): (b: Buffer, at: number) => Key {
  if (types.length === 1) {
    const [t] = types;
    return (b, at) => keyValueAt(t, b, at, interval);
  }
  const offsets = types.map((_, i) => types.slice(0, i).reduce((n, t) => n + pad4(typeInfo(t).len), 0));
  return (b, at) => {
    const out: KeyPart[] = new Array(types.length);
    for (let i = 0; i < types.length; i++) out[i] = keyValueAt(types[i], b, at + offsets[i], interval);
    return out;
  };
}

/** A value's bytes as a map value (no ranges). */
export function dataBytes(types: readonly DataType[], value: unknown, field: string): Buffer {
  return keyBytes(types, value, false, field).first;
}

/** One part of an interval set's key back from its first and last bytes: a value, a prefix or a range. */
function partOf(t: DataType, first: Buffer, last: Buffer): KeyPart {
  const a = keyValueAt(t, first, 0, true);
  if (first.equals(last)) return a;
  if (isAddress(t)) {
    const bits = prefixLength(first, last);
    if (bits >= 0) return `${a}/${bits}`;
  }
  return `${a}-${keyValueAt(t, last, 0, true)}`;
}

/** The prefix length when first..last is exactly one prefix, else -1. */
function prefixLength(first: Buffer, last: Buffer): number {
  let bits = 0;
  const total = first.length * 8;
  while (bits < total && bitAt(first, bits) === bitAt(last, bits)) bits++;
  for (let i = bits; i < total; i++) if (bitAt(first, i) !== 0 || bitAt(last, i) !== 1) return -1;
  return bits;
}

function bitAt(b: Buffer, i: number): number {
  return (b[i >> 3] >> (7 - (i & 7))) & 1;
}

/** An interval set's key back from its first and last bytes (equal for a single value). */
export function keyOf(types: readonly DataType[], first: Buffer, last: Buffer = first): Key {
  if (types.length === 1) return partOf(types[0], first, last);
  const out: KeyPart[] = [];
  let at = 0;
  for (const t of types) {
    const n = typeInfo(t).len;
    out.push(partOf(t, first.subarray(at, at + n), last.subarray(at, at + n)));
    at += pad4(n);
  }
  return out;
}

/** The bytes after `b` as one big number (the end bound of an interval), or undefined past the top. */
export function successor(b: Buffer): Buffer | undefined {
  const out = Buffer.from(b);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== 0xff) {
      out[i]++;
      return out;
    }
    out[i] = 0;
  }
  return undefined;
}

/** The bytes before `b` (the last value of an interval whose end bound is `b`). */
export function predecessor(b: Buffer): Buffer {
  const out = Buffer.from(b);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== 0) {
      out[i]--;
      return out;
    }
    out[i] = 0xff;
  }
  return out;
}
