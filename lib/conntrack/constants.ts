/**
 * Conntrack constants, read from the addon, which takes them from the
 * uapi headers (<linux/netfilter/nf_conntrack_common.h>, nfnetlink.h, ...)
 * at build time: nothing here is retyped from a header.
 */
import { native } from '../netlink/binding.js';

interface Constants {
  NFPROTO_IPV4: number;
  NFPROTO_IPV6: number;
  NFNLGRP_CONNTRACK_NEW: number;
  NFNLGRP_CONNTRACK_UPDATE: number;
  NFNLGRP_CONNTRACK_DESTROY: number;
  IPPROTO_ICMP: number;
  IPPROTO_ICMPV6: number;
  kOverrunRecord: number;
  /** Status bit name -> bit number. */
  status: Record<string, number>;
  /** Protocol name -> number. */
  protocols: Record<string, number>;
  /** Protocol number -> state name -> value. */
  states: Record<string, Record<string, number>>;
  statsNames: string[];
  /** Record field -> offset (native/conntrack/records.h). */
  layout: Record<string, number>;
  /** Bits of a record's Present field (native/conntrack/types.h). */
  present: Record<
    'status' | 'timeout' | 'mark' | 'id' | 'use' | 'countersOrig' | 'countersReply' | 'state' | 'timestamp' | 'timestampStop' | 'labels' | 'helper',
    number
  >;
}

export const CT = native.conntrackConstants as Constants;

/** Protocol numbers whose tuples have ports. */
export const PORT_PROTOCOLS: ReadonlySet<number> = new Set(['tcp', 'udp', 'sctp', 'dccp', 'udplite'].map((n) => CT.protocols[n]));
/** ICMP and ICMPv6. */
export const ICMP_PROTOCOLS: ReadonlySet<number> = new Set([CT.IPPROTO_ICMP, CT.IPPROTO_ICMPV6]);

/** Protocol number -> name, for the protocols conntrack names. */
export const PROTOCOL_NAME: ReadonlyMap<number, string> = new Map(Object.entries(CT.protocols).map(([n, v]) => [v, n]));

/** Status bit number -> name. */
export const STATUS_NAME: readonly string[] = (() => {
  const names: string[] = [];
  for (const [n, bit] of Object.entries(CT.status)) names[bit] = n;
  return names;
})();

/** Protocol number -> state value -> name. */
export const STATE_NAME: ReadonlyMap<number, readonly string[]> = new Map(
  Object.entries(CT.states).map(([proto, table]) => {
    const names: string[] = [];
    for (const [n, v] of Object.entries(table)) names[v] ??= n;
    return [Number(proto), names];
  }),
);

export const FAMILY = { inet: CT.NFPROTO_IPV4, inet6: CT.NFPROTO_IPV6 } as const;

export const GROUP = {
  new: CT.NFNLGRP_CONNTRACK_NEW,
  update: CT.NFNLGRP_CONNTRACK_UPDATE,
  destroy: CT.NFNLGRP_CONNTRACK_DESTROY,
} as const;
