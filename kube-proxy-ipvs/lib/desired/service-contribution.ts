/**
 * Service + its EndpointSlices → what kube-proxy's IPVS mode programs for
 * it: virtual servers with their real servers, ipset entries, addresses
 * bound to kube-ipvs0, and the LoadBalancer VIPs the node may not reach.
 * Pure; the same function serves a full build and a one-service update.
 */
import type { EndpointInfo } from './endpoints.js';
import { endpointsForPort } from './endpoints.js';
import type { SliceFacts } from '../kubernetes/object-facts.js';
import type { OutFilterDrop } from './iptables-rules.js';
import { ipPortEntry, ipPortIpEntry, ipPortNetEntry, ipsetName, portEntry, SET, type SetName } from './ipsets.js';
import type { Service } from '../kubernetes/model.js';
import type { NodeContext } from './node-addresses.js';
import { cidrContains, type AddressFamily, type Cidr } from 'ipvs-netlink/address';
import { servicePortInfos, type ServicePortInfo } from './service-ports.js';
import { endpointKey, virtualServerKey, type DesiredDestination, type DesiredVirtualServer, type VirtualServerSpec } from '../plan/kernel-state.js';
import { categorizeEndpoints, selectEndpoints, type Categorized } from './topology.js';
import { serviceScheduling, type Scheduling } from './scheduling.js';

/** What one service adds to the desired state (kept by DesiredIndex until the service changes: compact). */
export interface ServiceContribution {
  /** The service's virtual servers, each key once. */
  virtualServers: DesiredVirtualServer[];
  /** Set entries as pairs, flat: the set name (family-specific) at even indexes, its entry after it; a pair may repeat. */
  setEntries: string[];
  boundAddresses: string[];
  outFilterDrops: OutFilterDrop[];
}

/** Being built: virtual servers by key (a later one of the same key replaces an earlier one). */
interface Building {
  virtualServers: Map<string, DesiredVirtualServer>;
  setEntries: string[];
  boundAddresses: string[];
  outFilterDrops: OutFilterDrop[];
  /** Endpoint list → its destinations, so virtual servers with the same endpoints share one list. */
  destinations: Map<readonly EndpointInfo[], readonly DesiredDestination[]>;
  /** The Service's scheduler and flags, the same for all its virtual servers. */
  scheduling: Scheduling;
}

const NO_DROPS: OutFilterDrop[] = [];

/**
 * `slices`: the service's slices in name order; `missingSchedulers`: those
 * the kernel was found to lack (the Service then gets the global one).
 */
export function serviceContribution(svc: Service, slices: readonly SliceFacts[], ctx: NodeContext, missingSchedulers?: ReadonlySet<string>): ServiceContribution {
  const { scheduling } = serviceScheduling(svc, ctx.config.scheduler, missingSchedulers);
  const out: Building = { virtualServers: new Map(), setEntries: [], boundAddresses: [], outFilterDrops: [], destinations: new Map(), scheduling };
  for (const family of ctx.families) {
    for (const info of servicePortInfos(svc, family)) addServicePort(out, info, slices, ctx);
  }
  // Kept for the life of the service: copies sized to their contents (an
  // array grown by push keeps room for 16 more, ~150 bytes per array,
  // megabytes over a cluster's services).
  return {
    virtualServers: [...out.virtualServers.values()],
    setEntries: out.setEntries.slice(),
    boundAddresses: out.boundAddresses.slice(),
    outFilterDrops: out.outFilterDrops.length > 0 ? out.outFilterDrops : NO_DROPS,
  };
}

/** One service port in one family: the body of kube-proxy's per-svcPort loop, in small steps. */
function addServicePort(out: Building, info: ServicePortInfo, slices: readonly SliceFacts[], ctx: NodeContext): void {
  const endpoints = endpointsForPort(slices, info.portName, info.protocol, info.family, ctx.hostname);
  const categorized = categorizeEndpoints(endpoints, info, ctx.hostname, ctx.zone);
  const entry = entryAdder(out, info.family);

  // Stale UDP conntrack entries are judged against every serving endpoint, as kube-proxy's cleanup does.
  const serving = info.protocol === 'UDP' ? endpoints.filter((e) => e.serving).map((e) => endpointKey(e.address, e.port)) : undefined;

  addLoopBackEntries(entry, info, endpoints);
  addClusterIP(out, entry, info, categorized, ctx, serving);
  for (const ip of info.externalIPs) addExternalIP(out, entry, info, categorized, ip, ctx, serving);
  for (const vip of info.loadBalancerVIPs) addLoadBalancerVIP(out, entry, info, categorized, vip, ctx, serving);
  if (info.nodePort !== 0) {
    // Without node addresses kube-proxy skips the NodePort with a `continue` that skips the health-check entry too.
    const nodeIPs = ctx.nodePortIPs.get(info.family) ?? [];
    if (nodeIPs.length === 0) return;
    addNodePort(out, entry, info, categorized, nodeIPs, ctx, serving);
  }
  if (info.healthCheckNodePort !== 0) entry(SET.healthCheckNodePort, portEntry(info.healthCheckNodePort));
}

