/**
 * Set elements to the kernel's form and back: checked and written as the
 * bytes of their element list (element-codec.ts), read from the lists a
 * dump returns. Keys of interval sets are kept as the kernel keeps them: a
 * concatenation as a first and last key (NFTA_SET_ELEM_KEY_END), a single
 * type as a start element and an end element one past the last value
 * (NFT_SET_ELEM_INTERVAL_END), read back merged into prefixes and ranges.
 */
import { FieldNames, name as checkName, integer, object, outOfRange, prefixField, string, wrongType } from '../util/check.js';
import { type DataType, keyLayout } from './datatypes.js';
import { type ElementView, ElementWriter, readElements } from './element-codec.js';
import { bytes, named } from './expressions/fields.js';
import { type KeyBytes, dataBytes, keyBytes, keyOf, keyReader, predecessor, successor, writeKey } from './keys.js';
import { K } from './native.js';
import { NAME_MAX_BYTES, NAME_RULE, verdicts } from './names.js';
import type { SetShape } from './objects.js';
import type { Element, OtherType, Verdict } from './types.js';
import { UDATA, commentOf, stringRecord, u32Record } from './udata.js';

const elementFields = new FieldNames(new Set(['key', 'value', 'timeout', 'expires', 'comment', 'counter']));
const verdictFields = new FieldNames(new Set(['verdict', 'chain']));

/** The bytes a key or value of these types takes, or of a type this library does not know. */
function lengthOf(types: DataType[] | OtherType): number {
  return Array.isArray(types) ? keyLayout(types).len : types.len;
}

function keyOfElement(shape: SetShape, key: unknown, field: string): KeyBytes {
  if (!Array.isArray(shape.key)) {
    const b = bytes(key, field, shape.key.len);
    return { first: b, last: b };
  }
  return keyBytes(shape.key, key, shape.interval, field);
}

/** A plain key (no ranges), written in place. */
function writePlainKey(w: ElementWriter, shape: SetShape, keyLen: number, key: unknown): void {
  const at = w.value(K.NFTA_SET_ELEM_KEY, keyLen);
  if (Array.isArray(shape.key)) writeKey(shape.key, key, '.key', w.buf, at);
  else w.buf.set(bytes(key, '.key', shape.key.len), at);
}

function writeValue(w: ElementWriter, shape: SetShape, v: unknown): void {
  if (shape.value === 'verdict') {
    const o = object(v, '.value');
    verdictFields.check(o, '.value');
    const code = named(verdicts, o.verdict, '.value.verdict');
    if (code !== K.NFT_JUMP && code !== K.NFT_GOTO) return w.verdict(K.NFTA_SET_ELEM_DATA, code);
    const chain = string(o.chain, '.value', 'chain');
    if (chain === '' || Buffer.byteLength(chain) > NAME_MAX_BYTES) throw outOfRange('.value.chain', `a chain name of 1 to ${NAME_MAX_BYTES} bytes`, chain);
    return w.verdict(K.NFTA_SET_ELEM_DATA, code, chain);
  }
  const types = shape.value as DataType[] | OtherType;
  const at = w.value(K.NFTA_SET_ELEM_DATA, lengthOf(types));
  w.buf.set(Array.isArray(types) ? dataBytes(types, v, '.value') : bytes(v, '.value', types.len), at);
}

/**
 * One element's attributes, in nft's order (timeout, key, key end, data,
 * userdata; writeEnd() writes an interval's end). Fields are named from
 * the element ('.key[0]'): the caller roots them.
 */
function writeElement(w: ElementWriter, shape: SetShape, keyLen: number, e: Element, add: boolean, key: KeyBytes | undefined, open = false): void {
  elementFields.check(object(e, ''), '');
  w.begin();
  if (add && e.timeout !== undefined) w.u64(K.NFTA_SET_ELEM_TIMEOUT, integer(e.timeout, '.timeout', 1, Number.MAX_SAFE_INTEGER));
  if (key) {
    const first = w.value(K.NFTA_SET_ELEM_KEY, keyLen);
    w.buf.set(key.first, first);
    if (shape.interval && !isRbtree(shape)) {
      const last = w.value(K.NFTA_SET_ELEM_KEY_END, keyLen);
      w.buf.set(key.last, last);
    }
  } else {
    writePlainKey(w, shape, keyLen, e.key);
  }
  if (shape.value === 'object') {
    if (add) w.string(K.NFTA_SET_ELEM_OBJREF, checkName(e.value, '.value', NAME_RULE));
  } else if (shape.value !== undefined) {
    if (add) {
      if (e.value === undefined) throw wrongType('.value', "the map's value", undefined);
      writeValue(w, shape, e.value);
    }
  } else if (e.value !== undefined) {
    throw wrongType('.value', 'absent: the set is not a map', e.value);
  }
  if (add) {
    const records: Buffer[] = [];
    if (e.comment !== undefined) {
      const c = string(e.comment, '', 'comment');
      if (Buffer.byteLength(c) > 127) throw outOfRange('.comment', 'at most 127 bytes', c);
      records.push(stringRecord(UDATA.COMMENT, c));
    }
    // nft marks an interval that runs to the top (it has no end element) in the element's userdata.
    if (open) records.push(u32Record(UDATA.ELEM_FLAGS, UDATA.ELEM_F_INTERVAL_OPEN));
    if (records.length) w.bytes(K.NFTA_SET_ELEM_USERDATA, records.length === 1 ? records[0] : Buffer.concat(records));
  }
  w.end();
}

