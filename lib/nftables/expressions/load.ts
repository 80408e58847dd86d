/**
 * Expressions that load packet and connection data into registers (or
 * write it back): payload, meta, ct and fib.
 */
import { integer, knownFields, wrongType, wrongValue } from '../../util/check.js';
import type { RawAttrs } from '../native.js';
import {
  type CsumType, type CtDirection, type CtKey, type FibFlag, type FibResult, type MetaKey, type PayloadBase,
  csumTypes, ctDirections, ctKeys, fibFlags, fibResults, metaKeys, payloadBases,
} from '../names.js';
import { copyPresent, defined, flagBits, named, num, reg } from './fields.js';

/** Bytes of a header: `len` bytes at `offset` of `base` into `dreg`, or from `sreg` into the packet. */
export interface PayloadExpr {
  /** The kernel's payload expression (nft's `ip daddr`, `tcp dport`, `@th,16,16`). */
  type: 'payload';
  /** The header `offset` counts from (NFTA_PAYLOAD_BASE): link layer, network, transport or inner; a number for a base without a name. */
  base: PayloadBase | number;
  /** Bytes from the start of that header (NFTA_PAYLOAD_OFFSET), 0-65535. */
  offset: number;
  /** Bytes to load or write (NFTA_PAYLOAD_LEN), 1-64. */
  len: number;
  /** Load into this register (NFTA_PAYLOAD_DREG): 1-4 (16 bytes) or 8-23 (4 bytes)... */
  dreg?: number;
  /** ...or write this register into the packet (NFTA_PAYLOAD_SREG; then the checksum fields apply). */
  sreg?: number;
  /** On a write: the checksum to update, the internet checksum or SCTP's CRC32c (NFTA_PAYLOAD_CSUM_TYPE); none when left out. */
  csumType?: CsumType | number;
  /** On a write: where that checksum lies, in bytes from the start of `base`'s header (NFTA_PAYLOAD_CSUM_OFFSET). */
  csumOffset?: number;
  /** On a write: 1 (NFT_PAYLOAD_L4CSUM_PSEUDOHDR) also updates the transport checksum, for fields of its pseudo-header such as addresses (NFTA_PAYLOAD_CSUM_FLAGS). */
  csumFlags?: number;
}

/** Packet metadata (`meta l4proto`, `meta mark`): loaded into `dreg`, or set from `sreg`. */
export interface MetaExpr {
  /** The kernel's meta expression. */
  type: 'meta';
  /** Which metadatum (NFTA_META_KEY); a number for a key without a name. */
  key: MetaKey | number;
  /** Load it into this register (NFTA_META_DREG)... */
  dreg?: number;
  /** ...or set it from this register, as `meta mark set` does (NFTA_META_SREG). */
  sreg?: number;
}

/** Connection tracking data (`ct state`, `ct mark`): loaded into `dreg`, or set from `sreg`. */
export interface CtExpr {
  /** The kernel's ct expression. */
  type: 'ct';
  /** Which datum of the connection (NFTA_CT_KEY); a number for a key without a name. */
  key: CtKey | number;
  /** Load it into this register (NFTA_CT_DREG)... */
  dreg?: number;
  /** ...or set it from this register, as `ct mark set` does (NFTA_CT_SREG). */
  sreg?: number;
  /** For keys that differ by direction (addresses, ports). */
  direction?: CtDirection | number;
}

/** A route lookup (`fib daddr type`): what `result` the lookup by `flags` gives, into `dreg`. */
export interface FibExpr {
  /** The kernel's fib expression. */
  type: 'fib';
  /** What the lookup is keyed by (NFTA_FIB_FLAGS): `saddr` or `daddr`, with `iif`, `oif`, `mark`; `present` makes the result only say whether there is a route. */
  flags: Array<FibFlag | number>;
  /** What it yields (NFTA_FIB_RESULT): the output interface's index or name, or the route type of the address. */
  result: FibResult | number;
  /** The register it goes to (NFTA_FIB_DREG). */
  dreg: number;
}

const payloadFields = new Set(['type', 'base', 'offset', 'len', 'dreg', 'sreg', 'csumType', 'csumOffset', 'csumFlags']);
const metaFields = new Set(['type', 'key', 'dreg', 'sreg']);
const ctFields = new Set(['type', 'key', 'dreg', 'sreg', 'direction']);
const fibFields = new Set(['type', 'flags', 'result', 'dreg']);

