/**
 * Set elements to the kernel's form and back. Keys of interval sets are
 * kept as the kernel keeps them: a concatenation as a first and last key
 * (NFTA_SET_ELEM_KEY_END), a single type as a start element and an end
 * element one past the last value (NFT_SET_ELEM_INTERVAL_END), read back
 * merged into prefixes and ranges.
 */
import { integer, knownFields, object, outOfRange, string, wrongType } from '../util/check.js';
import { type DataType, typeInfo } from './datatypes.js';
import { bytes, named } from './expressions/fields.js';
import { type KeyBytes, dataBytes, keyBytes, keyOf, predecessor, successor } from './keys.js';
import { K, type RawAttrs } from './native.js';
import { NAME_MAX_BYTES, verdicts } from './names.js';
import type { SetShape } from './objects.js';
import type { Element, OtherType, Verdict } from './types.js';
import { UDATA, commentOf, stringRecord } from './udata.js';

const elementFields = new Set(['key', 'value', 'timeout', 'expires', 'comment', 'counter']);

function keyOfElement(shape: SetShape, key: unknown, field: string): KeyBytes {
  if (!Array.isArray(shape.key)) {
    const b = bytes(key, field, shape.key.len);
    return { first: b, last: b };
  }
  return keyBytes(shape.key, key, shape.interval, field);
}

function valueToRaw(shape: SetShape, v: unknown, field: string): RawAttrs | Buffer {
  if (shape.value === 'verdict') {
    const o = object(v, field);
    knownFields(o, new Set(['verdict', 'chain']), field);
    const code = named(verdicts, o.verdict, `${field}.verdict`);
    const needsChain = code === K.NFT_JUMP || code === K.NFT_GOTO;
    if (!needsChain) return { code };
    const chain = string(o.chain, field, 'chain');
    if (chain === '' || Buffer.byteLength(chain) > NAME_MAX_BYTES) throw outOfRange(`${field}.chain`, `a chain name of 1 to ${NAME_MAX_BYTES} bytes`, chain);
    return { code, chain };
  }
  const types = shape.value as DataType[] | OtherType;
  return Array.isArray(types) ? dataBytes(types, v, field) : bytes(v, field, types.len);
}

/** The raw elements for adding (`add`) or deleting these elements. */
export function elementsToRaw(shape: SetShape, elements: readonly Element[], field: string, add: boolean): RawAttrs[] {
  if (!Array.isArray(elements)) throw wrongType(field, 'an array of elements', elements);
  const rbtree = shape.interval && Array.isArray(shape.key) && shape.key.length === 1;
  const out: Array<{ raw: RawAttrs; first: Buffer }> = [];
  elements.forEach((e, i) => {
    const at = `${field}[${i}]`;
    knownFields(object(e, at), elementFields, at);
    const k = keyOfElement(shape, e.key, `${at}.key`);
    const raw: RawAttrs = {};
    if (add && e.timeout !== undefined) raw.timeout = integer(e.timeout, `${at}.timeout`, 1, Number.MAX_SAFE_INTEGER);
    raw.key = k.first;
    if (shape.interval && !rbtree) raw.keyEnd = k.last;
    if (shape.value !== undefined) {
      if (add) {
        if (e.value === undefined) throw wrongType(`${at}.value`, "the map's value", undefined);
        raw.data = valueToRaw(shape, e.value, `${at}.value`);
      }
    } else if (e.value !== undefined) {
      throw wrongType(`${at}.value`, 'absent: the set is not a map', e.value);
    }
    if (add && e.comment !== undefined) {
      const c = string(e.comment, at, 'comment');
      if (Buffer.byteLength(c) > 127) throw outOfRange(`${at}.comment`, 'at most 127 bytes', c);
      raw.userdata = stringRecord(UDATA.COMMENT, c);
    }
    out.push({ raw, first: k.first });
    if (rbtree) {
      // The interval's end: one past its last value, unless that is the top.
      const end = successor(k.last);
      if (end) out.push({ raw: { flags: K.NFT_SET_ELEM_INTERVAL_END, key: end }, first: end });
    }
  });
  if (!rbtree) return out.map((x) => x.raw);
  // In key order, as nft sends them. (nft also adds an end at zero below
  // the lowest interval on a first fill; the kernel's lookup needs none.)
  out.sort((a, b) => Buffer.compare(a.first, b.first) || ((a.raw.flags as number | undefined) ?? 0) - ((b.raw.flags as number | undefined) ?? 0));
  return out.map((x) => x.raw);
}

function valueFromRaw(shape: SetShape, d: unknown): Element['value'] {
  if (shape.value === 'verdict') {
    const v = d as RawAttrs;
    const out: Verdict = { verdict: verdicts.name(v.code as number) };
    if (v.chain !== undefined) out.chain = v.chain as string;
    return out;
  }
  const types = shape.value as DataType[] | OtherType;
  return Array.isArray(types) ? keyOf(types, d as Buffer) : Buffer.from(d as Uint8Array);
}

function fromOne(shape: SetShape, r: RawAttrs, first: Buffer, last: Buffer): Element {
  const e: Element = { key: Array.isArray(shape.key) ? keyOf(shape.key, first, last) : Buffer.from(first) };
  if (r.data !== undefined && shape.value !== undefined) e.value = valueFromRaw(shape, r.data);
  if (r.timeout !== undefined) e.timeout = r.timeout as number;
  if (r.expiration !== undefined) e.expires = r.expiration as number;
  const c = commentOf(r.userdata as Uint8Array | undefined);
  if (c !== undefined) e.comment = c;
  const exprs = [r.expr, ...((r.expressions as RawAttrs[] | undefined) ?? [])].filter(Boolean) as RawAttrs[];
  const counter = exprs.find((x) => x.type === 'counter');
  if (counter) e.counter = { packets: (counter.packets as bigint | undefined) ?? 0n, bytes: (counter.bytes as bigint | undefined) ?? 0n };
  return e;
}

/** Elements as the kernel listed them, back in the form elementsToRaw() takes. */
export function elementsFromRaw(shape: SetShape, raws: readonly RawAttrs[]): Element[] {
  const rbtree = shape.interval && Array.isArray(shape.key) && shape.key.length === 1;
  if (!rbtree) {
    return raws.map((r) => {
      const first = Buffer.from(r.key as Uint8Array);
      return fromOne(shape, r, first, r.keyEnd ? Buffer.from(r.keyEnd as Uint8Array) : first);
    });
  }
  // Start and end elements, in key order: each start runs to the next end.
  const sorted = [...raws].sort((a, b) => Buffer.compare(a.key as Uint8Array, b.key as Uint8Array));
  const out: Element[] = [];
  const len = typeInfo((shape.key as DataType[])[0]).len;
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i];
    if (((r.flags as number | undefined) ?? 0) & K.NFT_SET_ELEM_INTERVAL_END) continue;
    const first = Buffer.from(r.key as Uint8Array);
    const next = sorted[i + 1];
    const last = next && ((next.flags as number | undefined) ?? 0) & K.NFT_SET_ELEM_INTERVAL_END
      ? predecessor(Buffer.from(next.key as Uint8Array))
      : Buffer.alloc(len, 0xff);
    out.push(fromOne(shape, r, first, last));
  }
  return out;
}
