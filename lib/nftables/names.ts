/**
 * The names this library gives the kernel's numbers (families, hooks,
 * verdicts, expression keys, flags), built from the uapi constants the addon
 * exports: each name maps to a value the compiler read from a header.
 */
import { K } from './native.js';

/** A name-to-number table with its reverse, for one enum or flag set. */
export class Names<N extends string> {
  readonly byName: Readonly<Record<N, number>>;
  private readonly byValue = new Map<number, N>();

  constructor(entries: Record<N, number>) {
    this.byName = entries;
    for (const [k, v] of Object.entries(entries) as Array<[N, number]>) if (!this.byValue.has(v)) this.byValue.set(v, k);
  }

  /** The names, for error messages and checks. */
  get names(): N[] {
    return Object.keys(this.byName) as N[];
  }

  /** The name of a value, or the value itself when it has none (a newer kernel's). */
  name(value: number): N | number {
    return this.byValue.get(value) ?? value;
  }

  /** Flag bits to names; bits without a name stay numbers. */
  flags(bits: number): Array<N | number> {
    const out: Array<N | number> = [];
    let rest = bits >>> 0;
    for (const [k, v] of Object.entries(this.byName) as Array<[N, number]>) {
      if (v !== 0 && (rest & v) === v) {
        out.push(k);
        rest = (rest & ~v) >>> 0;
      }
    }
    for (let bit = 1; rest !== 0 && bit !== 0; bit = (bit << 1) >>> 0) {
      if (rest & bit) {
        out.push(bit);
        rest = (rest & ~bit) >>> 0;
      }
    }
    return out;
  }
}

/** Address families of tables. */
export type Family = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';
/** Families to NFPROTO_*. */
export const families = new Names<Family>({
  ip: K.NFPROTO_IPV4,
  ip6: K.NFPROTO_IPV6,
  inet: K.NFPROTO_INET,
  arp: K.NFPROTO_ARP,
  bridge: K.NFPROTO_BRIDGE,
  netdev: K.NFPROTO_NETDEV,
});

/** Where a base chain hooks in. */
export type Hook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting' | 'ingress' | 'egress';
/** Hook numbers are per family: netdev numbers its hooks from 0 again. */
export const inetHooks = new Names<Exclude<Hook, 'egress'>>({
  prerouting: K.NF_INET_PRE_ROUTING,
  input: K.NF_INET_LOCAL_IN,
  forward: K.NF_INET_FORWARD,
  output: K.NF_INET_LOCAL_OUT,
  postrouting: K.NF_INET_POST_ROUTING,
  ingress: K.NF_INET_INGRESS,
});
/** netdev's hook numbers. */
export const netdevHooks = new Names<'ingress' | 'egress'>({ ingress: K.NF_NETDEV_INGRESS, egress: K.NF_NETDEV_EGRESS });
/** The hook numbering of a family. */
export function hooksOf(family: Family): Names<Hook> {
  return (family === 'netdev' ? netdevHooks : inetHooks) as Names<Hook>;
}

/** A base chain's policy. */
export type Policy = 'accept' | 'drop';
/** Policies to NF_ACCEPT / NF_DROP. */
export const policies = new Names<Policy>({ accept: K.NF_ACCEPT, drop: K.NF_DROP });

/** Table flags. */
export type TableFlag = 'dormant' | 'owner';
/** Table flags to NFT_TABLE_F_*. */
export const tableFlags = new Names<TableFlag>({ dormant: K.NFT_TABLE_F_DORMANT, owner: K.NFT_TABLE_F_OWNER });

/** Set flags. */
export type SetFlag = 'anonymous' | 'constant' | 'interval' | 'map' | 'timeout' | 'dynamic' | 'object' | 'concat' | 'expr';
/** Set flags to NFT_SET_*. */
export const setFlags = new Names<SetFlag>({
  anonymous: K.NFT_SET_ANONYMOUS,
  constant: K.NFT_SET_CONSTANT,
  interval: K.NFT_SET_INTERVAL,
  map: K.NFT_SET_MAP,
  timeout: K.NFT_SET_TIMEOUT,
  dynamic: K.NFT_SET_EVAL,
  object: K.NFT_SET_OBJECT,
  concat: K.NFT_SET_CONCAT,
  expr: K.NFT_SET_EXPR,
});

/** What a set's backend favours. */
export type SetPolicy = 'performance' | 'memory';
/** Set policies to NFT_SET_POL_*. */
export const setPolicies = new Names<SetPolicy>({ performance: K.NFT_SET_POL_PERFORMANCE, memory: K.NFT_SET_POL_MEMORY });

