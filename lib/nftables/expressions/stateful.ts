/**
 * Expressions that keep state in the kernel: limit (a rate), quota (a byte
 * budget) and objref (a named stateful object, such as `counter name
 * "hits"`). Each is written with every attribute nft sends, so a rule reads
 * back and writes back as nft wrote it.
 */
import { integer, knownFields, name, optionalBoolean } from '../../util/check.js';
import { type LimitType, NAME_RULE, type ObjectType, limitTypes, objectTypes } from '../names.js';
import type { RawAttrs } from '../native.js';
import { K } from '../native.js';
import { defined, named, num, reg, u64 } from './fields.js';

/** A rate limit: matches while the rate is under `rate` per `unit` seconds (`limit rate 10/second`). */
export interface LimitExpr {
  /** The kernel's limit expression. */
  type: 'limit';
  /** Packets, or bytes, per `unit` (NFTA_LIMIT_RATE). */
  rate: number;
  /** The period in seconds: 1, 60, 3600, 86400 or 604800 for nft's second to week (NFTA_LIMIT_UNIT). */
  unit: number;
  /** What is counted (NFTA_LIMIT_TYPE); `packets` when left out. */
  limitType?: LimitType | number;
  /** How many may pass at once above the rate (NFTA_LIMIT_BURST); left out, 5 for packets and 0 for bytes, as nft writes. */
  burst?: number;
  /** `limit rate over`: matches once the rate is exceeded (NFT_LIMIT_F_INV). */
  over?: boolean;
}

/** A byte budget: matches until `bytes` have passed (`quota 100 mbytes`), or after (`quota over`). */
export interface QuotaExpr {
  /** The kernel's quota expression. */
  type: 'quota';
  /** The budget in bytes (NFTA_QUOTA_BYTES). */
  bytes: bigint;
  /** Bytes used so far (NFTA_QUOTA_CONSUMED); written, where counting starts (0 when left out). */
  consumed?: bigint;
  /** `quota over`: matches once the budget is spent (NFT_QUOTA_F_INV). */
  over?: boolean;
  /** Read only: the budget is spent (NFT_QUOTA_F_DEPLETED, which the kernel sets). */
  depleted?: boolean;
}

/** A reference to a named stateful object of the rule's table: one by name (`counter name "hits"`), or the one a map gives for register `sreg`'s value. */
export type ObjrefExpr = NamedObjref | MappedObjref;

/** `counter name "hits"`: the object by its kind and name. */
export interface NamedObjref {
  /** The kernel's objref expression. */
  type: 'objref';
  /** The object's kind (NFTA_OBJREF_IMM_TYPE). */
  objectType: ObjectType | number;
  /** Its name (NFTA_OBJREF_IMM_NAME). */
  name: string;
}

/** `counter name ip saddr map @m`: the object a map of object names gives for a key. */
export interface MappedObjref {
  /** The kernel's objref expression. */
  type: 'objref';
  /** The register holding the key (NFTA_OBJREF_SET_SREG). */
  sreg: number;
  /** The map (NFTA_OBJREF_SET_NAME). */
  set: string;
  /** The map's id, for a map added in the same transaction (NFTA_OBJREF_SET_ID). */
  setId?: number;
}

const limitFields = new Set(['type', 'rate', 'unit', 'limitType', 'burst', 'over']);
const quotaFields = new Set(['type', 'bytes', 'consumed', 'over', 'depleted']);
const namedObjrefFields = new Set(['type', 'objectType', 'name']);
const mappedObjrefFields = new Set(['type', 'sreg', 'set', 'setId']);

/** The limit expression: typed form to raw attributes (checked) and back. */
export const limit = {
  kernel: 'limit',
  toRaw(e: LimitExpr, field: string): RawAttrs {
    knownFields(e as never, limitFields, field);
    const limitType = e.limitType === undefined ? K.NFT_LIMIT_PKTS : named(limitTypes, e.limitType, `${field}.limitType`);
    const defaultBurst = limitType === K.NFT_LIMIT_PKTS ? 5 : 0;
    return {
      rate: integer(e.rate, `${field}.rate`, 1, Number.MAX_SAFE_INTEGER),
      unit: integer(e.unit, `${field}.unit`, 1, Number.MAX_SAFE_INTEGER),
      burst: e.burst === undefined ? defaultBurst : integer(e.burst, `${field}.burst`, 0, 0xffffffff),
      limitType,
      flags: optionalBoolean(e.over, field, false, 'over') ? K.NFT_LIMIT_F_INV : 0,
    };
  },
  fromRaw(a: RawAttrs): LimitExpr {
    const e: LimitExpr = { type: 'limit', rate: num(a, 'rate') ?? 0, unit: num(a, 'unit') ?? 0, limitType: limitTypes.name(num(a, 'limitType') ?? 0) };
    if (a.burst !== undefined) e.burst = num(a, 'burst');
    if ((num(a, 'flags') ?? 0) & K.NFT_LIMIT_F_INV) e.over = true;
    return e;
  },
};

/** The quota expression: typed form to raw attributes (checked) and back. */
export const quota = {
  kernel: 'quota',
  toRaw(e: QuotaExpr, field: string): RawAttrs {
    knownFields(e as never, quotaFields, field);
    optionalBoolean(e.depleted, field, false, 'depleted');
    return {
      bytes: u64(e.bytes, `${field}.bytes`),
      flags: optionalBoolean(e.over, field, false, 'over') ? K.NFT_QUOTA_F_INV : 0,
      consumed: e.consumed === undefined ? 0n : u64(e.consumed, `${field}.consumed`),
    };
  },
  fromRaw(a: RawAttrs): QuotaExpr {
    const e: QuotaExpr = { type: 'quota', bytes: (a.bytes as bigint | undefined) ?? 0n };
    if (a.consumed !== undefined) e.consumed = a.consumed as bigint;
    const flags = num(a, 'flags') ?? 0;
    if (flags & K.NFT_QUOTA_F_INV) e.over = true;
    if (flags & K.NFT_QUOTA_F_DEPLETED) e.depleted = true;
    return e;
  },
};

/** The objref expression, either form: typed form to raw attributes (checked) and back. */
export const objref = {
  kernel: 'objref',
  toRaw(e: ObjrefExpr, field: string): RawAttrs {
    if ('set' in e) {
      knownFields(e as never, mappedObjrefFields, field);
      return defined({
        setSreg: reg(e.sreg, `${field}.sreg`),
        setName: name(e.set, `${field}.set`, NAME_RULE),
        setId: e.setId === undefined ? undefined : integer(e.setId, `${field}.setId`, 0, 0xffffffff),
      });
    }
    knownFields(e as never, namedObjrefFields, field);
    return { immType: named(objectTypes, e.objectType, `${field}.objectType`), immName: name(e.name, `${field}.name`, NAME_RULE) };
  },
  fromRaw(a: RawAttrs): ObjrefExpr {
    if (a.setName !== undefined) {
      const e: MappedObjref = { type: 'objref', sreg: num(a, 'setSreg') ?? 0, set: a.setName as string };
      if (a.setId !== undefined) e.setId = num(a, 'setId');
      return e;
    }
    return { type: 'objref', objectType: objectTypes.name(num(a, 'immType') ?? 0), name: (a.immName as string | undefined) ?? '' };
  },
};