const isRbtree = (shape: SetShape) => shape.interval && Array.isArray(shape.key) && shape.key.length === 1;

/**
 * The element list for adding (`add`) or deleting these elements: their
 * items' bytes (element-codec.ts). Where the list's items are not the
 * elements one for one (a single-type interval set: a start and an end
 * item each, in key order), `origins` gets, for each item in order, the
 * index of the element it came from, so that a refused item can be named
 * by the caller's element.
 */
export function elementsToRaw(shape: SetShape, elements: readonly Element[], field: string, add: boolean, origins?: number[]): Buffer {
  if (!Array.isArray(elements)) throw wrongType(field, 'an array of elements', elements);
  const keyLen = lengthOf(shape.key);
  const w = new ElementWriter(elements.length * (16 + keyLen));
  if (!shape.interval) {
    for (let i = 0; i < elements.length; i++) {
      try {
        writeElement(w, shape, keyLen, elements[i], add, undefined);
      } catch (err) {
        throw prefixField(err, `${field}[${i}]`);
      }
    }
    return w.take();
  }
  const rooted = (i: number, write: () => void) => {
    try {
      write();
    } catch (err) {
      throw prefixField(err, `${field}[${i}]`);
    }
  };
  // Interval sets: each key as its first and last bytes.
  const keys = elements.map((e, i) => {
    let k: KeyBytes | undefined;
    rooted(i, () => (k = keyOfElement(shape, object(e, '').key, '.key')));
    return k!;
  });
  if (!isRbtree(shape)) {
    elements.forEach((e, i) => rooted(i, () => writeElement(w, shape, keyLen, e, add, keys[i])));
    return w.take();
  }
  // A single type: a start element, and an end element one past the
  // interval's last value (unless that is the top), all in key order, as
  // nft sends them; where one interval ends and the next begins (adjacent
  // intervals), the end goes before the start. (nft also adds an end at
  // zero below the lowest interval on a first fill; the kernel's lookup
  // needs none.)
  if (add) refuseOverlaps(elements, keys, field);
  const parts: Array<{ first: Buffer; end: boolean; element: number; write: () => void }> = [];
  elements.forEach((e, i) => {
    const end = successor(keys[i].last);
    parts.push({ first: keys[i].first, end: false, element: i, write: () => rooted(i, () => writeElement(w, shape, keyLen, e, add, keys[i], !end)) });
    if (end) parts.push({ first: end, end: true, element: i, write: () => writeEnd(w, end) });
  });
  parts.sort((a, b) => Buffer.compare(a.first, b.first) || Number(b.end) - Number(a.end));
  for (const p of parts) {
    p.write();
    origins?.push(p.element);
  }
  return w.take();
}

/**
 * Intervals of one add that overlap are refused before anything is sent,
 * naming both, as nft refuses them ("conflicting intervals specified"):
 * the kernel would refuse the change (EEXIST) and so the whole transaction.
 * The same interval twice is let through, as nft lets it.
 */
function refuseOverlaps(elements: readonly Element[], keys: readonly KeyBytes[], field: string): void {
  const order = keys.map((_, i) => i).sort((a, b) => Buffer.compare(keys[a].first, keys[b].first) || Buffer.compare(keys[a].last, keys[b].last));
  let reach = -1; // of the elements so far, the one whose interval ends last
  for (const i of order) {
    if (reach >= 0 && Buffer.compare(keys[i].first, keys[reach].last) <= 0) {
      const same = keys[i].first.equals(keys[reach].first) && keys[i].last.equals(keys[reach].last);
      if (!same) {
        const other = `${field}[${reach}]`;
        throw outOfRange(
          `${field}[${i}].key`,
          `an interval clear of the add's others (it overlaps ${other}, ${describeKey(elements[reach].key)}; the kernel refuses overlapping intervals: merge the two into one)`,
          elements[i].key,
        );
      }
    }
    if (reach < 0 || Buffer.compare(keys[i].last, keys[reach].last) > 0) reach = i;
  }
}

