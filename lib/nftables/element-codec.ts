/**
 * Set elements as the kernel's netlink attributes, written and read here
 * rather than by the addon: the items of an NFTA_SET_ELEM_LIST_ELEMENTS
 * nest, in one buffer. A set of 100,000 elements is as many small nests;
 * made into objects and converted one by one at the addon's boundary they
 * cost several times what the kernel spends on them, so element lists
 * cross it as bytes (native/nftables/codec.h, Kind::kItems: the addon
 * checks their framing, numbers them and splits them into messages).
 *
 * Each element's attributes are written in the order nft writes them, so
 * the bytes are nft's (test/unit/nftables-golden.test.ts).
 */
import { NetlinkError } from '../netlink/errors.js';
import { keepLayout } from '../util/keep-layout.js';
import { K } from './native.js';

const HDRLEN = 4;
/** An attribute's type without NLA_F_NESTED and NLA_F_NET_BYTEORDER (the top two bits). */
const TYPE_MASK = 0x3fff;
const align4 = (n: number) => (n + 3) & ~3;

/**
 * Element items, written into one growing buffer. Growing replaces `buf`:
 * take the room first and only then read `buf` to fill it
 * (`const at = w.value(...); w.buf.set(bytes, at)`), never
 * `w.buf.set(bytes, w.value(...))`, which fills the buffer that was.
 */
export class ElementWriter {
  /** The bytes so far; a value's room returned by value() is filled in here. */
  buf: Buffer;
  private len = 0;
  private item = 0;

  constructor(expectedBytes: number) {
    this.buf = Buffer.allocUnsafe(Math.max(256, expectedBytes));
  }

  /** Starts the next element (an item the addon numbers, per message, as nft numbers them). */
  begin(): void {
    this.item = this.len;
    this.header(0, K.NFTA_LIST_ELEM | K.NLA_F_NESTED);
  }

  /** Ends the element begun last. */
  end(): void {
    this.buf.writeUInt16LE(this.len - this.item, this.item);
  }

  u32(type: number, v: number): void {
    const at = this.room(type, 4);
    this.buf.writeUInt32BE(v >>> 0, at);
  }

  /** A 64-bit big-endian attribute from a safe integer (milliseconds). */
  u64(type: number, v: number): void {
    const at = this.room(type, 8);
    this.buf.writeUInt32BE(Math.floor(v / 0x100000000), at);
    this.buf.writeUInt32BE(v >>> 0, at + 4);
  }

  /** A NUL-terminated string (an object map's object name, as nft writes it). */
  string(type: number, s: string): void {
    const b = Buffer.from(s);
    const at = this.room(type, b.length + 1);
    this.buf.set(b, at);
  }

  bytes(type: number, b: Uint8Array): void {
    const at = this.room(type, b.length);
    this.buf.set(b, at);
  }

  /** A struct nft_data value of `len` zeroed bytes under `type`; returns where they start in `buf`, for the caller to fill. */
  value(type: number, len: number): number {
    const nest = this.open(type);
    const at = this.room(K.NFTA_DATA_VALUE, len);
    this.close(nest);
    return at;
  }

  /** A struct nft_data verdict under `type`. */
  verdict(type: number, code: number, chain?: string): void {
    const nest = this.open(type);
    const v = this.open(K.NFTA_DATA_VERDICT);
    const at = this.room(K.NFTA_VERDICT_CODE, 4);
    this.buf.writeInt32BE(code, at);
    if (chain !== undefined) {
      const s = Buffer.from(chain);
      const name = this.room(K.NFTA_VERDICT_CHAIN, s.length + 1);
      this.buf.set(s, name);
    }
    this.close(v);
    this.close(nest);
  }

  /** The items written. */
  take(): Buffer {
    return this.buf.subarray(0, this.len);
  }

  private open(type: number): number {
    const at = this.len;
    this.header(0, type | K.NLA_F_NESTED);
    return at;
  }

  private close(at: number): void {
    this.buf.writeUInt16LE(this.len - at, at);
  }

  /** An attribute of `len` zeroed payload bytes (padded to 4); returns where the payload starts. */
  private room(type: number, len: number): number {
    const at = this.header(HDRLEN + len, type) + HDRLEN;
    const end = at + align4(len);
    this.grow(end);
    for (let i = at; i < end; i++) this.buf[i] = 0;
    this.len = end;
    return at;
  }

