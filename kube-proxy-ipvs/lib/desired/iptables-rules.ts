/**
 * The iptables rules IPVS mode still needs, rendered as the input kube-proxy
 * gives `iptables-restore --noflush --counters` (writeIptablesRules in
 * proxier.go): NAT for masquerading, and filter chains for forwarding,
 * health-check ports, LoadBalancer source ranges and the KUBE-IPVS-FILTER
 * fix for #72236. Set-based rules are written only for non-empty sets, so
 * the rule count stays constant whatever the number of services.
 */
import type { K8sProtocol, ProxyConfig } from '../kubernetes/model.js';
import { ipsetName, SET, setDefinition, type SetName } from './ipsets.js';
import { iptablesNotLocal, localDetector } from './local-detector.js';
import type { AddressFamily } from 'ipvs-netlink/address';

/** A LoadBalancer VIP:port whose source ranges exclude the node (#119656): the node may not reach it. */
export interface OutFilterDrop {
  family: AddressFamily;
  address: string;
  protocol: K8sProtocol;
  port: number;
}

export interface IptablesInputs {
  family: AddressFamily;
  config: ProxyConfig;
  /** The Node's spec.podCIDRs (--detect-local-mode=NodeCIDR). */
  podCIDRs?: readonly string[];
  /** Whether the set (IPv4 name) has entries in this family. */
  hasEntries: (set: SetName) => boolean;
  outFilterDrops: readonly OutFilterDrop[];
}

/** Chains written (and so flushed) by every restore: iptablesChains in proxier.go. */
export const NAT_CHAINS = ['KUBE-SERVICES', 'KUBE-POSTROUTING', 'KUBE-NODE-PORT', 'KUBE-LOAD-BALANCER', 'KUBE-MARK-MASQ'];
export const FILTER_CHAINS = [
  'KUBE-FORWARD',
  'KUBE-NODE-PORT',
  'KUBE-PROXY-FIREWALL',
  'KUBE-SOURCE-RANGES-FIREWALL',
  'KUBE-IPVS-FILTER',
  'KUBE-IPVS-OUT-FILTER',
];

/**
 * The jumps from the built-in chains (iptablesJumpChain). kube-proxy
 * ensures them one by one (`iptables -C` / `-I`), outside the restore,
 * because --noflush would append duplicates; the applier does the same.
 */
export const JUMP_RULES: ReadonlyArray<{ table: 'nat' | 'filter'; chain: string; comment: string; target: string }> = [
  { table: 'nat', chain: 'OUTPUT', comment: 'kubernetes service portals', target: 'KUBE-SERVICES' },
  { table: 'nat', chain: 'PREROUTING', comment: 'kubernetes service portals', target: 'KUBE-SERVICES' },
  { table: 'nat', chain: 'POSTROUTING', comment: 'kubernetes postrouting rules', target: 'KUBE-POSTROUTING' },
  { table: 'filter', chain: 'FORWARD', comment: 'kubernetes forwarding rules', target: 'KUBE-FORWARD' },
  { table: 'filter', chain: 'INPUT', comment: 'kubernetes health check rules', target: 'KUBE-NODE-PORT' },
  { table: 'filter', chain: 'INPUT', comment: 'kube-proxy firewall rules', target: 'KUBE-PROXY-FIREWALL' },
  { table: 'filter', chain: 'FORWARD', comment: 'kube-proxy firewall rules', target: 'KUBE-PROXY-FIREWALL' },
  { table: 'filter', chain: 'INPUT', comment: 'kubernetes ipvs access filter', target: 'KUBE-IPVS-FILTER' },
  { table: 'filter', chain: 'OUTPUT', comment: 'kubernetes ipvs access filter', target: 'KUBE-IPVS-OUT-FILTER' },
];

interface SetJump {
  set: SetName;
  table: 'nat' | 'filter';
  from: string;
  to: string;
  match: string;
  protocol?: string;
}

/**
 * ipsetWithIptablesChain: simple "set matches → jump" rules. The LOCAL
 * NodePort sets come before the plain ones so ETP=Local ports RETURN
 * before they are marked for masquerade.
 */
