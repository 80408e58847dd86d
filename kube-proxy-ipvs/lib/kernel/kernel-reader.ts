/**
 * Reads back what the proxy manages, with a fixed number of requests
 * whatever the cluster size: one IPVS dump (services, then every
 * service's destinations in one batch), one list per kube-proxy ipset that
 * exists, and one address dump (sent with the kube-ipvs0 lookup) that
 * gives both kube-ipvs0's addresses and those of every other interface
 * (NodePort addresses, "already local"). Used at start (adoption) and by
 * the periodic resync, never on an incremental sync.
 */
import type { Link } from 'ipvs-netlink';
import type { Clients } from './netlink-clients.js';
import type { KernelSnapshot } from '../plan/mirror.js';
import { canonicalAddress, naturalCompare } from 'ipvs-netlink/address';
import { DUMMY_DEVICE, type IpsetType } from '../plan/kernel-state.js';

const RT_SCOPE_LINK = 253;

export interface KernelRead {
  snapshot: KernelSnapshot;
  /** kube-ipvs0 as found; undefined when missing. */
  dummyLink?: Link;
  /** Every address on the other interfaces, canonical, sorted, unfiltered (loopback and link-local included). */
  hostAddresses: string[];
}

export async function readKernel(clients: Clients, ourSets: ReadonlySet<string>): Promise<KernelRead> {
  // No counters: the mirror needs the rules and the connection counts only. The dump is used as
  // it comes (no copy): at 100,000 real servers every copy is megabytes of garbage per resync.
  const virtualServers: KernelSnapshot['virtualServers'] = await clients.ipvs.dump({ stats: false });
  const ipsets: KernelSnapshot['ipsets'] = [];
  for (const name of await clients.ipset.listNames()) {
    if (!ourSets.has(name)) continue;
    const listing = await clients.ipset.list(name);
    ipsets.push({ name, type: listing.type as IpsetType, entries: listing.entries });
  }
  const { link, on, elsewhere } = await clients.rtnl.splitAddresses(DUMMY_DEVICE);
  // An IPv6-enabled dummy link gets an fe80:: address of its own; that one is not a service's.
  const boundAddresses = on.filter((a) => a.scope !== RT_SCOPE_LINK).map((a) => a.address);
  const hostAddresses = [...new Set(elsewhere.map((a) => canonicalAddress(a.address) ?? a.address))].sort(naturalCompare);
  return { snapshot: { virtualServers, ipsets, boundAddresses }, dummyLink: link, hostAddresses };
}
