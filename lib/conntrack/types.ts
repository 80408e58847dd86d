/**
 * The shapes of the conntrack API: entries as the kernel reports them,
 * keys that name one entry, filters, events and counters.
 */

/** IPv4 or IPv6 (`conntrack -L` prints ipv4 / ipv6). */
export type ConntrackFamily = 'inet' | 'inet6';

/** The protocols conntrack names; any other is given by its number. */
export type ConntrackProtocol = 'tcp' | 'udp' | 'icmp' | 'icmpv6' | 'sctp' | 'udplite' | 'dccp' | 'gre';

/** Status bits by the names of their IPS_*_BIT constants, as `conntrack -I --status` takes them. */
export const STATUS_FLAGS = [
  'EXPECTED',
  'SEEN_REPLY',
  'ASSURED',
  'CONFIRMED',
  'SRC_NAT',
  'DST_NAT',
  'SEQ_ADJUST',
  'SRC_NAT_DONE',
  'DST_NAT_DONE',
  'DYING',
  'FIXED_TIMEOUT',
  'TEMPLATE',
  'UNTRACKED',
  'HELPER',
  'OFFLOAD',
  'HW_OFFLOAD',
] as const;
/** One status bit's name. */
export type StatusFlag = (typeof STATUS_FLAGS)[number];

/** What `{ netns?, timeoutMs? }` opens the handle with. */
export type { OpenOptions as ConntrackOpenOptions } from '../netlink/client.js';

/**
 * One direction of a connection. Ports come with protocols that have
 * them (TCP, UDP, SCTP, DCCP, UDP-Lite); ICMP and ICMPv6 come with type,
 * code and id. Addresses are in the form `conntrack -L` prints them.
 */
export interface Tuple {
  /** Source address (`src=`). */
  src: string;
  /** Destination address (`dst=`). */
  dst: string;
  /** `sport=` */
  srcPort?: number;
  /** `dport=` */
  dstPort?: number;
  /** ICMP / ICMPv6 `type=` */
  icmpType?: number;
  /** ICMP / ICMPv6 `code=` */
  icmpCode?: number;
  /** ICMP / ICMPv6 `id=` */
  icmpId?: number;
  /** A zone that applies to this direction only (`zone-orig=` / `zone-reply=`). */
  zone?: number;
}

/** Traffic one way (`packets=`, `bytes=`). */
export interface Counters {
  /** Packets (`packets=`). */
  packets: bigint;
  /** Their bytes, IP headers included (`bytes=`). */
  bytes: bigint;
}

/** One conntrack entry, as `conntrack -L -o extended` shows it. */
export interface ConntrackEntry {
  /** IPv4 (`inet`) or IPv6 (`inet6`). */
  family: ConntrackFamily;
  /** The protocol's name, or its number when conntrack has none. */
  protocol: ConntrackProtocol | number;
  /** The protocol number (`udp 17`). */
  protonum: number;
  /** The original direction (`src= dst= sport= dport=`, first). */
  orig: Tuple;
  /** The reply direction: after NAT, its source is where the connection really goes. */
  reply: Tuple;
  /** The status bits that are set (`[ASSURED]`; no SEEN_REPLY is `[UNREPLIED]`). */
  status: StatusFlag[];
  /** TCP or SCTP state (`ESTABLISHED`, `TIME_WAIT`, ...). */
  state?: string;
  /** Seconds left before the entry expires (absent in destroy events). */
  timeout?: number;
  /** The connection mark (`mark=`). */
  mark: number;
  /** The conntrack zone (0: the default zone). */
  zone: number;
  /** The kernel's id of this entry; a delete by key with `id` removes only this very entry. */
  id?: number;
  /** References held on the entry. */
  use?: number;
  /** Packets and bytes each way, when accounting is on (net.netfilter.nf_conntrack_acct=1). */
  counters?: {
    /** The original direction's (the first `packets= bytes=`). */
    orig: Counters;
    /** The reply direction's (the second). */
    reply: Counters;
  };
  /** Nanoseconds since the epoch, when timestamping is on (net.netfilter.nf_conntrack_timestamp=1). */
  timestamp?: {
    /** When the connection was confirmed (CTA_TIMESTAMP_START). */
    start: bigint;
    /** When it ended (CTA_TIMESTAMP_STOP): in destroy events only. */
    stop?: bigint;
  };
  /** The connection labels that are set, by bit number. */
  labels?: number[];
  /** The helper attached to the connection (`ftp`, `sip`, ...). */
  helper?: string;
}

/**
 * Names one entry for get() and delete(): its protocol and its original
 * (or, without `orig`, its reply) tuple, with the zone it is in. An entry
 * read from the kernel is a key as it is. With `id`, a delete removes the
 * entry only while it is still the one that was read (a new connection
 * that reuses the tuple is left alone).
 */
