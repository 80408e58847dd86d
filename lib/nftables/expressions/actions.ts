/**
 * Expressions that act: verdicts and immediate values, counters, NAT
 * (snat, dnat, masquerade, redirect), reject, notrack and log.
 */
import { integer, knownFields, name, optionalInteger, string, wrongType, wrongValue } from '../../util/check.js';
import type { RawAttrs } from '../native.js';
import {
  type NatFlag, type NatType, type RejectType, type VerdictCode,
  NAME_RULE, families, natFlags, natTypes, rejectTypes, verdicts,
} from '../names.js';
import { K } from '../native.js';
import { bytes, copyPresent, defined, flagBits, named, num, reg, u64 } from './fields.js';

/** A verdict: accept, drop, continue, return, or jump / goto `chain`. */
export interface VerdictExpr {
  /** A verdict; the kernel holds it as an immediate into the verdict register. */
  type: 'verdict';
  /** The verdict (NFTA_VERDICT_CODE); a number for a code without a name. */
  verdict: VerdictCode | number;
  /** The chain to jump or go to, in the same table: given with `jump` and `goto` only (NFTA_VERDICT_CHAIN). */
  chain?: string;
}

/** A constant into register `dreg` (a mark to set, a NAT address). */
export interface ImmediateExpr {
  /** The kernel's immediate expression, with data rather than a verdict. */
  type: 'immediate';
  /** The data register it goes to (NFTA_IMMEDIATE_DREG): 1-4 or 8-23, not 0 (that is VerdictExpr). */
  dreg: number;
  /** The constant, 1-64 bytes in the order the register's reader expects (NFTA_IMMEDIATE_DATA). */
  data: Uint8Array;
}

/** Counts packets and bytes; read back with the kernel's counts. */
export interface CounterExpr {
  /** The kernel's counter expression. */
  type: 'counter';
  /** Packets counted (NFTA_COUNTER_PACKETS); written, where counting starts (0 when left out). */
  packets?: bigint;
  /** Bytes counted (NFTA_COUNTER_BYTES); written, where counting starts (0 when left out). */
  bytes?: bigint;
}

/** Source or destination NAT to the address in register `addrMin` (to `addrMax`) and port in `protoMin` (to `protoMax`). */
export interface NatExpr {
  /** The kernel's nat expression. */
  type: 'nat';
  /** Which side is rewritten: the source (`snat`) or the destination (`dnat`) (NFTA_NAT_TYPE). */
  nat: NatType | number;
  /** The address family of the registers: 'ip' or 'ip6'. */
  family: 'ip' | 'ip6';
  /** The register holding the address, or a range's first (NFTA_NAT_REG_ADDR_MIN); the packet's own address kept when left out. */
  addrMin?: number;
  /** The register holding a range's last address (NFTA_NAT_REG_ADDR_MAX). */
  addrMax?: number;
  /** The register holding the port, or a range's first, 2 bytes in network order (NFTA_NAT_REG_PROTO_MIN). */
  protoMin?: number;
  /** The register holding a range's last port (NFTA_NAT_REG_PROTO_MAX). */
  protoMax?: number;
  /** How ports and addresses are picked (NFTA_NAT_FLAGS); the bits for "address given" and "port given" follow from the registers. */
  flags?: Array<NatFlag | number>;
}

/** Source NAT to the outgoing interface's address. */
export interface MasqueradeExpr {
  /** The kernel's masq expression. */
  type: 'masquerade';
  /** The register holding the first source port to use, 2 bytes in network order (NFTA_MASQ_REG_PROTO_MIN). */
  protoMin?: number;
  /** The register holding the last source port to use (NFTA_MASQ_REG_PROTO_MAX). */
  protoMax?: number;
  /** How the source port is picked (NFTA_MASQ_FLAGS). */
  flags?: Array<NatFlag | number>;
}