const SET_JUMPS: readonly SetJump[] = [
  { set: SET.loopBack, table: 'nat', from: 'KUBE-POSTROUTING', to: 'MASQUERADE', match: 'dst,dst,src' },
  { set: SET.loadBalancer, table: 'nat', from: 'KUBE-SERVICES', to: 'KUBE-LOAD-BALANCER', match: 'dst,dst' },
  { set: SET.loadBalancerLocal, table: 'nat', from: 'KUBE-LOAD-BALANCER', to: 'RETURN', match: 'dst,dst' },
  { set: SET.nodePortLocalTCP, table: 'nat', from: 'KUBE-NODE-PORT', to: 'RETURN', match: 'dst', protocol: 'tcp' },
  { set: SET.nodePortTCP, table: 'nat', from: 'KUBE-NODE-PORT', to: 'KUBE-MARK-MASQ', match: 'dst', protocol: 'tcp' },
  { set: SET.nodePortLocalUDP, table: 'nat', from: 'KUBE-NODE-PORT', to: 'RETURN', match: 'dst', protocol: 'udp' },
  { set: SET.nodePortUDP, table: 'nat', from: 'KUBE-NODE-PORT', to: 'KUBE-MARK-MASQ', match: 'dst', protocol: 'udp' },
  { set: SET.nodePortLocalSCTP, table: 'nat', from: 'KUBE-NODE-PORT', to: 'RETURN', match: 'dst,dst', protocol: 'sctp' },
  { set: SET.nodePortSCTP, table: 'nat', from: 'KUBE-NODE-PORT', to: 'KUBE-MARK-MASQ', match: 'dst,dst', protocol: 'sctp' },
  { set: SET.loadBalancerFW, table: 'filter', from: 'KUBE-PROXY-FIREWALL', to: 'KUBE-SOURCE-RANGES-FIREWALL', match: 'dst,dst' },
  { set: SET.loadBalancerSourceCIDR, table: 'filter', from: 'KUBE-SOURCE-RANGES-FIREWALL', to: 'RETURN', match: 'dst,dst,src' },
  { set: SET.loadBalancerSourceIP, table: 'filter', from: 'KUBE-SOURCE-RANGES-FIREWALL', to: 'RETURN', match: 'dst,dst,src' },
];

/** kube-proxy prints the mark with Go's %#08x: eight hex digits after 0x. */
function masqueradeMark(bit: number): string {
  return `0x${(1 << bit).toString(16).padStart(8, '0')}`;
}

export function renderIptables(inputs: IptablesInputs): string {
  const nat: string[] = ['*nat', ...NAT_CHAINS.map(chainLine)];
  const filter: string[] = ['*filter', ...FILTER_CHAINS.map(chainLine)];
  nat.push(...loopbackReturn(inputs.family));
  for (const jump of SET_JUMPS) {
    if (inputs.hasEntries(jump.set)) (jump.table === 'nat' ? nat : filter).push(setJumpRule(jump, inputs.family));
  }
  nat.push(...clusterIPMasquerade(inputs), ...externalIPRules(inputs));
  nat.push('-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODE-PORT');
  nat.push('-A KUBE-LOAD-BALANCER -j KUBE-MARK-MASQ');
  filter.push('-A KUBE-SOURCE-RANGES-FIREWALL -j DROP');
  filter.push(...outFilterDrops(inputs.outFilterDrops));
  nat.push(...acceptServiceTraffic(inputs));
  filter.push(...forwardRules(inputs.config), ...healthCheckAccept(inputs.family), ...ipvsFilterRules(inputs.family));
  nat.push(...postroutingRules(inputs.config), `-A KUBE-MARK-MASQ -j MARK --or-mark ${masqueradeMark(inputs.config.masqueradeBit)}`);
  nat.push('COMMIT');
  filter.push('COMMIT');
  return [...nat, ...filter].join('\n') + '\n';
}

function chainLine(chain: string): string {
  return `:${chain} - [0:0]`;
}

function name(set: SetName, family: AddressFamily): string {
  return ipsetName(set, family);
}

function comment(set: SetName): string {
  return `-m comment --comment "${setDefinition(set).comment}"`;
}

function setJumpRule(j: SetJump, family: AddressFamily): string {
  const proto = j.protocol ? ` -p ${j.protocol}` : '';
  return `-A ${j.from}${proto} ${comment(j.set)} -m set --match-set ${name(j.set, family)} ${j.match} -j ${j.to}`;
}

/** Connections from localhost are left alone early. */
function loopbackReturn(family: AddressFamily): string[] {
  return [`-A KUBE-SERVICES -s ${family === 'inet' ? '127.0.0.0/8' : '::1/128'} -j RETURN`];
}