  private header(len: number, type: number): number {
    const at = this.len;
    this.grow(at + HDRLEN);
    this.buf.writeUInt16LE(len, at);
    this.buf.writeUInt16LE(type, at + 2);
    this.len = at + HDRLEN;
    return at;
  }

  private grow(size: number): void {
    if (size <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(size, this.buf.length * 2));
    this.buf.copy(b, 0, 0, this.len);
    this.buf = b;
  }
}

/**
 * One element as read: where its parts are in `b` (-1 when absent), the
 * rest decoded. readElements() reuses one view for every element; copy it
 * to keep it.
 */
export interface ElementView {
  b: Buffer;
  flags: number;
  /** NFTA_DATA_VALUE of the key, and of the key's end in concatenated interval sets. */
  key: number;
  keyLen: number;
  keyEnd: number;
  keyEndLen: number;
  /** A map's value: NFTA_DATA_VALUE bytes, or a verdict. */
  data: number;
  dataLen: number;
  verdict: { code: number; chain?: string } | undefined;
  timeout: number | undefined;
  expiration: number | undefined;
  userdata: Uint8Array | undefined;
  counter: { packets: bigint; bytes: bigint } | undefined;
  /** An object map's value: the object's name (NFTA_SET_ELEM_OBJREF). */
  objref: string | undefined;
}

function malformed(what: string): NetlinkError {
  return new NetlinkError({ errno: 74, code: 'EBADMSG', operation: 'read set elements', detail: `malformed reply: ${what}` });
}

/** The length of the attribute at b[at], checked to end by `to`. */
function attrLen(b: Buffer, at: number, to: number): number {
  if (to - at < HDRLEN) throw malformed('attribute header truncated');
  const len = b.readUInt16LE(at);
  if (len < HDRLEN || at + len > to) throw malformed(`attribute length ${len} out of bounds`);
  return len;
}

/** Calls `visit` for each attribute in b[from, to): its type (flags masked off) and payload bounds. */
function eachAttr(b: Buffer, from: number, to: number, visit: (type: number, at: number, end: number) => void): void {
  for (let at = from; at < to; ) {
    const len = attrLen(b, at, to);
    visit(b.readUInt16LE(at + 2) & TYPE_MASK, at + HDRLEN, at + len);
    at += align4(len);
  }
}

function u64At(b: Buffer, at: number, end: number): number {
  if (end - at !== 8) throw malformed('a 64-bit attribute of another size');
  return b.readUInt32BE(at) * 0x100000000 + b.readUInt32BE(at + 4);
}

/** Where the NFTA_DATA_VALUE payload in the struct nft_data nest b[at, end) starts, or -1; its length is in its header (payloadLen). */
function valueIn(b: Buffer, at: number, end: number): number {
  for (let p = at; p < end; ) {
    const len = attrLen(b, p, end);
    if ((b.readUInt16LE(p + 2) & TYPE_MASK) === K.NFTA_DATA_VALUE) return p + HDRLEN;
    p += align4(len);
  }
  return -1;
}

const payloadLen = (b: Buffer, payload: number) => b.readUInt16LE(payload - HDRLEN) - HDRLEN;

/** The verdict in the struct nft_data nest b[at, end), if it holds one. */
function verdictIn(b: Buffer, at: number, end: number): { code: number; chain?: string } | undefined {
  let out: { code: number; chain?: string } | undefined;
  eachAttr(b, at, end, (type, a, e) => {
    if (type !== K.NFTA_DATA_VERDICT) return;
    const v: { code: number; chain?: string } = { code: 0 };
    eachAttr(b, a, e, (t, x, y) => {
      if (t === K.NFTA_VERDICT_CODE && y - x === 4) v.code = b.readInt32BE(x);
      if (t === K.NFTA_VERDICT_CHAIN) {
        const nul = b.indexOf(0, x);
        v.chain = b.toString('utf8', x, nul >= 0 && nul < y ? nul : y);
      }
    });
    out = v;
  });
  return out;
}

