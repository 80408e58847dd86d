/**
 * Expressions that compute a number into a register: numgen (a counter or
 * a random number, modulo N: how kube-proxy's nftables mode picks an
 * endpoint, `numgen random mod 2 vmap { 0 : goto ep1, 1 : goto ep2 }`) and
 * hash (of register bytes, jhash, or of the flow, symhash). Each is written
 * with every attribute nft sends, so a rule reads back and writes back as
 * nft wrote it.
 */
import { integer, knownFields, wrongValue } from '../../util/check.js';
import { type HashType, type NumgenType, hashTypes, numgenTypes } from '../names.js';
import type { RawAttrs } from '../native.js';
import { K } from '../native.js';
import { defined, named, num, reg } from './fields.js';

/** `numgen inc mod 4 offset 100`, `numgen random mod 2`: a number from 0 (plus `offset`) below `modulus`. */
export interface NumgenExpr {
  /** The kernel's numgen expression. */
  type: 'numgen';
  /** Where the number goes (NFTA_NG_DREG). */
  dreg: number;
  /** The numbers run from 0 to modulus - 1 (NFTA_NG_MODULUS). */
  modulus: number;
  /** `inc`: one after another; `random` (NFTA_NG_TYPE). */
  mode: NumgenType | number;
  /** Added to each number (NFTA_NG_OFFSET); 0 when left out. */
  offset?: number;
}

/** `jhash ip saddr . tcp dport mod 8 seed 0xfeed`, `symhash mod 2`: a hash modulo `modulus`. */
export interface HashExpr {
  /** The kernel's hash expression. */
  type: 'hash';
  /** `jhash`: Jenkins' hash of `len` bytes from `sreg`; `symhash`: of the flow, the same both ways (NFTA_HASH_TYPE). */
  hash: HashType | number;
  /** jhash: the register holding the bytes to hash (NFTA_HASH_SREG). */
  sreg?: number;
  /** jhash: how many bytes (NFTA_HASH_LEN). */
  len?: number;
  /** Where the hash goes (NFTA_HASH_DREG). */
  dreg: number;
  /** The hash runs from 0 to modulus - 1 (NFTA_HASH_MODULUS). */
  modulus: number;
  /** jhash: the seed (NFTA_HASH_SEED); nft picks one at random when the rule gives none. */
  seed?: number;
  /** Added to each hash (NFTA_HASH_OFFSET); 0 when left out. */
  offset?: number;
}

const numgenFields = new Set(['type', 'dreg', 'modulus', 'mode', 'offset']);
const hashFields = new Set(['type', 'hash', 'sreg', 'len', 'dreg', 'modulus', 'seed', 'offset']);
const U32 = 0xffffffff;

/** The offset added to numbers below `modulus`; the largest sum must fit 32 bits, or the kernel refuses it (EOVERFLOW). */
function offsetFor(v: unknown, modulus: number, field: string): number {
  return v === undefined ? 0 : integer(v, `${field}.offset`, 0, U32 - (modulus - 1));
}

/** The numgen expression: typed form to raw attributes (checked) and back. */
export const numgen = {
  kernel: 'numgen',
  toRaw(e: NumgenExpr, field: string): RawAttrs {
    knownFields(e as never, numgenFields, field);
    const modulus = integer(e.modulus, `${field}.modulus`, 1, U32);
    return {
      dreg: reg(e.dreg, `${field}.dreg`),
      modulus,
      ngType: named(numgenTypes, e.mode, `${field}.mode`),
      offset: offsetFor(e.offset, modulus, field),
    };
  },
  fromRaw(a: RawAttrs): NumgenExpr {
    const e: NumgenExpr = { type: 'numgen', dreg: num(a, 'dreg') ?? 0, modulus: num(a, 'modulus') ?? 0, mode: numgenTypes.name(num(a, 'ngType') ?? 0) };
    if (a.offset !== undefined) e.offset = num(a, 'offset');
    return e;
  },
};

/** The hash expression, jhash or symhash: typed form to raw attributes (checked) and back. */
export const hash = {
  kernel: 'hash',
  toRaw(e: HashExpr, field: string): RawAttrs {
    knownFields(e as never, hashFields, field);
    const hashType = named(hashTypes, e.hash, `${field}.hash`);
    const jenkins = hashType === K.NFT_HASH_JENKINS;
    if (!jenkins) {
      // A symmetric hash reads the flow, not a register: what jhash takes has no meaning here.
      for (const k of ['sreg', 'len', 'seed'] as const) if (e[k] !== undefined) throw wrongValue(`${field}.${k}`, 'given with jhash only', e[k]);
    }
    const modulus = integer(e.modulus, `${field}.modulus`, 1, U32);
    return defined({
      sreg: jenkins ? reg(e.sreg, `${field}.sreg`) : undefined,
      dreg: reg(e.dreg, `${field}.dreg`),
      len: jenkins ? integer(e.len, `${field}.len`, 1, 64) : undefined,
      modulus,
      seed: jenkins && e.seed !== undefined ? integer(e.seed, `${field}.seed`, 0, U32) : undefined,
      offset: offsetFor(e.offset, modulus, field),
      hashType,
    });
  },
  fromRaw(a: RawAttrs): HashExpr {
    const e: HashExpr = { type: 'hash', hash: hashTypes.name(num(a, 'hashType') ?? 0), dreg: num(a, 'dreg') ?? 0, modulus: num(a, 'modulus') ?? 0 };
    if (a.sreg !== undefined) e.sreg = num(a, 'sreg');
    if (a.len !== undefined) e.len = num(a, 'len');
    if (a.seed !== undefined) e.seed = num(a, 'seed');
    if (a.offset !== undefined) e.offset = num(a, 'offset');
    return e;
  },
};