/** Destination NAT to the host itself. */
export interface RedirectExpr {
  /** The kernel's redir expression. */
  type: 'redirect';
  /** The register holding the local port to send to, or a range's first, 2 bytes in network order (NFTA_REDIR_REG_PROTO_MIN); the packet's own when left out. */
  protoMin?: number;
  /** The register holding a range's last port (NFTA_REDIR_REG_PROTO_MAX). */
  protoMax?: number;
  /** How the port is picked (NFTA_REDIR_FLAGS). */
  flags?: Array<NatFlag | number>;
}

/** Drops the packet and answers: an ICMP(v6) unreachable with `code`, a TCP reset, or for inet an ICMPX code. */
export interface RejectExpr {
  /** The kernel's reject expression. */
  type: 'reject';
  /** The answer (NFTA_REJECT_TYPE): `icmp` (ICMP or ICMPv6, by the table's family), `tcp reset`, or `icmpx` (inet and bridge tables: one code for both). */
  reject: RejectType | number;
  /** The ICMP or ICMPv6 code; for `icmpx`, 0 no route, 1 port, 2 host unreachable, 3 administratively prohibited (NFTA_REJECT_ICMP_CODE). */
  code?: number;
}

/** Leaves the packet untracked by conntrack. */
export interface NotrackExpr {
  /** The kernel's notrack expression; it has no attributes. */
  type: 'notrack';
}

/** Logs the packet (to the kernel log, or to nflog `group`). */
export interface LogExpr {
  /** The kernel's log expression. */
  type: 'log';
  /** Text put before each message (NFTA_LOG_PREFIX). */
  prefix?: string;
  /** The nflog group to send packets to, 0-65535, instead of the kernel log (NFTA_LOG_GROUP); not with `level` or `flags`. */
  group?: number;
  /** Kernel log only: the syslog level, 0 (emerg) to 7 (debug), or 8 for the audit log; 4 (warning) when left out (NFTA_LOG_LEVEL). */
  level?: number;
  /** nflog only: bytes of each packet to copy (NFTA_LOG_SNAPLEN). */
  snaplen?: number;
  /** nflog only: packets to gather in the kernel before sending them (NFTA_LOG_QTHRESHOLD). */
  qthreshold?: number;
  /** Kernel log only: NF_LOG_* bits of <linux/netfilter/nf_log.h>, such as TCP sequence numbers (1), TCP options (2), IP options (4), the socket's UID (8) (NFTA_LOG_FLAGS). */
  flags?: number;
}

const verdictFields = new Set(['type', 'verdict', 'chain']);
const immediateFields = new Set(['type', 'dreg', 'data']);
const counterFields = new Set(['type', 'packets', 'bytes']);
const natFields = new Set(['type', 'nat', 'family', 'addrMin', 'addrMax', 'protoMin', 'protoMax', 'flags']);
const masqFields = new Set(['type', 'protoMin', 'protoMax', 'flags']);
const rejectFields = new Set(['type', 'reject', 'code']);
const logFields = new Set(['type', 'prefix', 'group', 'level', 'snaplen', 'qthreshold', 'flags']);

/** Immediate covers both: a verdict goes to register 0, data to the others. */
export const immediate = {
  kernel: 'immediate',
  toRaw(e: VerdictExpr | ImmediateExpr, field: string): RawAttrs {
    if (e.type === 'verdict') {
      knownFields(e as never, verdictFields, field);
      const code = named(verdicts, e.verdict, `${field}.verdict`);
      const needsChain = code === K.NFT_JUMP || code === K.NFT_GOTO;
      if (needsChain !== (e.chain !== undefined))
        throw wrongValue(`${field}.chain`, needsChain ? 'the chain to jump or go to' : 'absent for this verdict', e.chain);
      return { dreg: K.NFT_REG_VERDICT, data: defined({ code, chain: needsChain ? name(e.chain, `${field}.chain`, NAME_RULE) : undefined }) };
    }
    knownFields(e as never, immediateFields, field);
    const dreg = reg(e.dreg, `${field}.dreg`);
    if (dreg === K.NFT_REG_VERDICT) throw wrongValue(`${field}.dreg`, 'a data register (use { type: "verdict" } for verdicts)', dreg);
    return { dreg, data: bytes(e.data, `${field}.data`) };
  },
  fromRaw(a: RawAttrs): VerdictExpr | ImmediateExpr {
    const data = a.data;
    if (data instanceof Uint8Array) return { type: 'immediate', dreg: num(a, 'dreg') ?? 0, data: Buffer.from(data) };
    const v = (data ?? {}) as RawAttrs;
    const e: VerdictExpr = { type: 'verdict', verdict: verdicts.name(num(v, 'code') ?? 0) };
    if (v.chain !== undefined) e.chain = v.chain as string;
    return e;
  },
};