/** A counter expression's values (NFTA_EXPR_NAME "counter"), or undefined for another expression. */
function counterIn(b: Buffer, at: number, end: number): { packets: bigint; bytes: bigint } | undefined {
  let counter = false;
  let data = -1;
  let dataEnd = -1;
  eachAttr(b, at, end, (type, a, e) => {
    if (type === K.NFTA_EXPR_NAME) counter = b.toString('latin1', a, e).replace(/\0.*$/s, '') === 'counter';
    if (type === K.NFTA_EXPR_DATA) [data, dataEnd] = [a, e];
  });
  if (!counter) return undefined;
  const out = { packets: 0n, bytes: 0n };
  if (data >= 0)
    eachAttr(b, data, dataEnd, (type, a, e) => {
      if (e - a !== 8) return;
      if (type === K.NFTA_COUNTER_PACKETS) out.packets = b.readBigUInt64BE(a);
      if (type === K.NFTA_COUNTER_BYTES) out.bytes = b.readBigUInt64BE(a);
    });
  return out;
}

/** Calls `visit` with each element of `items` (an element list as the addon gives it), in order. */
export function readElements(items: Uint8Array, visit: (view: ElementView) => void): void {
  const b = Buffer.from(items.buffer, items.byteOffset, items.byteLength);
  const v: ElementView = {
    b, flags: 0, key: -1, keyLen: 0, keyEnd: -1, keyEndLen: 0, data: -1, dataLen: 0,
    verdict: undefined, timeout: undefined, expiration: undefined, userdata: undefined, counter: undefined, objref: undefined,
  };
  for (let item = 0; item < b.length; ) {
    const itemEnd = item + attrLen(b, item, b.length);
    v.flags = 0;
    v.key = v.keyEnd = v.data = -1;
    v.keyLen = v.keyEndLen = v.dataLen = 0;
    v.verdict = v.timeout = v.expiration = v.userdata = v.counter = v.objref = undefined;
    for (let p = item + HDRLEN; p < itemEnd; ) {
      const len = attrLen(b, p, itemEnd);
      const a = p + HDRLEN;
      const e = p + len;
      switch (b.readUInt16LE(p + 2) & TYPE_MASK) {
        case K.NFTA_SET_ELEM_FLAGS:
          if (len !== HDRLEN + 4) throw malformed('element flags of another size');
          v.flags = b.readUInt32BE(a);
          break;
        case K.NFTA_SET_ELEM_TIMEOUT:
          v.timeout = u64At(b, a, e);
          break;
        case K.NFTA_SET_ELEM_EXPIRATION:
          v.expiration = u64At(b, a, e);
          break;
        case K.NFTA_SET_ELEM_KEY:
          v.key = valueIn(b, a, e);
          v.keyLen = v.key < 0 ? 0 : payloadLen(b, v.key);
          break;
        case K.NFTA_SET_ELEM_KEY_END:
          v.keyEnd = valueIn(b, a, e);
          v.keyEndLen = v.keyEnd < 0 ? 0 : payloadLen(b, v.keyEnd);
          break;
        case K.NFTA_SET_ELEM_DATA:
          v.data = valueIn(b, a, e);
          v.dataLen = v.data < 0 ? 0 : payloadLen(b, v.data);
          if (v.data < 0) v.verdict = verdictIn(b, a, e);
          break;
        case K.NFTA_SET_ELEM_USERDATA:
          v.userdata = b.subarray(a, e);
          break;
        case K.NFTA_SET_ELEM_OBJREF: {
          const nul = b.indexOf(0, a);
          v.objref = b.toString('utf8', a, nul < 0 || nul > e ? e : nul);
          break;
        }
        case K.NFTA_SET_ELEM_EXPR:
          v.counter ??= counterIn(b, a, e);
          break;
        case K.NFTA_SET_ELEM_EXPRESSIONS:
          eachAttr(b, a, e, (_, x, y) => (v.counter ??= counterIn(b, x, y)));
          break;
      }
      p += align4(len);
    }
    if (v.key < 0) throw malformed('a set element without a key');
    visit(v);
    item += align4(itemEnd - item);
  }
}

// Each call's writer is dropped when its elements are sent (util/keep-layout.ts says why one is kept).
keepLayout(new ElementWriter(0));
