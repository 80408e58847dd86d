/**
 * Checks and conversions the expression codecs share: registers, named
 * values, flag lists and byte strings. Every check throws the library's
 * argument errors (lib/util/check.ts), naming the field.
 */
import { integer, outOfRange, wrongType, wrongValue } from '../../util/check.js';
import type { RawAttrs, RawValue } from '../native.js';
import { type Names, REG_MAX } from '../names.js';

/** A register number: 0 (verdict), 1-4 (16 bytes), 8-23 (4 bytes). */
export function reg(v: unknown, field: string): number {
  const r = integer(v, field, 0, REG_MAX);
  if (r > 4 && r < 8) throw outOfRange(field, 'a register: 0-4 or 8-23', r);
  return r;
}

/** A name of `names`, or the kernel's number for it (as a read gives back for values without a name). */
export function named<N extends string>(names: Names<N>, v: unknown, field: string): number {
  if (typeof v === 'number') return integer(v, field, 0, 0xffffffff);
  if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(names.byName, v)) return names.byName[v as N];
  const expected = `one of ${names.names.map((n) => JSON.stringify(n)).join(', ')}`;
  if (typeof v !== 'string') throw wrongType(field, expected, v);
  throw wrongValue(field, expected, v);
}

/** An array of flag names (or bit values) to their bits. */
export function flagBits<N extends string>(names: Names<N>, v: unknown, field: string): number {
  if (!Array.isArray(v)) throw wrongType(field, `an array of ${names.names.map((n) => JSON.stringify(n)).join(', ')}`, v);
  let bits = 0;
  v.forEach((f, i) => {
    bits = (bits | named(names, f, `${field}[${i}]`)) >>> 0;
  });
  return bits;
}

/** Bytes for a register's value: a Buffer or Uint8Array of 1 to `max` bytes. */
export function bytes(v: unknown, field: string, max = 64): Buffer {
  if (!(v instanceof Uint8Array)) throw wrongType(field, 'a Buffer or Uint8Array', v);
  if (v.length < 1 || v.length > max) throw outOfRange(field, `1 to ${max} bytes`, v.length);
  return Buffer.from(v);
}

const U64_MAX = 2n ** 64n - 1n;

/** A 64-bit counter value (packets, bytes): a bigint from 0 to 2^64-1. */
export function u64(v: unknown, field: string): bigint {
  if (typeof v !== 'bigint') throw wrongType(field, 'a bigint from 0 to 2^64-1', v);
  if (v < 0n || v > U64_MAX) throw outOfRange(field, 'a bigint from 0 to 2^64-1', v);
  return v;
}

/** Copies the defined entries of `o` (raw attributes leave out what is absent). */
export function defined(o: Record<string, RawValue | undefined>): RawAttrs {
  const out: RawAttrs = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
  return out;
}

/** Raw numbers and byte strings, as the addon hands them back. */
export const num = (a: RawAttrs, k: string): number | undefined => a[k] as number | undefined;
/** A raw byte string. */
export const buf = (a: RawAttrs, k: string): Buffer | undefined => a[k] as Buffer | undefined;

/** Copies the attributes of `a` that are present onto `e`, under the names `keys` maps them to (`{ raw: typed }`), as they came. */
export function copyPresent<T extends object>(e: T, a: RawAttrs, keys: Readonly<Record<string, keyof T & string>>): T {
  for (const [raw, typed] of Object.entries(keys)) if (a[raw] !== undefined) (e as Record<string, unknown>)[typed] = a[raw];
  return e;
}
