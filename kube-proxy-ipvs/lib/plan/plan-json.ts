/**
 * A desired state as plain, sorted JSON (what `kube-proxy-ipvs plan`
 * prints): protocols as Kubernetes writes them, ipset entries in
 * `ipset save` form, every list in natural order.
 */
import { naturalCompare } from 'ipvs-netlink/address';
import type { DesiredState } from './kernel-state.js';
import { plannedNftables, type FormatRule, type PlannedNftTable } from './nftables-plan-json.js';

export interface PlannedRealServer {
  address: string;
  port: number;
  weight: number;
}

export interface PlannedVirtualServer {
  protocol: 'TCP' | 'UDP' | 'SCTP';
  address: string;
  port: number;
  scheduler: string;
  persistent: boolean;
  timeout: number;
  realServers: PlannedRealServer[];
}

export interface PlanOutput {
  virtualServers: PlannedVirtualServer[];
  ipsets: Record<string, { type: string; entries: string[] }>;
  boundAddresses: string[];
  /** iptables-restore input (IPv4), when IPv4 is served. */
  iptables?: string;
  /** ip6tables-restore input, when IPv6 is served. */
  ip6tables?: string;
  /** With the nftables backend (which has no ipsets and no iptables rules): its tables, by "family name". */
  nftables?: Record<string, PlannedNftTable>;
}

/** `formatRule` prints the nftables backend's rules (the library's, given by the caller). */
export function planOutput(desired: DesiredState, formatRule?: FormatRule): PlanOutput {
  const virtualServers = [...desired.virtualServers.values()]
    .map(({ service, destinations }) => ({
      protocol: service.protocol.toUpperCase() as PlannedVirtualServer['protocol'],
      address: service.address,
      port: service.port,
      scheduler: service.scheduler,
      persistent: service.persistent !== undefined,
      timeout: service.persistent?.timeout ?? 0,
      realServers: [...destinations.values()]
        .map((d) => ({ address: d.address, port: d.port, weight: 1 }))
        .sort((a, b) => naturalCompare(a.address, b.address) || a.port - b.port),
    }))
    .sort((a, b) => naturalCompare(a.address, b.address) || naturalCompare(a.protocol, b.protocol) || a.port - b.port);
  const ipsets: PlanOutput['ipsets'] = {};
  for (const name of [...desired.ipsets.keys()].sort(naturalCompare)) {
    const set = desired.ipsets.get(name)!;
    ipsets[name] = { type: set.type, entries: [...set.entries].sort(naturalCompare) };
  }
  const nft = desired.nftables !== undefined && formatRule !== undefined;
  const out: PlanOutput = { virtualServers, ipsets: nft ? {} : ipsets, boundAddresses: [...desired.boundAddresses].sort(naturalCompare) };
  if (nft) out.nftables = plannedNftables(desired, formatRule);
  const v4 = desired.iptables.get('inet');
  const v6 = desired.iptables.get('inet6');
  if (v4 !== undefined) out.iptables = v4;
  if (v6 !== undefined) out.ip6tables = v6;
  return out;
}