/** Verdicts. */
export type VerdictCode = 'accept' | 'drop' | 'continue' | 'break' | 'return' | 'jump' | 'goto';
/** Verdicts to NF_ACCEPT, NF_DROP and NFT_* codes. */
export const verdicts = new Names<VerdictCode>({
  accept: K.NF_ACCEPT,
  drop: K.NF_DROP,
  continue: K.NFT_CONTINUE,
  break: K.NFT_BREAK,
  return: K.NFT_RETURN,
  jump: K.NFT_JUMP,
  goto: K.NFT_GOTO,
});

/** The header a payload offset counts from. */
export type PayloadBase = 'll' | 'network' | 'transport' | 'inner';
/** Payload bases to NFT_PAYLOAD_*. */
export const payloadBases = new Names<PayloadBase>({
  ll: K.NFT_PAYLOAD_LL_HEADER,
  network: K.NFT_PAYLOAD_NETWORK_HEADER,
  transport: K.NFT_PAYLOAD_TRANSPORT_HEADER,
  inner: K.NFT_PAYLOAD_INNER_HEADER,
});

/** Checksum updates on payload writes. */
export type CsumType = 'none' | 'inet' | 'sctp';
/** Checksum types to NFT_PAYLOAD_CSUM_*. */
export const csumTypes = new Names<CsumType>({ none: K.NFT_PAYLOAD_CSUM_NONE, inet: K.NFT_PAYLOAD_CSUM_INET, sctp: K.NFT_PAYLOAD_CSUM_SCTP });

/** Packet metadata keys. */
export type MetaKey =
  | 'len' | 'protocol' | 'priority' | 'mark' | 'iif' | 'oif' | 'iifname' | 'oifname' | 'iiftype' | 'oiftype'
  | 'skuid' | 'skgid' | 'nftrace' | 'rtclassid' | 'secmark' | 'nfproto' | 'l4proto' | 'pkttype' | 'cpu'
  | 'iifgroup' | 'oifgroup' | 'cgroup' | 'random' | 'iifkind' | 'oifkind';
/** Meta keys to NFT_META_*. */
export const metaKeys = new Names<MetaKey>({
  len: K.NFT_META_LEN, protocol: K.NFT_META_PROTOCOL, priority: K.NFT_META_PRIORITY, mark: K.NFT_META_MARK,
  iif: K.NFT_META_IIF, oif: K.NFT_META_OIF, iifname: K.NFT_META_IIFNAME, oifname: K.NFT_META_OIFNAME,
  iiftype: K.NFT_META_IIFTYPE, oiftype: K.NFT_META_OIFTYPE, skuid: K.NFT_META_SKUID, skgid: K.NFT_META_SKGID,
  nftrace: K.NFT_META_NFTRACE, rtclassid: K.NFT_META_RTCLASSID, secmark: K.NFT_META_SECMARK,
  nfproto: K.NFT_META_NFPROTO, l4proto: K.NFT_META_L4PROTO, pkttype: K.NFT_META_PKTTYPE, cpu: K.NFT_META_CPU,
  iifgroup: K.NFT_META_IIFGROUP, oifgroup: K.NFT_META_OIFGROUP, cgroup: K.NFT_META_CGROUP,
  random: K.NFT_META_PRANDOM, iifkind: K.NFT_META_IIFKIND, oifkind: K.NFT_META_OIFKIND,
});

/** Conntrack keys. */
export type CtKey =
  | 'state' | 'direction' | 'status' | 'mark' | 'secmark' | 'expiration' | 'helper' | 'l3proto' | 'saddr' | 'daddr'
  | 'protocol' | 'proto-src' | 'proto-dst' | 'labels' | 'packets' | 'bytes' | 'avgpkt' | 'zone' | 'event'
  | 'ip saddr' | 'ip daddr' | 'ip6 saddr' | 'ip6 daddr' | 'id';
/** Conntrack keys to NFT_CT_*. */
export const ctKeys = new Names<CtKey>({
  state: K.NFT_CT_STATE, direction: K.NFT_CT_DIRECTION, status: K.NFT_CT_STATUS, mark: K.NFT_CT_MARK,
  secmark: K.NFT_CT_SECMARK, expiration: K.NFT_CT_EXPIRATION, helper: K.NFT_CT_HELPER, l3proto: K.NFT_CT_L3PROTOCOL,
  saddr: K.NFT_CT_SRC, daddr: K.NFT_CT_DST, protocol: K.NFT_CT_PROTOCOL, 'proto-src': K.NFT_CT_PROTO_SRC,
  'proto-dst': K.NFT_CT_PROTO_DST, labels: K.NFT_CT_LABELS, packets: K.NFT_CT_PKTS, bytes: K.NFT_CT_BYTES,
  avgpkt: K.NFT_CT_AVGPKT, zone: K.NFT_CT_ZONE, event: K.NFT_CT_EVENTMASK, 'ip saddr': K.NFT_CT_SRC_IP,
  'ip daddr': K.NFT_CT_DST_IP, 'ip6 saddr': K.NFT_CT_SRC_IP6, 'ip6 daddr': K.NFT_CT_DST_IP6, id: K.NFT_CT_ID,
});
/** Conntrack directions. */
export type CtDirection = 'original' | 'reply';
/** Directions to IP_CT_DIR_*. */
export const ctDirections = new Names<CtDirection>({ original: K.IP_CT_DIR_ORIGINAL, reply: K.IP_CT_DIR_REPLY });

