/**
 * This node as the controller needs it, from its Node object and the
 * flags: its addresses (kube-proxy's order: InternalIP, then ExternalIP;
 * --bind-address, when it names an address, is the primary), its labels
 * (topology zone), its pod CIDRs (--detect-local-mode=NodeCIDR), and
 * whether it is being deleted (healthz says no then).
 */
import type { Node, NodeInfo } from './model.js';
import { familyOf } from 'ipvs-netlink/address';
import { canonicalAddressSloppy } from './sloppy-address.js';

export function nodeInfoOf(name: string, node: Node | undefined, bindIP: string | undefined): NodeInfo {
  const status = node?.status?.addresses ?? [];
  // An entry without an address (which a manifest may leave out) is passed over, as one that is no IP.
  const byType = (type: string) =>
    status.flatMap((a) => (a.type === type && typeof a.address === 'string' ? [canonicalAddressSloppy(a.address)] : [])).filter((a): a is string => a !== undefined);
  let addresses = [...new Set([...byType('InternalIP'), ...byType('ExternalIP')])];
  if (bindIP) {
    // The bind address is this family's primary; the other family's addresses stay (dual-stack).
    addresses = [bindIP, ...addresses.filter((a) => familyOf(a) !== familyOf(bindIP))];
  }
  const podCIDRs = podCIDRsOf(node);
  return { name, addresses, labels: node?.metadata.labels, ...(podCIDRs.length ? { podCIDRs } : {}) };
}

/** The Node's spec.podCIDRs (none for a Node the IPAM has not given a range yet). */
export function podCIDRsOf(node: Node | undefined): string[] {
  // A hand-written manifest's Node is not checked past its addresses: take only a list of strings.
  const list: unknown = node?.spec?.podCIDRs;
  return Array.isArray(list) ? list.filter((c): c is string => typeof c === 'string') : [];
}

/** kube-proxy's node eligibility for /healthz: not being deleted, not marked for scale-down. */
export function nodeEligible(node: Node | undefined): boolean {
  if (!node) return false;
  const loose = node as unknown as { metadata: { deletionTimestamp?: unknown }; spec?: { taints?: Array<{ key?: string }> } };
  if (loose.metadata.deletionTimestamp) return false;
  return !(loose.spec?.taints ?? []).some((t) => t.key === 'ToBeDeletedByClusterAutoscaler');
}

/**
 * Whether a Node update leaves what the controller uses as it was. The pod
 * CIDRs are left out: they are read once, at start (a change ends the
 * process in NodeCIDR mode, the only one that uses them).
 */
export function sameNodeInfo(a: NodeInfo, b: NodeInfo): boolean {
  return JSON.stringify([a.name, a.addresses, a.labels ?? {}]) === JSON.stringify([b.name, b.addresses, b.labels ?? {}]);
}
