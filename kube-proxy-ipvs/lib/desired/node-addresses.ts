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
 * The families served and each family's primary address always come from
 * the declared addresses (the Node object / --bind-address), as in kube-proxy.
 */
import type { NodeInfo, ProxyConfig } from '../kubernetes/model.js';
import { ZONE_LABEL } from '../kubernetes/model.js';
import { canonicalAddress, cidrContains, familyOf, parseCidr, type AddressFamily } from 'ipvs-netlink/address';

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

/**
 * @param hostAddresses the addresses on the node's interfaces other than
 *   kube-ipvs0, as read from the kernel; undefined: use node.addresses.
 */
export function nodeContext(node: NodeInfo, config: ProxyConfig, hostAddresses?: readonly string[]): NodeContext {
  const declared = canonicalList(node.addresses, 'node address');
  const families = (['inet', 'inet6'] as const).filter((f) => declared.some((a) => familyOf(a) === f));
  const primaryIP = new Map<AddressFamily, string>();
  for (const family of families) primaryIP.set(family, declared.find((a) => familyOf(a) === family)!);
  const local = usableLocalAddresses(hostAddresses === undefined ? declared : canonicalList(hostAddresses, 'host address'));
  const nodePortIPs = new Map<AddressFamily, string[]>();
  for (const family of families) {
    nodePortIPs.set(family, narrowNodePortIPs(local.filter((a) => familyOf(a) === family), family, primaryIP.get(family), config.nodePortAddresses));
  }
  return {
    hostname: node.name,
    zone: node.labels?.[ZONE_LABEL] ?? '',
    families,
    primaryIP,
    nodePortIPs,
    localAddresses: new Set(local),
    config,
  };
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
 * --nodeport-addresses: CIDRs of the family (and "primary", the family's
 * primary node IP) narrow the list; with none for this family every usable
 * local address serves NodePorts.
 */
export function narrowNodePortIPs(usable: readonly string[], family: AddressFamily, primary: string | undefined, filters: readonly string[]): string[] {
  const cidrs = filters.filter((f) => f !== 'primary').map((f, i) => parseCidr(f, `nodePortAddresses[${i}]`)).filter((c) => c.family === family);
  const wantPrimary = filters.includes('primary');
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
