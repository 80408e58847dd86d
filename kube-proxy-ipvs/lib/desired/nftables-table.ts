/**
 * The nftables backend's table (an extension): one table per family,
 * `ip kube-proxy-ipvs` and `ip6 kube-proxy-ipvs`, doing what kube-proxy's
 * IPVS mode does with its KUBE-* chains (iptables-rules.ts), with one set
 * per kube-proxy ipset (ipsets.ts) holding the same entries. Unlike the
 * iptables rules, the rules here never depend on what the sets hold: a
 * Service change is only set elements added and deleted.
 *
 * Hooks and priorities are those of the iptables chains they stand for
 * (nat at dstnat/srcnat, filter at 0), so IPVS (LOCAL_IN at 98, LOCAL_OUT
 * at -99) sees packets in the same order. Two things differ, because nft
 * has no match for them: the node's own traffic to a load balancer whose
 * source ranges leave the node out is dropped in an output chain at
 * priority -150, before IPVS rewrites its destination (iptables matches it
 * afterwards with `-m ipvs --vaddr`); and externalIPs' accept rules have no
 * `physdev` part (an accept here ends only this table's chain, so what
 * follows in it decides the same either way).
 */
import type { Chain, Expression, NftSet, Rule, Table } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import type { ProxyConfig } from '../kubernetes/model.js';
import { SET, SET_DEFINITIONS, type SetName } from './ipsets.js';
import { localDetector } from './local-detector.js';
import {
  addressTypeLocal, CT_STATE, ctStateAny, flipMarkBit, inputInterfaceName, inSet, jump, markBit, portInSet, rejectPortUnreachable, setMarkBit, sourceIn, verdict,
  type KeyPart,
} from './nftables-matches.js';

export const NFT_TABLE = 'kube-proxy-ipvs';

/** The set the nftables backend adds to kube-proxy's: node-sourced traffic to these load balancer ip + port is dropped (KUBE-IPVS-OUT-FILTER's rules). */
export const OUT_DROP_SET = 'KUBE-LOAD-BALANCER-OUT-DROP';

export type NftFamily = 'ip' | 'ip6';

export function nftFamily(family: AddressFamily): NftFamily {
  return family === 'inet' ? 'ip' : 'ip6';
}

/** One family's table: what is created, in the order a transaction creates it. */
export interface NftTableSpec {
  family: AddressFamily;
  table: Table;
  sets: NftSet[];
  chains: Chain[];
  rules: Rule[];
}

/** "KUBE-NODE-PORT-LOCAL-TCP" → "node-port-local-tcp". */
export function nftSetName(set: string): string {
  return set.replace(/^KUBE-/, '').toLowerCase();
}

type KeyShape = readonly KeyPart[];

/** Each set's key, in the order ipset matches its `dst,dst,src` flags; bitmap:port sets are a port alone. */
const KEYS: Record<SetName | typeof OUT_DROP_SET, KeyShape> = {
  [SET.loopBack]: ['daddr', 'l4proto', 'dport', 'saddr'],
  [SET.clusterIP]: ['daddr', 'l4proto', 'dport'],
  [SET.externalIP]: ['daddr', 'l4proto', 'dport'],
  [SET.externalIPLocal]: ['daddr', 'l4proto', 'dport'],
  [SET.loadBalancer]: ['daddr', 'l4proto', 'dport'],
  [SET.loadBalancerFW]: ['daddr', 'l4proto', 'dport'],
  [SET.loadBalancerLocal]: ['daddr', 'l4proto', 'dport'],
  [SET.loadBalancerSourceIP]: ['daddr', 'l4proto', 'dport', 'saddr'],
  [SET.loadBalancerSourceCIDR]: ['daddr', 'l4proto', 'dport', 'saddr'],
  [SET.nodePortTCP]: ['dport'],
  [SET.nodePortLocalTCP]: ['dport'],
  [SET.nodePortUDP]: ['dport'],
  [SET.nodePortLocalUDP]: ['dport'],
  [SET.nodePortSCTP]: ['daddr', 'l4proto', 'dport'],
  [SET.nodePortLocalSCTP]: ['daddr', 'l4proto', 'dport'],
  [SET.healthCheckNodePort]: ['dport'],
  [SET.ipvsIPs]: ['daddr'],
  [OUT_DROP_SET]: ['saddr', 'daddr', 'l4proto', 'dport'],
};