type AddEntry = (set: SetName, entry: string) => void;
/** A UDP port's serving endpoints (DesiredVirtualServer.serving); undefined for other protocols. */
type Serving = readonly string[] | undefined;

function entryAdder(out: Building, family: AddressFamily): AddEntry {
  return (set, entry) => out.setEntries.push(ipsetName(set, family), entry);
}

/**
 * Hairpin: a local pod reaching itself through a VIP must be masqueraded.
 * kube-proxy lists every local endpoint here, ready or not.
 */
function addLoopBackEntries(entry: AddEntry, info: ServicePortInfo, endpoints: readonly EndpointInfo[]): void {
  for (const e of endpoints) if (e.isLocal) entry(SET.loopBack, ipPortIpEntry(e.address, info.protocol, e.port, e.address));
}

/** ETP does not apply to ClusterIP traffic; ITP=Local does. */
function addClusterIP(out: Building, entry: AddEntry, info: ServicePortInfo, c: Categorized, ctx: NodeContext, serving: Serving): void {
  entry(SET.clusterIP, ipPortEntry(info.clusterIP, info.protocol, info.port));
  addVirtualServer(out, ctx, info, info.clusterIP, info.port, selectEndpoints(c, info.internalPolicyLocal), serving);
  bind(out, entry, info.clusterIP);
}

function addExternalIP(out: Building, entry: AddEntry, info: ServicePortInfo, c: Categorized, ip: string, ctx: NodeContext, serving: Serving): void {
  // ETP=Local external IPs keep the client address: no masquerade set.
  entry(info.externalPolicyLocal ? SET.externalIPLocal : SET.externalIP, ipPortEntry(ip, info.protocol, info.port));
  addVirtualServer(out, ctx, info, ip, info.port, selectEndpoints(c, info.externalPolicyLocal), serving);
  // An address that is already on another interface must not be bound to kube-ipvs0 too.
  if (!ctx.localAddresses.has(ip)) bind(out, entry, ip);
}

function addLoadBalancerVIP(out: Building, entry: AddEntry, info: ServicePortInfo, c: Categorized, vip: string, ctx: NodeContext, serving: Serving): void {
  const vipEntry = ipPortEntry(vip, info.protocol, info.port);
  entry(SET.loadBalancer, vipEntry);
  if (info.externalPolicyLocal) entry(SET.loadBalancerLocal, vipEntry);
  if (info.loadBalancerSourceRanges.length > 0) addSourceRanges(out, entry, info, vip, ctx);
  addVirtualServer(out, ctx, info, vip, info.port, selectEndpoints(c, info.externalPolicyLocal), serving);
  if (!ctx.localAddresses.has(vip)) bind(out, entry, vip);
}

/**
 * loadBalancerSourceRanges: the VIP goes to the firewall set, each allowed
 * CIDR to the source-CIDR set. When the node's own IP is allowed, traffic
 * from the node (which IPVS sources from the VIP) is allowed through
 * SOURCE-IP; otherwise the node is blocked from the VIP in
 * KUBE-IPVS-OUT-FILTER (#119656).
 */