/** The counter expression: typed form to raw attributes (checked) and back. */
export const counter = {
  kernel: 'counter',
  toRaw(e: CounterExpr, field: string): RawAttrs {
    knownFields(e as never, counterFields, field);
    return defined({
      bytes: e.bytes === undefined ? undefined : u64(e.bytes, `${field}.bytes`),
      packets: e.packets === undefined ? undefined : u64(e.packets, `${field}.packets`),
    });
  },
  fromRaw(a: RawAttrs): CounterExpr {
    return copyPresent<CounterExpr>({ type: 'counter' }, a, { packets: 'packets', bytes: 'bytes' });
  },
};

/** The flag bits nft sends: the caller's, plus "proto specified" when a port register is given (the kernel adds "map ips" itself). */
function natFlagBits(e: { flags?: unknown; protoMin?: unknown }, field: string, withProto: boolean): number | undefined {
  let bits = e.flags === undefined ? 0 : flagBits(natFlags, e.flags, `${field}.flags`);
  if (withProto && e.protoMin !== undefined) bits |= K.NF_NAT_RANGE_PROTO_SPECIFIED;
  return bits || undefined;
}

function natFlagsOf(bits: number | undefined): Array<NatFlag | number> | undefined {
  const rest = (bits ?? 0) & ~(K.NF_NAT_RANGE_MAP_IPS | K.NF_NAT_RANGE_PROTO_SPECIFIED);
  return rest ? natFlags.flags(rest) : undefined;
}

const optReg = (v: unknown, field: string) => (v === undefined ? undefined : reg(v, field));

/** The nat expression: typed form to raw attributes (checked) and back. */
export const nat = {
  kernel: 'nat',
  toRaw(e: NatExpr, field: string): RawAttrs {
    knownFields(e as never, natFields, field);
    if (e.family !== 'ip' && e.family !== 'ip6') throw wrongValue(`${field}.family`, '"ip" or "ip6"', e.family);
    return defined({
      natType: named(natTypes, e.nat, `${field}.nat`),
      family: families.byName[e.family],
      regAddrMin: optReg(e.addrMin, `${field}.addrMin`),
      regAddrMax: optReg(e.addrMax, `${field}.addrMax`),
      regProtoMin: optReg(e.protoMin, `${field}.protoMin`),
      regProtoMax: optReg(e.protoMax, `${field}.protoMax`),
      flags: natFlagBits(e, field, true),
    });
  },
  fromRaw(a: RawAttrs): NatExpr {
    const e: NatExpr = { type: 'nat', nat: natTypes.name(num(a, 'natType') ?? 0), family: num(a, 'family') === K.NFPROTO_IPV6 ? 'ip6' : 'ip' };
    // The kernel lists a maximum equal to the minimum where none was given:
    // leave it out, as it was written.
    if (a.regAddrMin !== undefined) e.addrMin = num(a, 'regAddrMin');
    if (a.regAddrMax !== undefined && a.regAddrMax !== a.regAddrMin) e.addrMax = num(a, 'regAddrMax');
    if (a.regProtoMin !== undefined) e.protoMin = num(a, 'regProtoMin');
    if (a.regProtoMax !== undefined && a.regProtoMax !== a.regProtoMin) e.protoMax = num(a, 'regProtoMax');
    const flags = natFlagsOf(num(a, 'flags'));
    if (flags) e.flags = flags;
    return e;
  },
};