/** The key's parts as the nft set spells them. */
export function keyShape(set: string): KeyShape {
  return KEYS[set as SetName];
}

const INTERVAL = new Set<string>([SET.loadBalancerSourceCIDR]);

export function isIntervalSet(set: string): boolean {
  return INTERVAL.has(set);
}

const OUT_DROP_COMMENT = 'Load balancer ip + port whose source ranges leave the node out: the node may not reach it';

/** The table for one family, as `config` (and, for --detect-local-mode=NodeCIDR, the Node's spec.podCIDRs) asks for it. */
export function nftTable(family: AddressFamily, config: ProxyConfig, podCIDRs: readonly string[] = []): NftTableSpec {
  const t = { family: nftFamily(family), table: NFT_TABLE };
  const addr = family === 'inet' ? 'ipv4_addr' : 'ipv6_addr';
  const sets: NftSet[] = [...SET_DEFINITIONS.map((d) => [d.name, d.comment] as const), [OUT_DROP_SET, OUT_DROP_COMMENT] as const].map(([set, comment]) => {
    const name = nftSetName(set);
    const type = KEYS[set].map((p) => (p === 'saddr' || p === 'daddr' ? addr : p === 'l4proto' ? 'inet_proto' : 'inet_service'));
    return { ...t, name, type: type.length === 1 ? type[0] : type, ...(INTERVAL.has(set) ? { flags: ['interval' as const] } : {}), comment };
  });
  const chains: Chain[] = [];
  const rules: Rule[] = [];
  const chain = (name: string, hook?: Pick<Chain, 'type' | 'hook' | 'priority'>, ...body: Body[]) => {
    chains.push({ ...t, name, ...(hook ? { ...hook, policy: 'accept' as const } : {}) });
    for (const b of body) rules.push(Array.isArray(b) ? { ...t, chain: name, expressions: b } : { ...t, chain: name, ...b });
  };
  const r = rulesOf(family, config, podCIDRs);
  chain('nat-prerouting', { type: 'nat', hook: 'prerouting', priority: -100 }, [jump('services')]);
  chain('nat-output', { type: 'nat', hook: 'output', priority: -100 }, [jump('services')]);
  chain('nat-postrouting', { type: 'nat', hook: 'postrouting', priority: 100 }, [jump('postrouting')]);
  // iptables inserts each jump at the top of its chain: the last one listed runs first.
  chain('filter-input', { type: 'filter', hook: 'input', priority: 0 }, [jump('ipvs-filter')], [jump('proxy-firewall')], [jump('health-check')]);
  chain('filter-forward', { type: 'filter', hook: 'forward', priority: 0 }, [jump('proxy-firewall')], [jump('forward')]);
  chain('filter-output', { type: 'filter', hook: 'output', priority: -150 }, [jump('ipvs-out-filter')]);
  for (const [name, body] of Object.entries(r)) chain(name, undefined, ...body);
  const table: Table = { family: t.family, name: NFT_TABLE, comment: "kube-proxy-ipvs: the rules of kube-proxy's IPVS mode" };
  return { family, table, sets, chains, rules };
}

/** A rule's expressions, or those with the rule's comment. */
type Body = Expression[] | { comment: string; expressions: Expression[] };

