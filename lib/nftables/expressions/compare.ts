/**
 * Expressions that compare and transform registers: cmp, range, bitwise,
 * byteorder, and set lookups (lookup, dynset).
 */
import { integer, knownFields, name, object, optionalBoolean, wrongType, wrongValue } from '../../util/check.js';
import type { RawAttrs } from '../native.js';
import {
  type BitwiseOp, type ByteorderOp, type CmpOp, type DynsetOp, type RangeOp,
  NAME_RULE, bitwiseOps, byteorderOps, cmpOps, dynsetOps, rangeOps,
} from '../names.js';
import { K } from '../native.js';
import { buf, bytes, copyPresent, defined, named, num, reg } from './fields.js';
// A dynset's element expressions are expressions of the vocabulary (a cycle of modules used only when called).
import { type Expression, expressionFromRaw, expressionToRaw } from './index.js';

/** Compares register `sreg` with `data`; the rule stops here unless it holds. */
export interface CmpExpr {
  /** The kernel's cmp expression. */
  type: 'cmp';
  /** The comparison (NFTA_CMP_OP); lt, lte, gt and gte compare the bytes in order, as memcmp() does. */
  op: CmpOp | number;
  /** The register compared (NFTA_CMP_SREG). */
  sreg: number;
  /** The value, as many bytes as were loaded, in the register's byte order (NFTA_CMP_DATA). */
  data: Uint8Array;
}

/** Whether register `sreg` lies within [from, to] (`eq`) or outside it (`neq`). */
export interface RangeExpr {
  /** The kernel's range expression. */
  type: 'range';
  /** Inside the range (`eq`) or outside it (`neq`) (NFTA_RANGE_OP). */
  op: RangeOp | number;
  /** The register tested (NFTA_RANGE_SREG). */
  sreg: number;
  /** The first value in the range, compared byte by byte, so in network order (NFTA_RANGE_FROM_DATA). */
  from: Uint8Array;
  /** The last value in the range, as long as `from` (NFTA_RANGE_TO_DATA). */
  to: Uint8Array;
}

/** `dreg = (sreg & mask) ^ xor` over `len` bytes, or a shift by `data` bits. */
export interface BitwiseExpr {
  /** The kernel's bitwise expression. */
  type: 'bitwise';
  /** The register read (NFTA_BITWISE_SREG). */
  sreg: number;
  /** The register the result goes to, often the same (NFTA_BITWISE_DREG). */
  dreg: number;
  /** Bytes operated on (NFTA_BITWISE_LEN), 1-64. */
  len: number;
  /** Left out, the kernel takes the mask-and-xor form (nft leaves it out for some matches). */
  op?: BitwiseOp | number;
  /** `bool`: the `len` bytes ANDed with the register (NFTA_BITWISE_MASK). */
  mask?: Uint8Array;
  /** `bool`: the `len` bytes XORed with the result (NFTA_BITWISE_XOR). */
  xor?: Uint8Array;
  /** `lshift` and `rshift`: the shift in bits, as 4 bytes in host order (NFTA_BITWISE_DATA). */
  data?: Uint8Array;
}

/** Converts `len` bytes of `sreg` in units of `size` between host and network order. */
export interface ByteorderExpr {
  /** The kernel's byteorder expression. */
  type: 'byteorder';
  /** The register read (NFTA_BYTEORDER_SREG). */
  sreg: number;
  /** The register the result goes to (NFTA_BYTEORDER_DREG). */
  dreg: number;
  /** Network to host order (`ntoh`) or back (`hton`) (NFTA_BYTEORDER_OP). */
  op: ByteorderOp | number;
  /** Bytes to convert (NFTA_BYTEORDER_LEN), 1-64. */
  len: number;
  /** Bytes per value: 2, 4 or 8 (NFTA_BYTEORDER_SIZE). */
  size: number;
}

/** Looks `sreg` (and the registers after it, for a concatenation) up in `set`: matches when present (absent, with `invert`); for a map, the value goes to `dreg` (0: the verdict). */
export interface LookupExpr {
  /** The kernel's lookup expression. */
  type: 'lookup';
  /** The set's or map's name, in the rule's table (NFTA_LOOKUP_SET). */
  set: string;
  /** The register holding the key, the first of several for a concatenation (NFTA_LOOKUP_SREG). */
  sreg: number;
  /** Maps only: the register the element's value goes to, 0 for a verdict map (NFTA_LOOKUP_DREG). */
  dreg?: number;
  /** Match when the key is absent, as `!= @set` does (NFT_LOOKUP_F_INV); default false. */
  invert?: boolean;
  /** The set's transaction id, for a set added in the same transaction without a name lookup (nft sends it; the name suffices). */
  setId?: number;
}