function portNat<T extends 'masquerade' | 'redirect'>(type: T, kernel: string) {
  return {
    kernel,
    toRaw(e: { type: T; protoMin?: number; protoMax?: number; flags?: Array<NatFlag | number> }, field: string): RawAttrs {
      knownFields(e as never, masqFields, field);
      return defined({
        flags: natFlagBits(e, field, false),
        regProtoMin: optReg(e.protoMin, `${field}.protoMin`),
        regProtoMax: optReg(e.protoMax, `${field}.protoMax`),
      });
    },
    fromRaw(a: RawAttrs): { type: T; protoMin?: number; protoMax?: number; flags?: Array<NatFlag | number> } {
      const e: { type: T; protoMin?: number; protoMax?: number; flags?: Array<NatFlag | number> } = { type };
      if (a.regProtoMin !== undefined) e.protoMin = num(a, 'regProtoMin');
      if (a.regProtoMax !== undefined && a.regProtoMax !== a.regProtoMin) e.protoMax = num(a, 'regProtoMax');
      const flags = natFlagsOf(num(a, 'flags'));
      if (flags) e.flags = flags;
      return e;
    },
  };
}
/** The masquerade expression: typed form to raw attributes (checked) and back. */
export const masquerade = portNat('masquerade', 'masq');
/** The redirect expression: typed form to raw attributes (checked) and back. */
export const redirect = portNat('redirect', 'redir');

/** The reject expression: typed form to raw attributes (checked) and back. */
export const reject = {
  kernel: 'reject',
  toRaw(e: RejectExpr, field: string): RawAttrs {
    knownFields(e as never, rejectFields, field);
    return defined({
      rejectType: named(rejectTypes, e.reject, `${field}.reject`),
      icmpCode: e.code === undefined ? undefined : integer(e.code, `${field}.code`, 0, 255),
    });
  },
  fromRaw(a: RawAttrs): RejectExpr {
    const e: RejectExpr = { type: 'reject', reject: rejectTypes.name(num(a, 'rejectType') ?? 0) };
    if (a.icmpCode !== undefined) e.code = num(a, 'icmpCode');
    return e;
  },
};

/** The notrack expression: typed form to raw attributes (checked) and back. */
export const notrack = {
  kernel: 'notrack',
  toRaw(e: NotrackExpr, field: string): RawAttrs {
    knownFields(e as never, new Set(['type']), field);
    return {};
  },
  fromRaw(): NotrackExpr {
    return { type: 'notrack' };
  },
};

/** The log expression: typed form to raw attributes (checked) and back. */
export const log = {
  kernel: 'log',
  toRaw(e: LogExpr, field: string): RawAttrs {
    knownFields(e as never, logFields, field);
    return defined({
      group: e.group === undefined ? undefined : integer(e.group, `${field}.group`, 0, 0xffff),
      prefix: e.prefix === undefined ? undefined : string(e.prefix, field, 'prefix'),
      snaplen: e.snaplen === undefined ? undefined : integer(e.snaplen, `${field}.snaplen`, 0, 0xffffffff),
      qthreshold: e.qthreshold === undefined ? undefined : integer(e.qthreshold, `${field}.qthreshold`, 0, 0xffff),
      level: e.level === undefined ? undefined : optionalInteger(e.level, field, 0, 8, 0, 'level'),
      flags: e.flags === undefined ? undefined : integer(e.flags, `${field}.flags`, 0, 0xffffffff),
    });
  },
  fromRaw(a: RawAttrs): LogExpr {
    return copyPresent<LogExpr>({ type: 'log' }, a, { prefix: 'prefix', group: 'group', level: 'level', snaplen: 'snaplen', qthreshold: 'qthreshold', flags: 'flags' });
  },
};