/** Bits of `ct state` (NF_CT_STATE_BIT of each ctinfo, as nf_conntrack_common.h defines it). */
export type CtState = 'invalid' | 'established' | 'related' | 'new' | 'untracked';
/** `ct state` names to their bits. */
export const ctStates = new Names<CtState>({
  invalid: K.NF_CT_STATE_INVALID_BIT,
  established: 1 << (K.IP_CT_ESTABLISHED + 1),
  related: 1 << (K.IP_CT_RELATED + 1),
  new: 1 << (K.IP_CT_NEW + 1),
  untracked: K.NF_CT_STATE_UNTRACKED_BIT,
});

/** Comparisons. */
export type CmpOp = 'eq' | 'neq' | 'lt' | 'lte' | 'gt' | 'gte';
/** Comparisons to NFT_CMP_*. */
export const cmpOps = new Names<CmpOp>({ eq: K.NFT_CMP_EQ, neq: K.NFT_CMP_NEQ, lt: K.NFT_CMP_LT, lte: K.NFT_CMP_LTE, gt: K.NFT_CMP_GT, gte: K.NFT_CMP_GTE });
/** Range matches. */
export type RangeOp = 'eq' | 'neq';
/** Range matches to NFT_RANGE_*. */
export const rangeOps = new Names<RangeOp>({ eq: K.NFT_RANGE_EQ, neq: K.NFT_RANGE_NEQ });
/** Bitwise operations. */
export type BitwiseOp = 'bool' | 'lshift' | 'rshift';
/** Bitwise operations to NFT_BITWISE_*. */
export const bitwiseOps = new Names<BitwiseOp>({ bool: K.NFT_BITWISE_BOOL, lshift: K.NFT_BITWISE_LSHIFT, rshift: K.NFT_BITWISE_RSHIFT });
/** Byte order conversions. */
export type ByteorderOp = 'ntoh' | 'hton';
/** Conversions to NFT_BYTEORDER_*. */
export const byteorderOps = new Names<ByteorderOp>({ ntoh: K.NFT_BYTEORDER_NTOH, hton: K.NFT_BYTEORDER_HTON });
/** What dynset does to a set. */
export type DynsetOp = 'add' | 'update' | 'delete';
/** Dynset operations to NFT_DYNSET_OP_*. */
export const dynsetOps = new Names<DynsetOp>({ add: K.NFT_DYNSET_OP_ADD, update: K.NFT_DYNSET_OP_UPDATE, delete: K.NFT_DYNSET_OP_DELETE });

/** NAT kinds. */
export type NatType = 'snat' | 'dnat';
/** NAT kinds to NFT_NAT_*. */
export const natTypes = new Names<NatType>({ snat: K.NFT_NAT_SNAT, dnat: K.NFT_NAT_DNAT });
/** NAT port allocation flags. */
export type NatFlag = 'random' | 'fully-random' | 'persistent';
/** NAT flags to NF_NAT_RANGE_*. */
export const natFlags = new Names<NatFlag>({
  random: K.NF_NAT_RANGE_PROTO_RANDOM,
  'fully-random': K.NF_NAT_RANGE_PROTO_RANDOM_FULLY,
  persistent: K.NF_NAT_RANGE_PERSISTENT,
});

/** How reject answers. */
export type RejectType = 'icmp' | 'tcp reset' | 'icmpx';
/** Reject types to NFT_REJECT_*. */
export const rejectTypes = new Names<RejectType>({ icmp: K.NFT_REJECT_ICMP_UNREACH, 'tcp reset': K.NFT_REJECT_TCP_RST, icmpx: K.NFT_REJECT_ICMPX_UNREACH });

/** What a limit counts. */
export type LimitType = 'packets' | 'bytes';
/** Limit types to NFT_LIMIT_*. */
export const limitTypes = new Names<LimitType>({ packets: K.NFT_LIMIT_PKTS, bytes: K.NFT_LIMIT_PKT_BYTES });

/** How numgen makes its numbers. */
export type NumgenType = 'inc' | 'random';
/** Numgen types to NFT_NG_*. */
export const numgenTypes = new Names<NumgenType>({ inc: K.NFT_NG_INCREMENTAL, random: K.NFT_NG_RANDOM });