const registers = { dreg: 'dreg', sreg: 'sreg' } as const;

/** Exactly one of dreg / sreg. */
function loadOrStore(e: { dreg?: unknown; sreg?: unknown }, field: string): { dreg?: number; sreg?: number } {
  if (e.dreg !== undefined && e.sreg !== undefined) throw wrongValue(field, 'an expression with dreg (a load) or sreg (a store), not both', e);
  if (e.dreg === undefined && e.sreg === undefined) throw wrongType(`${field}.dreg`, 'a register (or sreg, to store)', undefined);
  return e.dreg !== undefined ? { dreg: reg(e.dreg, `${field}.dreg`) } : { sreg: reg(e.sreg, `${field}.sreg`) };
}

/** The payload expression: typed form to raw attributes (checked) and back. */
export const payload = {
  kernel: 'payload',
  toRaw(e: PayloadExpr, field: string): RawAttrs {
    knownFields(e as never, payloadFields, field);
    const r = loadOrStore(e, field);
    return defined({
      ...r,
      base: named(payloadBases, e.base, `${field}.base`),
      offset: integer(e.offset, `${field}.offset`, 0, 0xffff),
      len: integer(e.len, `${field}.len`, 1, 64),
      csumType: e.csumType === undefined ? undefined : named(csumTypes, e.csumType, `${field}.csumType`),
      csumOffset: e.csumOffset === undefined ? undefined : integer(e.csumOffset, `${field}.csumOffset`, 0, 0xffff),
      csumFlags: e.csumFlags === undefined ? undefined : integer(e.csumFlags, `${field}.csumFlags`, 0, 0xffffffff),
    });
  },
  fromRaw(a: RawAttrs): PayloadExpr {
    const e: PayloadExpr = { type: 'payload', base: payloadBases.name(num(a, 'base') ?? 0), offset: num(a, 'offset') ?? 0, len: num(a, 'len') ?? 0 };
    if (a.csumType !== undefined) e.csumType = csumTypes.name(num(a, 'csumType')!);
    return copyPresent(e, a, { dreg: 'dreg', sreg: 'sreg', csumOffset: 'csumOffset', csumFlags: 'csumFlags' });
  },
};

/** The meta expression: typed form to raw attributes (checked) and back. */
export const meta = {
  kernel: 'meta',
  toRaw(e: MetaExpr, field: string): RawAttrs {
    knownFields(e as never, metaFields, field);
    return { key: named(metaKeys, e.key, `${field}.key`), ...loadOrStore(e, field) };
  },
  fromRaw(a: RawAttrs): MetaExpr {
    return copyPresent<MetaExpr>({ type: 'meta', key: metaKeys.name(num(a, 'key') ?? 0) }, a, registers);
  },
};

/** The ct expression: typed form to raw attributes (checked) and back. */
export const ct = {
  kernel: 'ct',
  toRaw(e: CtExpr, field: string): RawAttrs {
    knownFields(e as never, ctFields, field);
    return defined({
      key: named(ctKeys, e.key, `${field}.key`),
      ...loadOrStore(e, field),
      direction: e.direction === undefined ? undefined : named(ctDirections, e.direction, `${field}.direction`),
    });
  },
  fromRaw(a: RawAttrs): CtExpr {
    const e = copyPresent<CtExpr>({ type: 'ct', key: ctKeys.name(num(a, 'key') ?? 0) }, a, registers);
    if (a.direction !== undefined) e.direction = ctDirections.name(num(a, 'direction')!);
    return e;
  },
};

/** The fib expression: typed form to raw attributes (checked) and back. */
export const fib = {
  kernel: 'fib',
  toRaw(e: FibExpr, field: string): RawAttrs {
    knownFields(e as never, fibFields, field);
    return {
      flags: flagBits(fibFlags, e.flags, `${field}.flags`),
      result: named(fibResults, e.result, `${field}.result`),
      dreg: reg(e.dreg, `${field}.dreg`),
    };
  },
  fromRaw(a: RawAttrs): FibExpr {
    return { type: 'fib', flags: fibFlags.flags(num(a, 'flags') ?? 0), result: fibResults.name(num(a, 'result') ?? 0), dreg: num(a, 'dreg') ?? 0 };
  },
};