/** The regular chains, KUBE-* chain for KUBE-* chain, in the order of their rules in iptables-rules.ts. */
function rulesOf(family: AddressFamily, config: ProxyConfig, podCIDRs: readonly string[]): Record<string, Body[]> {
  const mark = (1 << config.masqueradeBit) >>> 0;
  const match = (set: string) => inSet(family, KEYS[set as SetName], nftSetName(set), { interval: INTERVAL.has(set) });
  const port = (protocol: 'tcp' | 'udp', set: string) => portInSet(protocol, nftSetName(set));
  const masq = jump('mark-for-masquerade');
  const externalAccepts = (set: string) => [
    [...match(set), ...addressTypeLocal('saddr', 'neq'), verdict('accept')],
    [...match(set), ...addressTypeLocal('daddr', 'eq'), verdict('accept')],
  ];
  return {
    services: [
      [...sourceIn(family, family === 'inet' ? '127.0.0.0/8' : '::1/128', 'eq'), verdict('return')],
      [...match(SET.loadBalancer), jump('load-balancer')],
      clusterIPMasquerade(family, config, podCIDRs, masq),
      [...match(SET.externalIP), masq],
      ...externalAccepts(SET.externalIP),
      ...externalAccepts(SET.externalIPLocal),
      [...addressTypeLocal('daddr', 'eq'), jump('node-port')],
      // At the end, so other rules (hostPort CNI chains, #62718) cannot steal VIP traffic.
      [...match(SET.clusterIP), verdict('accept')],
      [...match(SET.loadBalancer), verdict('accept')],
    ],
    'load-balancer': [[...match(SET.loadBalancerLocal), verdict('return')], [masq]],
    // The LOCAL sets first, so ETP=Local ports return before they are marked.
    'node-port': [
      [...port('tcp', SET.nodePortLocalTCP), verdict('return')],
      [...port('tcp', SET.nodePortTCP), masq],
      [...port('udp', SET.nodePortLocalUDP), verdict('return')],
      [...port('udp', SET.nodePortUDP), masq],
      [...match(SET.nodePortLocalSCTP), verdict('return')],
      [...match(SET.nodePortSCTP), masq],
    ],
    'mark-for-masquerade': [setMarkBit(mark)],
    // Masquerade marked packets once: the mark is cleared so a packet passing again is not SNATed twice.
    postrouting: [
      [...match(SET.loopBack), { type: 'masquerade' }],
      [...markBit(mark, false), verdict('return')],
      flipMarkBit(mark),
      [config.randomFully ? { type: 'masquerade', flags: ['fully-random'] } : { type: 'masquerade' }],
    ],
    forward: [
      { comment: 'kubernetes forwarding rules', expressions: [...markBit(mark, true), verdict('accept')] },
      { comment: 'kubernetes forwarding conntrack rule', expressions: [...ctStateAny(CT_STATE.established | CT_STATE.related), verdict('accept')] },
    ],
    'proxy-firewall': [[...match(SET.loadBalancerFW), jump('source-ranges-firewall')]],
    'source-ranges-firewall': [
      [...match(SET.loadBalancerSourceCIDR), verdict('return')],
      [...match(SET.loadBalancerSourceIP), verdict('return')],
      [verdict('drop')],
    ],
    'health-check': [[...port('tcp', SET.healthCheckNodePort), verdict('accept')]],
    // #72236: service ports return; any other new connection to an address on kube-ipvs0 is rejected.
    'ipvs-filter': [
      [...match(SET.loadBalancer), verdict('return')],
      [...match(SET.clusterIP), verdict('return')],
      [...match(SET.externalIP), verdict('return')],
      [...match(SET.externalIPLocal), verdict('return')],
      [...port('tcp', SET.healthCheckNodePort), verdict('return')],
      [...ctStateAny(CT_STATE.new), ...match(SET.ipvsIPs), rejectPortUnreachable(family)],
    ],
    'ipvs-out-filter': [[...match(OUT_DROP_SET), verdict('drop')]],
  };
}

/**
 * Which traffic to a ClusterIP is marked for masquerade, as iptables-rules.ts
 * decides it: all of it with masqueradeAll; traffic not from the pods when
 * the family has a local-traffic detector (`ip saddr != <pod range>`,
 * `iifname != "<bridge>"`, `iifname != "<prefix>*"`); otherwise
 * node-originated traffic whose source is a VIP (ipset's `src,dst`).
 */
function clusterIPMasquerade(family: AddressFamily, config: ProxyConfig, podCIDRs: readonly string[], masq: Expression): Expression[] {
  const name = nftSetName(SET.clusterIP);
  if (config.masqueradeAll) return [...inSet(family, KEYS[SET.clusterIP], name), masq];
  const detector = localDetector(family, config, podCIDRs);
  if (detector === undefined) return [...inSet(family, ['saddr', 'l4proto', 'dport'], name), masq];
  const notLocal = detector.kind === 'cidr' ? sourceIn(family, detector.cidr, 'neq') : inputInterfaceName(detector.name, detector.prefix, 'neq');
  return [...inSet(family, KEYS[SET.clusterIP], name), ...notLocal, masq];
}