/** Adds (or updates, deletes) the key in `sregKey` to `set` from the packet path. */
export interface DynsetExpr {
  /** The kernel's dynset expression. */
  type: 'dynset';
  /** The set's or map's name, in the rule's table (NFTA_DYNSET_SET_NAME); not a 'constant' one. */
  set: string;
  /** Add the element, add it or refresh its timeout, or delete it (NFTA_DYNSET_OP). */
  op: DynsetOp | number;
  /** The register holding the key (NFTA_DYNSET_SREG_KEY). */
  sregKey: number;
  /** Maps only: the register holding the value (NFTA_DYNSET_SREG_DATA). */
  sregData?: number;
  /** The element's timeout in milliseconds, for a set with the 'timeout' flag; the set's default when left out (NFTA_DYNSET_TIMEOUT). */
  timeout?: number;
  /** The set's transaction id, as in a lookup (NFTA_DYNSET_SET_ID). */
  setId?: number;
  /**
   * State each element keeps, as nft's `update @m { ip saddr limit rate 10/second }` (a meter) or
   * `add @s { ip saddr counter }`: stateful expressions (counter, limit, quota, ...), evaluated
   * on the element (NFTA_DYNSET_EXPR for one, NFTA_DYNSET_EXPRESSIONS for more, as nft sends them).
   */
  expressions?: Expression[];
  /** Matches only when the key was not added (NFT_DYNSET_F_INV). */
  invert?: boolean;
}

const cmpFields = new Set(['type', 'op', 'sreg', 'data']);
const rangeFields = new Set(['type', 'op', 'sreg', 'from', 'to']);
const bitwiseFields = new Set(['type', 'sreg', 'dreg', 'len', 'op', 'mask', 'xor', 'data']);
const byteorderFields = new Set(['type', 'sreg', 'dreg', 'op', 'len', 'size']);
const lookupFields = new Set(['type', 'set', 'sreg', 'dreg', 'invert', 'setId']);
const dynsetFields = new Set(['type', 'set', 'op', 'sregKey', 'sregData', 'timeout', 'setId', 'expressions', 'invert']);
/** The expressions a set element can keep state with (`raw`: one this library has no vocabulary for, as read). */
const ELEMENT_STATE = ['counter', 'limit', 'quota', 'raw'];

/** The cmp expression: typed form to raw attributes (checked) and back. */
export const cmp = {
  kernel: 'cmp',
  toRaw(e: CmpExpr, field: string): RawAttrs {
    knownFields(e as never, cmpFields, field);
    return { sreg: reg(e.sreg, `${field}.sreg`), op: named(cmpOps, e.op, `${field}.op`), data: bytes(e.data, `${field}.data`) };
  },
  fromRaw(a: RawAttrs): CmpExpr {
    return { type: 'cmp', op: cmpOps.name(num(a, 'op') ?? 0), sreg: num(a, 'sreg') ?? 0, data: buf(a, 'data') ?? Buffer.alloc(0) };
  },
};

/** The range expression: typed form to raw attributes (checked) and back. */
export const range = {
  kernel: 'range',
  toRaw(e: RangeExpr, field: string): RawAttrs {
    knownFields(e as never, rangeFields, field);
    return {
      sreg: reg(e.sreg, `${field}.sreg`),
      op: named(rangeOps, e.op, `${field}.op`),
      fromData: bytes(e.from, `${field}.from`),
      toData: bytes(e.to, `${field}.to`),
    };
  },
  fromRaw(a: RawAttrs): RangeExpr {
    return { type: 'range', op: rangeOps.name(num(a, 'op') ?? 0), sreg: num(a, 'sreg') ?? 0, from: buf(a, 'fromData')!, to: buf(a, 'toData')! };
  },
};

/** The bitwise expression: typed form to raw attributes (checked) and back. */
export const bitwise = {
  kernel: 'bitwise',
  toRaw(e: BitwiseExpr, field: string): RawAttrs {
    knownFields(e as never, bitwiseFields, field);
    return defined({
      sreg: reg(e.sreg, `${field}.sreg`),
      dreg: reg(e.dreg, `${field}.dreg`),
      op: e.op === undefined ? undefined : named(bitwiseOps, e.op, `${field}.op`),
      len: integer(e.len, `${field}.len`, 1, 64),
      mask: e.mask === undefined ? undefined : bytes(e.mask, `${field}.mask`),
      xor: e.xor === undefined ? undefined : bytes(e.xor, `${field}.xor`),
      data: e.data === undefined ? undefined : bytes(e.data, `${field}.data`),
    });
  },
  fromRaw(a: RawAttrs): BitwiseExpr {
    const e: BitwiseExpr = { type: 'bitwise', sreg: num(a, 'sreg') ?? 0, dreg: num(a, 'dreg') ?? 0, len: num(a, 'len') ?? 0 };
    if (a.op !== undefined) e.op = bitwiseOps.name(num(a, 'op')!);
    return copyPresent(e, a, { mask: 'mask', xor: 'xor', data: 'data' });
  },
};