export interface ConntrackKey {
  /** Taken from the addresses when left out. */
  family?: ConntrackFamily;
  /** The protocol, by name or number. */
  protocol: ConntrackProtocol | number;
  /** The original tuple (used when both are given). */
  orig?: Tuple;
  /** The reply tuple, to name the entry by it. */
  reply?: Tuple;
  /** The zone the entry is in (default 0). */
  zone?: number;
  /** Delete only the entry with this id. */
  id?: number;
}

/** Fields a tuple filter may constrain (a Tuple's, each optional); each one given must match. */
export type TupleFilter = Partial<Tuple>;

/**
 * Which entries a call is about: all that match every field given. The
 * kernel applies what it applies correctly and the rest is tested while
 * decoding, so the result is the same on every kernel.
 */
export interface ConntrackFilter {
  /** Taken from the addresses when left out and any are given. */
  family?: ConntrackFamily;
  /** The protocol, by name or number (needed for ports and ICMP fields). */
  protocol?: ConntrackProtocol | number;
  /** Fields of the original direction. */
  orig?: TupleFilter;
  /** Fields of the reply direction (its source: where a NATed connection really goes). */
  reply?: TupleFilter;
  /** The zone id. */
  zone?: number;
  /** The mark, or the bits of it under `mask`. */
  mark?:
    | number
    | {
        /** The bits the mark must have under `mask`. */
        value: number;
        /** Which bits of the mark are compared. */
        mask: number;
      };
  /** Status bits that must all be set (`conntrack -u ASSURED`). */
  status?: StatusFlag[];
}

/** One entry that a batch could not delete. */
export interface DeleteFailure {
  /** Its position in the keys (or, for deleteMatching, in `matched`). */
  index: number;
  /** Why (a NetlinkError with errno and code). */
  error: import('../netlink/errors.js').NetlinkError;
}

/** What became of every key of deleteMany(). */
export interface DeleteReport {
  /** How many entries were deleted. */
  deleted: number;
  /** Keys of entries that were already gone (or, with `id`, replaced by a newer entry). */
  missing: number[];
  /** Every other refusal, or keys whose fate is unknown because the conversation broke. */
  failures: DeleteFailure[];
}

/** What deleteMatching() found and did. */
export interface MatchingDeleteReport extends DeleteReport {
  /** The entries the filter took, as they were read; indices above refer to them. */
  matched: ConntrackEntry[];
}

/** One CPU's conntrack counters (`conntrack -S`); a counter the kernel does not send is absent. */
export interface CpuStats {
  /** The CPU's number (`cpu=`). */
  cpu: number;
  /** Lookups that found an entry (`found=`). */
  found?: number;
  /** Packets conntrack could not track (`invalid=`). */
  invalid?: number;
  /** Entries inserted (`insert=`). */
  insert?: number;
  /** Entries that could not be inserted (`insert_failed=`). */
  insertFailed?: number;
  /** Packets dropped for want of an entry (`drop=`). */
  drop?: number;
  /** Entries evicted early to make room (`early_drop=`). */
  earlyDrop?: number;
  /** ICMP errors conntrack could not match (`error=`). */
  error?: number;
  /** Lookups restarted after a table change (`search_restart=`). */
  searchRestart?: number;
  /** Insert races resolved (`clash_resolve=`). */
  clashResolve?: number;
  /** Inserts refused for a too-long hash chain (`chaintoolong=`). */
  chainTooLong?: number;
  /** Sent by old kernels only. */
  searched?: number;
  /** Sent by old kernels only. */
  new?: number;
  /** Sent by old kernels only. */
  ignore?: number;
  /** Sent by old kernels only. */
  delete?: number;
  /** Sent by old kernels only. */
  deleteList?: number;
}

/** The table's counters and size. */
export interface ConntrackStats {
  /** One entry per CPU, as `conntrack -S` prints them. */
  cpus: CpuStats[];
  /** Entries in the table (`conntrack -C`). */
  entries?: number;
  /** The table's limit (net.netfilter.nf_conntrack_max), on kernels that report it. */
  maxEntries?: number;
}

/** Which multicast group an event came from (NFNLGRP_CONNTRACK_NEW / _UPDATE / _DESTROY). */
export type ConntrackEventType = 'new' | 'update' | 'destroy';

/**
 * What an event stream yields: a change to an entry, or word that the
 * kernel dropped events because they came faster than they were read
 * (whatever the table now holds must be read again to be sure of it).
 */
export type ConntrackEvent =
  | {
      /** What happened to the entry. */
      type: ConntrackEventType;
      /** The entry as the event carries it (a destroy event has no `timeout`). */
      entry: ConntrackEntry;
    }
  | {
      /** Events were lost: read the table to know what it holds. */
      type: 'overrun';
    };

/** What an event stream subscribes to. */
export interface EventOptions {
  /** Which events (default: all three). */
  types?: ConntrackEventType[];
  /** Only entries this filter takes (tested as each event is decoded). */
  filter?: ConntrackFilter;
  /**
   * Events held for a consumer that has not taken them yet (default
   * 16384). Past that, reading stops, the kernel drops what does not fit
   * its socket buffer, and the stream yields an overrun.
   */
  maxQueued?: number;
}