/**
 * Which traffic to a ClusterIP is masqueraded: all of it with
 * --masquerade-all; traffic not from the pods when this family has a
 * local-traffic detector (--detect-local-mode: `! -s <pod range>`,
 * `! -i <bridge>`, `! -i <prefix>+`); otherwise only node-originated
 * traffic whose source is a VIP (`src,dst`), because kube-ipvs0 makes the
 * kernel pick a VIP as source.
 */
function clusterIPMasquerade({ family, config, podCIDRs, hasEntries }: IptablesInputs): string[] {
  if (!hasEntries(SET.clusterIP)) return [];
  const base = `-A KUBE-SERVICES ${comment(SET.clusterIP)} -m set --match-set ${name(SET.clusterIP, family)}`;
  if (config.masqueradeAll) return [`${base} dst,dst -j KUBE-MARK-MASQ`];
  const detector = localDetector(family, config, podCIDRs);
  if (detector !== undefined) return [`${base} dst,dst ${iptablesNotLocal(detector)} -j KUBE-MARK-MASQ`];
  return [`${base} src,dst -j KUBE-MARK-MASQ`];
}

/**
 * externalIPs: masquerade (ETP=Cluster only), then accept traffic that comes
 * from off the machine, or that is addressed to a local address.
 */
function externalIPRules({ family, hasEntries }: IptablesInputs): string[] {
  const rules: string[] = [];
  for (const set of [SET.externalIP, SET.externalIPLocal] as const) {
    if (!hasEntries(set)) continue;
    const base = `-A KUBE-SERVICES ${comment(set)} -m set --match-set ${name(set, family)} dst,dst`;
    if (set === SET.externalIP) rules.push(`${base} -j KUBE-MARK-MASQ`);
    rules.push(`${base} -m physdev ! --physdev-is-in -m addrtype ! --src-type LOCAL -j ACCEPT`);
    rules.push(`${base} -m addrtype --dst-type LOCAL -j ACCEPT`);
  }
  return rules;
}

function outFilterDrops(drops: readonly OutFilterDrop[]): string[] {
  return drops.map(
    (d) => `-A KUBE-IPVS-OUT-FILTER -s ${d.address} -m ipvs --vaddr ${d.address} --vproto ${d.protocol.toLowerCase()} --vport ${d.port} -j DROP`,
  );
}

/** At the end of KUBE-SERVICES, so other rules (hostPort CNI chains, #62718) cannot steal VIP traffic. */
function acceptServiceTraffic({ family, hasEntries }: IptablesInputs): string[] {
  return [SET.clusterIP, SET.loadBalancer]
    .filter((set) => hasEntries(set))
    .map((set) => `-A KUBE-SERVICES -m set --match-set ${name(set, family)} dst,dst -j ACCEPT`);
}

/** Forward marked packets even when the FORWARD policy drops, and their replies. */
function forwardRules(config: ProxyConfig): string[] {
  const mark = masqueradeMark(config.masqueradeBit);
  return [
    `-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark ${mark}/${mark} -j ACCEPT`,
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  ];
}

function healthCheckAccept(family: AddressFamily): string[] {
  const set = SET.healthCheckNodePort;
  return [`-A KUBE-NODE-PORT ${comment(set)} -m set --match-set ${name(set, family)} dst -j ACCEPT`];
}

/**
 * #72236: without this, every host port answers on every VIP bound to
 * kube-ipvs0. Service ports RETURN; any other new connection to a VIP is
 * rejected.
 */
function ipvsFilterRules(family: AddressFamily): string[] {
  const ret = (set: SetName, match: string) => `-A KUBE-IPVS-FILTER -m set --match-set ${name(set, family)} ${match} -j RETURN`;
  return [
    ret(SET.loadBalancer, 'dst,dst'),
    ret(SET.clusterIP, 'dst,dst'),
    ret(SET.externalIP, 'dst,dst'),
    ret(SET.externalIPLocal, 'dst,dst'),
    ret(SET.healthCheckNodePort, 'dst'),
    `-A KUBE-IPVS-FILTER -m conntrack --ctstate NEW -m set --match-set ${name(SET.ipvsIPs, family)} dst -j REJECT`,
  ];
}

/** Masquerade marked packets once: clear the mark so a re-traversing packet is not SNATed twice. */
function postroutingRules(config: ProxyConfig): string[] {
  const mark = masqueradeMark(config.masqueradeBit);
  return [
    `-A KUBE-POSTROUTING -m mark ! --mark ${mark}/${mark} -j RETURN`,
    `-A KUBE-POSTROUTING -j MARK --xor-mark ${mark}`,
    `-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE${config.randomFully ? ' --random-fully' : ''}`,
  ];
}
