/**
 * The node facts the mapping needs, worked out once per node/config change:
 * the families served, each family's primary address, the addresses
 * NodePorts listen on, and which addresses are already local (those are
 * never bound to kube-ipvs0).
 */
import type { NodeInfo, ProxyConfig } from './model.js';
import { ZONE_LABEL } from './model.js';
import { canonicalAddress, cidrContains, familyOf, isLoopback, parseCidr, type AddressFamily } from './net.js';

export interface NodeContext {
  hostname: string;
  zone: string;
  /** Families with a node address: a dual-stack node serves both, like NewDualStackProxier. */
  families: AddressFamily[];
  primaryIP: Map<AddressFamily, string>;
  nodePortIPs: Map<AddressFamily, string[]>;
  localAddresses: ReadonlySet<string>;
  config: ProxyConfig;
}

export function nodeContext(node: NodeInfo, config: ProxyConfig): NodeContext {
  const addresses = unique(node.addresses.map((a, i) => {
    const text = canonicalAddress(a.trim());
    if (text === undefined) throw new TypeError(`node address [${i}] must be an IP address, got '${a}'`);
    return text;
  }));
  const families = (['inet', 'inet6'] as const).filter((f) => addresses.some((a) => familyOf(a) === f));
  const primaryIP = new Map<AddressFamily, string>();
  const nodePortIPs = new Map<AddressFamily, string[]>();
  for (const family of families) {
    const own = addresses.filter((a) => familyOf(a) === family);
    primaryIP.set(family, own[0]);
    nodePortIPs.set(family, narrowNodePortIPs(own, family, config.nodePortAddresses));
  }
  return {
    hostname: node.name,
    zone: node.labels?.[ZONE_LABEL] ?? '',
    families,
    primaryIP,
    nodePortIPs,
    localAddresses: new Set(addresses),
    config,
  };
}

/**
 * --nodeport-addresses: CIDRs of the family (and "primary") narrow the
 * list; with none for this family every node address serves NodePorts.
 * Loopback and IPv6 link-local addresses never do (GetAllLocalAddressesExcept).
 */
function narrowNodePortIPs(own: string[], family: AddressFamily, filters: string[]): string[] {
  const usable = own.filter((a) => !isLoopback(a) && !(family === 'inet6' && a.toLowerCase().startsWith('fe80:')));
  const cidrs = filters.filter((f) => f !== 'primary').map((f, i) => parseCidr(f, `nodePortAddresses[${i}]`)).filter((c) => c.family === family);
  const wantPrimary = filters.includes('primary');
  if (cidrs.length === 0 && !wantPrimary) return usable;
  return usable.filter((a) => (wantPrimary && a === own[0]) || cidrs.some((c) => cidrContains(c, a)));
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