/** Which hash: Jenkins' of register bytes, or the flow's symmetric one. */
export type HashType = 'jhash' | 'symhash';
/** Hash types to NFT_HASH_*. */
export const hashTypes = new Names<HashType>({ jhash: K.NFT_HASH_JENKINS, symhash: K.NFT_HASH_SYM });

/** Kinds of stateful object a rule can refer to by name. */
export type ObjectType = 'counter' | 'quota' | 'ct helper' | 'limit' | 'connlimit' | 'tunnel' | 'ct timeout' | 'secmark' | 'ct expectation' | 'synproxy';
/** Object types to NFT_OBJECT_* (nft's words for them). */
export const objectTypes = new Names<ObjectType>({
  counter: K.NFT_OBJECT_COUNTER,
  quota: K.NFT_OBJECT_QUOTA,
  'ct helper': K.NFT_OBJECT_CT_HELPER,
  limit: K.NFT_OBJECT_LIMIT,
  connlimit: K.NFT_OBJECT_CONNLIMIT,
  tunnel: K.NFT_OBJECT_TUNNEL,
  'ct timeout': K.NFT_OBJECT_CT_TIMEOUT,
  secmark: K.NFT_OBJECT_SECMARK,
  'ct expectation': K.NFT_OBJECT_CT_EXPECT,
  synproxy: K.NFT_OBJECT_SYNPROXY,
});

/** What a fib lookup yields. */
export type FibResult = 'oif' | 'oifname' | 'type';
/** Fib results to NFT_FIB_RESULT_*. */
export const fibResults = new Names<FibResult>({ oif: K.NFT_FIB_RESULT_OIF, oifname: K.NFT_FIB_RESULT_OIFNAME, type: K.NFT_FIB_RESULT_ADDRTYPE });
/** What a fib lookup is keyed by. */
export type FibFlag = 'saddr' | 'daddr' | 'mark' | 'iif' | 'oif' | 'present';
/** Fib flags to NFTA_FIB_F_*. */
export const fibFlags = new Names<FibFlag>({
  saddr: K.NFTA_FIB_F_SADDR, daddr: K.NFTA_FIB_F_DADDR, mark: K.NFTA_FIB_F_MARK,
  iif: K.NFTA_FIB_F_IIF, oif: K.NFTA_FIB_F_OIF, present: K.NFTA_FIB_F_PRESENT,
});
/** What `fib ... type` yields: the route types of <linux/rtnetlink.h>. */
export type AddrType =
  | 'unspec' | 'unicast' | 'local' | 'broadcast' | 'anycast' | 'multicast' | 'blackhole' | 'unreachable'
  | 'prohibit' | 'throw' | 'nat' | 'xresolve';
/** Route types to RTN_*. */
export const addrTypes = new Names<AddrType>({
  unspec: K.RTN_UNSPEC, unicast: K.RTN_UNICAST, local: K.RTN_LOCAL, broadcast: K.RTN_BROADCAST,
  anycast: K.RTN_ANYCAST, multicast: K.RTN_MULTICAST, blackhole: K.RTN_BLACKHOLE, unreachable: K.RTN_UNREACHABLE,
  prohibit: K.RTN_PROHIBIT, throw: K.RTN_THROW, nat: K.RTN_NAT, xresolve: K.RTN_XRESOLVE,
});

/** Transport protocols by name. */
export type L4Proto = 'icmp' | 'igmp' | 'tcp' | 'udp' | 'dccp' | 'gre' | 'esp' | 'ah' | 'icmpv6' | 'sctp' | 'udplite';
/** Protocols to IPPROTO_*. */
export const l4protos = new Names<L4Proto>({
  icmp: K.IPPROTO_ICMP, igmp: K.IPPROTO_IGMP, tcp: K.IPPROTO_TCP, udp: K.IPPROTO_UDP, dccp: K.IPPROTO_DCCP,
  gre: K.IPPROTO_GRE, esp: K.IPPROTO_ESP, ah: K.IPPROTO_AH, icmpv6: K.IPPROTO_ICMPV6, sctp: K.IPPROTO_SCTP,
  udplite: K.IPPROTO_UDPLITE,
});

/** Registers: 0 is the verdict, 1-4 the 16-byte ones, 8-23 the 4-byte ones (NFT_REG32_00..15). */
export const REG_VERDICT = K.NFT_REG_VERDICT;
/** The highest register number. */
export const REG_MAX = K.NFT_REG32_15;
/** The longest table, chain or set name, in bytes. */
export const NAME_MAX_BYTES = K.NFT_NAME_MAXLEN - 1;
/** The check util/check.ts name() applies to a table's, chain's, set's or object's name. */
export const NAME_RULE = { maxBytes: NAME_MAX_BYTES };
/** The most userdata an object keeps. */
export const USERDATA_MAX = K.NFT_USERDATA_MAXLEN;
