/**
 * Reads back what the proxy manages, with a fixed number of requests
 * whatever the cluster size: one IPVS dump (services, then every
 * service's destinations in one batch), one list per kube-proxy ipset that
 * exists, one address dump of kube-ipvs0. Used at start (adoption) and by
 * the periodic resync, never on an incremental sync.
 */
import type { Clients } from './clients.js';
import type { IpsetType } from './ipsets.js';
import type { KernelSnapshot } from './mirror.js';
import { DUMMY_DEVICE } from './state.js';

const RT_SCOPE_LINK = 253;

export async function readKernel(clients: Clients, ourSets: ReadonlySet<string>): Promise<KernelSnapshot> {
  const services = await clients.ipvs.dump();
  const virtualServers: KernelSnapshot['virtualServers'] = services.map((s) => ({
    ...s,
    destinations: s.destinations.map((d) => ({
      address: d.address,
      port: d.port,
      weight: d.weight,
      activeConns: d.activeConns,
      inactiveConns: d.inactiveConns,
    })),
  }));
  const ipsets: KernelSnapshot['ipsets'] = [];
  for (const name of await clients.ipset.listNames()) {
    if (!ourSets.has(name)) continue;
    const listing = await clients.ipset.list(name);
    ipsets.push({ name, type: listing.type as IpsetType, entries: listing.entries });
  }
  return { virtualServers, ipsets, boundAddresses: await boundAddresses(clients) };
}

/** kube-ipvs0's addresses; none when the link is missing (it is created before anything is bound). */
async function boundAddresses(clients: Clients): Promise<string[]> {
  try {
    const addresses = await clients.rtnl.listAddresses(DUMMY_DEVICE);
    // An IPv6-enabled dummy link gets an fe80:: address of its own; that one is not a service's.
    return addresses.filter((a) => a.scope !== RT_SCOPE_LINK).map((a) => a.address);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENODEV') return [];
    throw err;
  }
}
