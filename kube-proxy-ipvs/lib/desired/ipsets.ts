/**
 * The ipsets kube-proxy's IPVS mode keeps (pkg/proxy/ipvs/ipset.go and
 * ipsetInfo in proxier.go): names, types, comments, and entries written the
 * way `ipset save` prints them, so what we want compares equal to what the
 * kernel lists.
 */
import type { K8sProtocol } from '../kubernetes/model.js';
import type { AddressFamily, Cidr } from 'ipvs-netlink/address';
import type { IpsetType, SetCreateOptions } from '../plan/kernel-state.js';

/** The IPv4 names; IPv6 sets are derived with ipsetName(). */
export const SET = {
  loopBack: 'KUBE-LOOP-BACK',
  clusterIP: 'KUBE-CLUSTER-IP',
  externalIP: 'KUBE-EXTERNAL-IP',
  externalIPLocal: 'KUBE-EXTERNAL-IP-LOCAL',
  loadBalancer: 'KUBE-LOAD-BALANCER',
  loadBalancerLocal: 'KUBE-LOAD-BALANCER-LOCAL',
  loadBalancerFW: 'KUBE-LOAD-BALANCER-FW',
  loadBalancerSourceIP: 'KUBE-LOAD-BALANCER-SOURCE-IP',
  loadBalancerSourceCIDR: 'KUBE-LOAD-BALANCER-SOURCE-CIDR',
  nodePortTCP: 'KUBE-NODE-PORT-TCP',
  nodePortLocalTCP: 'KUBE-NODE-PORT-LOCAL-TCP',
  nodePortUDP: 'KUBE-NODE-PORT-UDP',
  nodePortLocalUDP: 'KUBE-NODE-PORT-LOCAL-UDP',
  nodePortSCTP: 'KUBE-NODE-PORT-SCTP-HASH',
  nodePortLocalSCTP: 'KUBE-NODE-PORT-LOCAL-SCTP-HASH',
  healthCheckNodePort: 'KUBE-HEALTH-CHECK-NODE-PORT',
  ipvsIPs: 'KUBE-IPVS-IPS',
} as const;

export type SetName = (typeof SET)[keyof typeof SET];

export interface SetDefinition {
  name: SetName;
  type: IpsetType;
  /** Used in the iptables rules that match the set. */
  comment: string;
}

/** In kube-proxy's ipsetInfo order. */
export const SET_DEFINITIONS: readonly SetDefinition[] = [
  { name: SET.loopBack, type: 'hash:ip,port,ip', comment: 'Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose' },
  { name: SET.clusterIP, type: 'hash:ip,port', comment: 'Kubernetes service cluster ip + port for masquerade purpose' },
  { name: SET.externalIP, type: 'hash:ip,port', comment: 'Kubernetes service external ip + port for masquerade and filter purpose' },
  { name: SET.externalIPLocal, type: 'hash:ip,port', comment: 'Kubernetes service external ip + port with externalTrafficPolicy=local' },
  { name: SET.loadBalancer, type: 'hash:ip,port', comment: 'Kubernetes service lb portal' },
  { name: SET.loadBalancerFW, type: 'hash:ip,port', comment: 'Kubernetes service load balancer ip + port for load balancer with sourceRange' },
  { name: SET.loadBalancerLocal, type: 'hash:ip,port', comment: 'Kubernetes service load balancer ip + port with externalTrafficPolicy=local' },
  { name: SET.loadBalancerSourceIP, type: 'hash:ip,port,ip', comment: 'Kubernetes service load balancer ip + port + source IP for packet filter purpose' },
  { name: SET.loadBalancerSourceCIDR, type: 'hash:ip,port,net', comment: 'Kubernetes service load balancer ip + port + source cidr for packet filter purpose' },
  { name: SET.nodePortTCP, type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port for masquerade purpose' },
  { name: SET.nodePortLocalTCP, type: 'bitmap:port', comment: 'Kubernetes nodeport TCP port with externalTrafficPolicy=local' },
  { name: SET.nodePortUDP, type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port for masquerade purpose' },
  { name: SET.nodePortLocalUDP, type: 'bitmap:port', comment: 'Kubernetes nodeport UDP port with externalTrafficPolicy=local' },
  { name: SET.nodePortSCTP, type: 'hash:ip,port', comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'" },
  { name: SET.nodePortLocalSCTP, type: 'hash:ip,port', comment: "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'" },
  { name: SET.healthCheckNodePort, type: 'bitmap:port', comment: 'Kubernetes health check node port' },
  { name: SET.ipvsIPs, type: 'hash:ip', comment: 'Addresses on the ipvs interface' },
];

const DEFINITION = new Map<string, SetDefinition>(SET_DEFINITIONS.map((d) => [d.name, d]));

export function setDefinition(name: SetName): SetDefinition {
  return DEFINITION.get(name) as SetDefinition;
}

/** ipset's limit on set names (IPSET_MAXNAMELEN - 1). */
const MAX_NAME_LENGTH = 31;

/**
 * IPv6 sets sit next to the IPv4 ones in dual-stack, so kube-proxy renames
 * "KUBE-" to "KUBE-6-" and cuts the result to 31 characters.
 */
export function ipsetName(name: SetName, family: AddressFamily): string {
  if (family === 'inet') return name;
  return name.replace(/^KUBE-/, 'KUBE-6-').slice(0, MAX_NAME_LENGTH);
}

/** kube-proxy's maxelem for every hash set. */
const DEFAULT_MAX_ELEM = 65536;

/** How `ipset create` is asked for a set: kube-proxy's hashsize 1024 and maxelem 65536, port range 0-65535. */
export function createOptions(type: IpsetType, family: AddressFamily, maxElem = DEFAULT_MAX_ELEM): SetCreateOptions {
  return type === 'bitmap:port' ? { family, range: '0-65535' } : { family, hashSize: 1024, maxElem };
}

// Entry texts, as `ipset save` prints them. Built with join(), which makes one flat string (a
// template literal makes a tree of pieces, twice the memory, and these are kept in sets).

function proto(p: K8sProtocol): string {
  return p.toLowerCase();
}

/** hash:ip,port — "10.96.0.10,tcp:53" */
export function ipPortEntry(ip: string, protocol: K8sProtocol, port: number): string {
  return [ip, ',', proto(protocol), ':', port].join('');
}

/** hash:ip,port,ip — "10.244.1.5,tcp:53,10.244.1.5" */
export function ipPortIpEntry(ip: string, protocol: K8sProtocol, port: number, ip2: string): string {
  return [ip, ',', proto(protocol), ':', port, ',', ip2].join('');
}

/** hash:ip,port,net — ipset prints a host-length network without its prefix. */
export function ipPortNetEntry(ip: string, protocol: K8sProtocol, port: number, net: Cidr): string {
  const hostLength = net.family === 'inet' ? 32 : 128;
  return [ip, ',', proto(protocol), ':', port, ',', net.prefix === hostLength ? net.network : net.text].join('');
}

/** bitmap:port — the port number alone. */
export function portEntry(port: number): string {
  return String(port);
}
