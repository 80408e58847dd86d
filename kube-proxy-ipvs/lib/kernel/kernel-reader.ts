/**
 * Reads back what the proxy manages, with a fixed number of requests
 * whatever the cluster size: one IPVS dump (services, then every
 * service's destinations in one batch), one list per kube-proxy ipset that
 * exists, and one address dump (sent with the kube-ipvs0 lookup) that
 * gives both kube-ipvs0's addresses and those of every other interface
 * (NodePort addresses, "already local"). Used at start (adoption) and by
 * the periodic resync, never on an incremental sync. Also what such reads
 * mean to the planner: real servers in the mirror's form, and the
 * connection counts of those it may remove.
 */
import type { AddressServiceKey, Destination, Link } from 'ipvs-netlink';
import { canonicalAddress, naturalCompare, type AddressFamily } from 'ipvs-netlink/address';
import { readNftTables } from './nftables-tables.js';
import {
  compareDestinations,
  destinationKey,
  DUMMY_DEVICE,
  findDestination,
  virtualServerKey,
  type CurrentVirtualServer,
  type DesiredState,
  type IpsetType,
} from '../plan/kernel-state.js';
import type { KernelSnapshot } from '../plan/mirror.js';
import type { Clients } from './netlink-clients.js';

const RT_SCOPE_LINK = 253;

export interface KernelRead {
  snapshot: KernelSnapshot;
  /** kube-ipvs0 as found; undefined when missing. */
  dummyLink?: Link;
  /** Every address on the other interfaces, canonical, sorted, unfiltered (loopback and link-local included). */
  hostAddresses: string[];
}

/**
 * `nftFamilies`: with the nftables backend, the families whose table is
 * read (one table check and one ruleset read each) instead of the ipsets.
 */
export async function readKernel(clients: Clients, ourSets: ReadonlySet<string>, nftFamilies?: readonly AddressFamily[]): Promise<KernelRead> {
  // No counters: the mirror needs the rules and the connection counts only. The dump is used as
  // it comes (no copy): at 100,000 real servers every copy is megabytes of garbage per resync.
  const virtualServers: KernelSnapshot['virtualServers'] = await clients.ipvs.dump({ stats: false });
  let ipsets: KernelSnapshot['ipsets'] = [];
  let nftables: KernelSnapshot['nftables'];
  if (nftFamilies && clients.nftables) ({ ipsets, nftables } = await readNftTables(clients.nftables, nftFamilies));
  else if (clients.ipset) {
    for (const name of await clients.ipset.listNames()) {
      if (!ourSets.has(name)) continue;
      const listing = await clients.ipset.list(name);
      ipsets.push({ name, type: listing.type as IpsetType, entries: listing.entries });
    }
  }
  const { link, on, elsewhere } = await clients.rtnl.splitAddresses(DUMMY_DEVICE);
  // An IPv6-enabled dummy link gets an fe80:: address of its own; that one is not a service's.
  const boundAddresses = on.filter((a) => a.scope !== RT_SCOPE_LINK).map((a) => a.address);
  const hostAddresses = [...new Set(elsewhere.map((a) => canonicalAddress(a.address) ?? a.address))].sort(naturalCompare);
  return { snapshot: { virtualServers, ipsets, boundAddresses, ...(nftables ? { nftables } : {}) }, dummyLink: link, hostAddresses };
}

/** Destinations as the kernel reported them, in the mirror's form (canonical addresses, sorted). */
export function currentOf(service: AddressServiceKey, live: readonly Destination[]): CurrentVirtualServer {
  const destinations = live
    .map((d) => ({ address: canonicalAddress(d.address) ?? d.address, port: d.port, weight: d.weight, activeConns: d.activeConns, inactiveConns: d.inactiveConns }))
    .sort(compareDestinations);
  return { service, destinations };
}

/**
 * Connection counts, keyed as the planner wants them, of the real servers
 * in a kernel snapshot that the desired state does not want (the only
 * ones the planner asks about: those it may remove).
 */
export function connectionsOf(snapshot: KernelSnapshot, desired: DesiredState): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const vs of snapshot.virtualServers) {
    if (vs.address === undefined || vs.protocol === undefined || vs.port === undefined) continue;
    const key = virtualServerKey({ protocol: vs.protocol, address: canonicalAddress(vs.address) ?? vs.address, port: vs.port });
    const wanted = desired.virtualServers.get(key)?.destinations ?? [];
    for (const d of vs.destinations) {
      const dest = { address: canonicalAddress(d.address) ?? d.address, port: d.port };
      if (findDestination(wanted, dest) >= 0) continue;
      let counts = out.get(key);
      if (!counts) out.set(key, (counts = new Map()));
      counts.set(destinationKey(dest), (d.activeConns ?? 0) + (d.inactiveConns ?? 0));
    }
  }
  return out;
}
