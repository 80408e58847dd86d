/**
 * kube-proxy's local-traffic detector (--detect-local-mode), per family:
 * what tells traffic from pods from other traffic, so that traffic to a
 * ClusterIP from outside the pods is masqueraded (it may have come from
 * off the node, by a static route to the Service range, and its replies
 * must come back through this node). As getLocalDetectors and
 * pkg/proxy/util/localdetector.go:
 *
 * - ClusterCIDR: the family's first --cluster-cidr;
 * - NodeCIDR: the family's first range of the Node's spec.podCIDRs;
 * - BridgeInterface: the bridge the pods hang off (both families);
 * - InterfaceNamePrefix: the pods' interfaces, by name prefix (both families).
 *
 * A CIDR mode without a range of the family has no detector for it (then
 * only node-originated traffic with a VIP as source is masqueraded). A
 * range that does not parse is skipped, as upstream's MapCIDRsByIPFamily
 * does, and one that does is written as its network (10.244.1.0/24 for
 * 10.244.1.7/24).
 */
import { parseCidr, type AddressFamily } from 'ipvs-netlink/address';
import type { ProxyConfig } from '../kubernetes/model.js';

export type LocalDetector =
  /** From inside this range. */
  | { kind: 'cidr'; cidr: string }
  /** In through the interface `name` (every interface whose name starts with it when `prefix`). */
  | { kind: 'interface'; name: string; prefix: boolean };

export function localDetector(family: AddressFamily, config: ProxyConfig, podCIDRs: readonly string[] = []): LocalDetector | undefined {
  switch (config.detectLocalMode) {
    case 'ClusterCIDR':
      return firstOfFamily(config.clusterCIDRs, family);
    case 'NodeCIDR':
      return firstOfFamily(podCIDRs, family);
    case 'BridgeInterface':
      return { kind: 'interface', name: config.detectLocal.bridgeInterface, prefix: false };
    case 'InterfaceNamePrefix':
      return { kind: 'interface', name: config.detectLocal.interfaceNamePrefix, prefix: true };
    default:
      // Upstream's "Defaulting to no-op detect-local" (validation refuses other modes before this).
      return undefined;
  }
}

/** IfNotLocal(), as iptables arguments: `! -s 10.244.0.0/16`, `! -i cbr0`, `! -i veth+`. */
export function iptablesNotLocal(d: LocalDetector): string {
  return d.kind === 'cidr' ? `! -s ${d.cidr}` : `! -i ${d.name}${d.prefix ? '+' : ''}`;
}

function firstOfFamily(cidrs: readonly string[], family: AddressFamily): LocalDetector | undefined {
  for (const text of cidrs) {
    const cidr = parsedOrUndefined(text);
    if (cidr?.family === family) return { kind: 'cidr', cidr: cidr.text };
  }
  return undefined;
}

function parsedOrUndefined(text: string): ReturnType<typeof parseCidr> | undefined {
  try {
    return parseCidr(text, 'CIDR');
  } catch {
    return undefined;
  }
}