const describeKey = (key: unknown): string => (typeof key === 'string' ? key : JSON.stringify(key));

function writeEnd(w: ElementWriter, key: Buffer): void {
  w.begin();
  w.u32(K.NFTA_SET_ELEM_FLAGS, K.NFT_SET_ELEM_INTERVAL_END);
  const at = w.value(K.NFTA_SET_ELEM_KEY, key.length);
  w.buf.set(key, at);
  w.end();
}

/** How a map's values read back: typed by `shape.value`, or as bytes when the length is not the type's. */
function valueReader(shape: SetShape): (v: ElementView) => Element['value'] {
  if (shape.value === undefined) return () => undefined;
  if (shape.value === 'object') return (v) => v.objref;
  if (shape.value === 'verdict') {
    return (v) => {
      if (!v.verdict) return undefined;
      const out: Verdict = { verdict: verdicts.name(v.verdict.code) };
      if (v.verdict.chain !== undefined) out.chain = v.verdict.chain;
      return out;
    };
  }
  const types = shape.value;
  const len = lengthOf(types);
  const typed = Array.isArray(types) ? keyReader(types) : undefined;
  return (v) => (v.data < 0 ? undefined : typed && v.dataLen === len ? typed(v.b, v.data) : bytesAt(v.b, v.data, v.dataLen));
}

/** An element read, its key given (computed from `v`'s bytes by the caller). */
function elementOf(v: ElementView, key: Element['key'], valueOf: (v: ElementView) => Element['value']): Element {
  const e: Element = { key };
  const value = valueOf(v);
  if (value !== undefined) e.value = value;
  if (v.timeout !== undefined) e.timeout = v.timeout;
  if (v.expiration !== undefined) e.expires = v.expiration;
  const c = v.userdata && commentOf(v.userdata);
  if (c !== undefined) e.comment = c;
  if (v.counter) e.counter = v.counter;
  return e;
}

const bytesAt = (b: Buffer, at: number, len: number) => Buffer.from(b.subarray(at, at + len));

/** Elements as the kernel listed them (element lists, one per reply), back in the form elementsToRaw() takes. */
export function elementsFromRaw(shape: SetShape, lists: readonly Uint8Array[]): Element[] {
  const out: Element[] = [];
  const keyLen = lengthOf(shape.key);
  const types = Array.isArray(shape.key) ? shape.key : undefined;
  const valueOf = valueReader(shape);
  if (!isRbtree(shape)) {
    const plainKey = types && keyReader(types, shape.interval);
    for (const list of lists) {
      readElements(list, (v) => {
        let key: Element['key'];
        if (!types || !plainKey || v.keyLen !== keyLen || (v.keyEnd >= 0 && v.keyEndLen !== keyLen)) key = bytesAt(v.b, v.key, v.keyLen);
        else if (v.keyEnd < 0) key = plainKey(v.b, v.key);
        else key = keyOf(types, v.b.subarray(v.key, v.key + keyLen), v.b.subarray(v.keyEnd, v.keyEnd + keyLen));
        out.push(elementOf(v, key, valueOf));
      });
    }
    return out;
  }
  // Start and end elements, in key order, an end before a start at the
  // same key (where one interval ends, the adjacent next one begins): each
  // start runs to just before the next element, or to the top when nothing
  // follows.
  const all: ElementView[] = [];
  for (const list of lists) readElements(list, (v) => all.push({ ...v }));
  const keyOfView = (v: ElementView) => v.b.subarray(v.key, v.key + v.keyLen);
  const isEnd = (v: ElementView) => (v.flags & K.NFT_SET_ELEM_INTERVAL_END ? 1 : 0);
  all.sort((a, b) => Buffer.compare(keyOfView(a), keyOfView(b)) || isEnd(b) - isEnd(a));
  for (let i = 0; i < all.length; i++) {
    const v = all[i];
    if (isEnd(v)) continue;
    const first = keyOfView(v);
    const next = all[i + 1];
    const last = next ? predecessor(keyOfView(next)) : Buffer.alloc(keyLen, 0xff);
    out.push(elementOf(v, v.keyLen === keyLen ? keyOf(types!, first, last) : Buffer.from(first), valueOf));
  }
  return out;
}