/** The byteorder expression: typed form to raw attributes (checked) and back. */
export const byteorder = {
  kernel: 'byteorder',
  toRaw(e: ByteorderExpr, field: string): RawAttrs {
    knownFields(e as never, byteorderFields, field);
    return {
      sreg: reg(e.sreg, `${field}.sreg`),
      dreg: reg(e.dreg, `${field}.dreg`),
      op: named(byteorderOps, e.op, `${field}.op`),
      len: integer(e.len, `${field}.len`, 1, 64),
      size: integer(e.size, `${field}.size`, 2, 8),
    };
  },
  fromRaw(a: RawAttrs): ByteorderExpr {
    return { type: 'byteorder', sreg: num(a, 'sreg') ?? 0, dreg: num(a, 'dreg') ?? 0, op: byteorderOps.name(num(a, 'op') ?? 0), len: num(a, 'len') ?? 0, size: num(a, 'size') ?? 0 };
  },
};

/** The lookup expression: typed form to raw attributes (checked) and back. */
export const lookup = {
  kernel: 'lookup',
  toRaw(e: LookupExpr, field: string): RawAttrs {
    knownFields(e as never, lookupFields, field);
    const invert = optionalBoolean(e.invert, field, false, 'invert');
    return defined({
      sreg: reg(e.sreg, `${field}.sreg`),
      dreg: e.dreg === undefined ? undefined : reg(e.dreg, `${field}.dreg`),
      set: name(e.set, `${field}.set`, NAME_RULE),
      setId: e.setId === undefined ? undefined : integer(e.setId, `${field}.setId`, 0, 0xffffffff),
      flags: invert ? K.NFT_LOOKUP_F_INV : undefined,
    });
  },
  fromRaw(a: RawAttrs): LookupExpr {
    const e = copyPresent<LookupExpr>({ type: 'lookup', set: a.set as string, sreg: num(a, 'sreg') ?? 0 }, a, { dreg: 'dreg', setId: 'setId' });
    if ((num(a, 'flags') ?? 0) & K.NFT_LOOKUP_F_INV) e.invert = true;
    return e;
  },
};

/** The dynset expression: typed form to raw attributes (checked) and back. */
export const dynset = {
  kernel: 'dynset',
  toRaw(e: DynsetExpr, field: string): RawAttrs {
    knownFields(e as never, dynsetFields, field);
    if (e.expressions !== undefined && !Array.isArray(e.expressions)) throw wrongType(`${field}.expressions`, 'an array of expressions', e.expressions);
    const exprs = (e.expressions ?? []).map((x, i) => {
      const at = `${field}.expressions[${i}]`;
      // Only state an element can keep (the kernel's stateful expressions); one it does not know travels as read.
      const kind = (object(x, at) as { type?: unknown }).type;
      if (!ELEMENT_STATE.includes(kind as string)) throw wrongValue(`${at}.type`, `one of ${ELEMENT_STATE.map((k) => JSON.stringify(k)).join(', ')}`, kind);
      return expressionToRaw(x, at);
    });
    const flags = (optionalBoolean(e.invert, field, false, 'invert') ? K.NFT_DYNSET_F_INV : 0) | (exprs.length > 1 ? K.NFT_DYNSET_F_EXPR : 0);
    return defined({
      set: name(e.set, `${field}.set`, NAME_RULE),
      setId: e.setId === undefined ? undefined : integer(e.setId, `${field}.setId`, 0, 0xffffffff),
      op: named(dynsetOps, e.op, `${field}.op`),
      sregKey: reg(e.sregKey, `${field}.sregKey`),
      sregData: e.sregData === undefined ? undefined : reg(e.sregData, `${field}.sregData`),
      // At least 1: the kernel reads 0 as "the set's own" but refuses it for a set without timeouts; leave it out for that.
      timeout: e.timeout === undefined ? undefined : integer(e.timeout, `${field}.timeout`, 1, Number.MAX_SAFE_INTEGER),
      // One expression goes alone, more as a list flagged so, as nft sends them.
      flags: flags || undefined,
      expr: exprs.length === 1 ? exprs[0] : undefined,
      expressions: exprs.length > 1 ? exprs : undefined,
    });
  },
  fromRaw(a: RawAttrs): DynsetExpr {
    const e: DynsetExpr = { type: 'dynset', set: a.set as string, op: dynsetOps.name(num(a, 'op') ?? 0), sregKey: num(a, 'sregKey') ?? 0 };
    copyPresent(e, a, { sregData: 'sregData', setId: 'setId' });
    // The kernel lists a timeout of 0 for "the set's own"; given back, a set without timeouts refuses it.
    if (num(a, 'timeout')) e.timeout = num(a, 'timeout');
    const exprs = [a.expr, ...((a.expressions as RawAttrs[] | undefined) ?? [])].filter((x): x is RawAttrs => x !== undefined);
    if (exprs.length) e.expressions = exprs.map(expressionFromRaw);
    if ((num(a, 'flags') ?? 0) & K.NFT_DYNSET_F_INV) e.invert = true;
    return e;
  },
};
