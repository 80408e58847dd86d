/**
 * The node facts the mapping needs, worked out once per node/config change:
 * the families served, each family's primary address, the addresses
 * NodePorts listen on, and which addresses are already local (those are
 * never bound to kube-ipvs0).
 *
 * Two sources, as the caller has them:
 * - the kernel (the Controller): every address on every interface except
 *   kube-ipvs0, read with one rtnetlink dump. This is what kube-proxy's
 *   IPVS mode uses (GetAllLocalAddressesExcept), for NodePorts and for
 *   "is this externalIP/LB IP already local?".
 * - the node's declared addresses (the Node object, --bind-address) when there
 *   is no kernel to ask (the `plan` command, the pure planner).
 * The families served come from the host (node.families), as kube-proxy
 * decides them; each family's primary address from the declared addresses
 * (the Node object / --bind-address), loopback for a family without one.
 */
import type { NodeInfo, ProxyConfig } from '../kubernetes/model.js';
import { ZONE_LABEL } from '../kubernetes/model.js';
import { canonicalAddress, cidrContains, familyOf, parseCidr, type AddressFamily } from 'ipvs-netlink/address';

export interface NodeContext {
  hostname: string;
  zone: string;
  /** The families served: both on a dual-stack host (NewDualStackProxier), whatever the node's addresses. */
  families: AddressFamily[];
  /** Each family's node IP: its first declared address, else loopback (detectNodeIPs). */
  primaryIP: Map<AddressFamily, string>;
  nodePortIPs: Map<AddressFamily, string[]>;
  localAddresses: ReadonlySet<string>;
  /** The Node's spec.podCIDRs (the NodeCIDR local-traffic detector's ranges; local-detector.ts). */
  podCIDRs: readonly string[];
  config: ProxyConfig;
}

/**
 * @param hostAddresses the addresses on the node's interfaces other than
 *   kube-ipvs0, as read from the kernel; undefined: use node.addresses.
 */
export function nodeContext(node: NodeInfo, config: ProxyConfig, hostAddresses?: readonly string[]): NodeContext {
  const declared = canonicalList(node.addresses, 'node address');
  const families = servedFamilies(node, declared);
  const primaryIP = new Map<AddressFamily, string>();
  for (const family of families) primaryIP.set(family, familyNodeIP(declared, family));
  const local = usableLocalAddresses(hostAddresses === undefined ? declared : canonicalList(hostAddresses, 'host address'));
  const nodePortIPs = new Map<AddressFamily, string[]>();
  for (const family of families) {
    const primary = primaryIP.get(family)!;
    // "primary" names the node IP only when there is one: a loopback stand-in matches nothing (all local IPs serve).
    nodePortIPs.set(family, narrowNodePortIPs(local.filter((a) => familyOf(a) === family), family, primary === LOOPBACK[family] ? undefined : primary, config.nodePortAddresses));
  }
  return {
    hostname: node.name,
    zone: node.labels?.[ZONE_LABEL] ?? '',
    families,
    primaryIP,
    nodePortIPs,
    localAddresses: new Set(local),
    podCIDRs: node.podCIDRs ?? [],
    config,
  };
}

/** The families served: the host's (node.families), else those of the node's addresses (`declared`: them, canonical), IPv4 first. */
export function servedFamilies(node: Pick<NodeInfo, 'addresses' | 'families'>, declared: readonly string[] = node.addresses): AddressFamily[] {
  return node.families ?? (['inet', 'inet6'] as const).filter((f) => declared.some((a) => familyOf(a) === f));
}

/** A family's node IP when nothing names one. */
export const LOOPBACK: Readonly<Record<AddressFamily, string>> = { inet: '127.0.0.1', inet6: '::1' };

/** A family's node IP (detectNodeIPs): the first of the node's addresses in it, else loopback. */
export function familyNodeIP(addresses: readonly string[], family: AddressFamily): string {
  return addresses.find((a) => familyOf(a) === family) ?? LOOPBACK[family];
}

/** Loopback (both families) and IPv6 link-local. */
const UNUSABLE = ['127.0.0.0/8', '::1/128', 'fe80::/10'].map((c) => parseCidr(c, 'unusable'));

/**
 * kube-proxy's isValidForSet: loopback addresses and IPv6 link-local
 * (fe80::/10) addresses neither serve NodePorts nor count as local.
 * IPv4 link-local (169.254/16) does, as there.
 */
export function usableLocalAddresses(addresses: readonly string[]): string[] {
  return addresses.filter((a) => !UNUSABLE.some((c) => cidrContains(c, a)));
}

/**
 * The keywords --nodeport-addresses takes besides CIDRs (kube-proxy 1.37),
 * in any combination with each other and with CIDRs. "primary" stands for
 * each family's primary node IP; the others for these CIDRs.
 */
export const NODE_PORT_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  primary: [],
  localhost: ['127.0.0.0/8', '::1/128'],
  all: ['0.0.0.0/0', '::/0'],
};

/**
 * --nodeport-addresses: CIDRs of the family (the keywords expanded, and
 * "primary", the family's primary node IP) narrow the list; with none for
 * this family every usable local address serves NodePorts.
 */
export function narrowNodePortIPs(usable: readonly string[], family: AddressFamily, primary: string | undefined, filters: readonly string[]): string[] {
  const cidrs = filters
    .flatMap((f, i) => (Object.hasOwn(NODE_PORT_KEYWORDS, f) ? NODE_PORT_KEYWORDS[f]!.map((c) => parseCidr(c, f)) : [parseCidr(f, `nodePortAddresses[${i}]`)]))
    .filter((c) => c.family === family);
  // kube-proxy expands "primary" to the node IPs' /32 and /128 before filtering: without a node IP it adds nothing.
  const wantPrimary = filters.includes('primary') && primary !== undefined;
  if (cidrs.length === 0 && !wantPrimary) return [...usable];
  return usable.filter((a) => (wantPrimary && a === primary) || cidrs.some((c) => cidrContains(c, a)));
}

function canonicalList(list: readonly string[], what: string): string[] {
  return [
    ...new Set(
      list.map((a, i) => {
        const text = canonicalAddress(a.trim());
        if (text === undefined) throw new TypeError(`${what} [${i}] must be an IP address, got '${a}'`);
        return text;
      }),
    ),
  ];
}