function addSourceRanges(out: Building, entry: AddEntry, info: ServicePortInfo, vip: string, ctx: NodeContext): void {
  entry(SET.loadBalancerFW, ipPortEntry(vip, info.protocol, info.port));
  // An nftables interval set refuses overlapping ranges (an ipset takes them): there a range inside another is left out, which matches the same sources.
  const ranges = ctx.config.rulesBackend === 'nftables' ? outermost(info.loadBalancerSourceRanges) : info.loadBalancerSourceRanges;
  for (const cidr of ranges) entry(SET.loadBalancerSourceCIDR, ipPortNetEntry(vip, info.protocol, info.port, cidr));
  const nodeIP = ctx.primaryIP.get(info.family);
  const allowFromNode = nodeIP !== undefined && info.loadBalancerSourceRanges.some((c) => cidrContains(c, nodeIP));
  if (allowFromNode) entry(SET.loadBalancerSourceIP, ipPortIpEntry(vip, info.protocol, info.port, vip));
  else out.outFilterDrops.push({ family: info.family, address: vip, protocol: info.protocol, port: info.port });
}

/** The ranges not inside another of the list (the first of equal ones). */
function outermost(ranges: readonly Cidr[]): Cidr[] {
  return ranges.filter((c, i) => !ranges.some((o, j) => j !== i && o.prefix <= c.prefix && cidrContains(o, c.network) && (o.prefix < c.prefix || j < i)));
}

/**
 * NodePorts: one virtual server per node address (never bound). TCP/UDP
 * ports go to bitmap:port sets; SCTP needs hash:ip,port, one entry per
 * node address.
 */
function addNodePort(out: Building, entry: AddEntry, info: ServicePortInfo, c: Categorized, nodeIPs: readonly string[], ctx: NodeContext, serving: Serving): void {
  const [plain, local] = nodePortSets(info);
  const entries = info.protocol === 'SCTP' ? nodeIPs.map((ip) => ipPortEntry(ip, 'SCTP', info.nodePort)) : [portEntry(info.nodePort)];
  for (const e of entries) {
    entry(plain, e);
    if (info.externalPolicyLocal) entry(local, e);
  }
  const endpoints = selectEndpoints(c, info.externalPolicyLocal);
  for (const ip of nodeIPs) addVirtualServer(out, ctx, info, ip, info.nodePort, endpoints, serving);
}

function nodePortSets(info: ServicePortInfo): [SetName, SetName] {
  if (info.protocol === 'UDP') return [SET.nodePortUDP, SET.nodePortLocalUDP];
  if (info.protocol === 'SCTP') return [SET.nodePortSCTP, SET.nodePortLocalSCTP];
  return [SET.nodePortTCP, SET.nodePortLocalTCP];
}

/** Every bound address is also listed in KUBE-IPVS-IPS, which KUBE-IPVS-FILTER guards. */
function bind(out: Building, entry: AddEntry, address: string): void {
  if (!out.boundAddresses.includes(address)) out.boundAddresses.push(address);
  entry(SET.ipvsIPs, address);
}

function addVirtualServer(
  out: Building,
  ctx: NodeContext,
  info: ServicePortInfo,
  address: string,
  port: number,
  endpoints: readonly EndpointInfo[],
  serving: Serving,
): void {
  const service = virtualServerSpec(info, address, port, out.scheduling);
  // endpointsForPort() gives them in destination order, each once; selecting keeps the order.
  let destinations = out.destinations.get(endpoints);
  if (!destinations) out.destinations.set(endpoints, (destinations = endpoints.map((e) => ({ address: e.address, port: e.port, weight: 1 as const }))));
  const key = virtualServerKey(service);
  out.virtualServers.set(key, serving ? { key, service, destinations, serving } : { key, service, destinations });
}

/**
 * ClientIP affinity becomes IPVS persistence with the affinity timeout; the
 * scheduler and its flags are the Service's (scheduling.ts: the global one
 * with kube-proxy's flags unless annotations choose another).
 */
function virtualServerSpec(info: ServicePortInfo, address: string, port: number, scheduling: Scheduling): VirtualServerSpec {
  const spec: VirtualServerSpec = { protocol: lower(info.protocol), address, port, scheduler: scheduling.scheduler };
  if (info.affinitySeconds !== undefined) spec.persistent = { timeout: info.affinitySeconds };
  if (scheduling.flags) spec.flags = scheduling.flags;
  return spec;
}

/** The literals are one string each, for every virtual server; toLowerCase() would make a copy for each. */
function lower(p: ServicePortInfo['protocol']): VirtualServerSpec['protocol'] {
  switch (p) {
    case 'TCP': return 'tcp';
    case 'UDP': return 'udp';
    case 'SCTP': return 'sctp';
    default: return (p as string).toLowerCase() as VirtualServerSpec['protocol'];
  }
}
