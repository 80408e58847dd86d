/**
 * The slices of the netlink clients the controller uses, so the applier
 * and reader can be tested with fakes, and the real clients opened in one
 * namespace: one handle per family for everything the controller does
 * there (programming, reading back, the IPVS timeouts). The ipset handle
 * is opened for the iptables backend only, the nftables one for the
 * nftables backend (and, where the kernel has nf_tables, to find the other
 * backend's leftovers).
 */
import { Ipset, Ipvs, NetlinkError, Nftables, Rtnl } from 'ipvs-netlink';
import { ipvsFamilyMissing } from './ipvs-module.js';

export type IpvsClient = Pick<Ipvs, 'apply' | 'dump' | 'listDestinations' | 'setTimeouts' | 'listServices' | 'addService' | 'deleteService' | 'counters' | 'close'>;
export type IpsetClient = Pick<Ipset, 'create' | 'addMany' | 'delMany' | 'destroy' | 'list' | 'listNames' | 'counters' | 'close'>;
export type RtnlClient = Pick<Rtnl, 'ensureDummyLink' | 'getLink' | 'listAddresses' | 'splitAddresses' | 'addAddresses' | 'deleteAddresses' | 'deleteLink' | 'counters' | 'close'>;
export type NftablesClient = Pick<Nftables, 'commit' | 'ruleset' | 'listTables' | 'listChains' | 'counters' | 'close'>;

export interface Clients {
  ipvs: IpvsClient;
  /** Absent with the nftables backend: it makes no ipset call. */
  ipset?: IpsetClient;
  rtnl: RtnlClient;
  /** Present with the nftables backend. */
  nftables?: NftablesClient;
}

export interface OpenWhat {
  ipset: boolean;
  nftables: boolean;
}

/**
 * `loadIpvs`: called once when the kernel has no IPVS family, before IPVS
 * is opened again (ipvs-module.ts); without it that failure is thrown.
 */
export async function openClients(options: { netns?: string; timeoutMs?: number }, what: OpenWhat = { ipset: true, nftables: false }, loadIpvs?: () => Promise<void>): Promise<Clients> {
  const opened: Array<{ close(): void }> = [];
  const open = async <T extends { close(): void }>(make: () => Promise<T>): Promise<T> => {
    const c = await make();
    opened.push(c);
    return c;
  };
  try {
    const ipvs = await open(() =>
      Ipvs.open(options).catch(async (err: unknown) => {
        if (!loadIpvs || !ipvsFamilyMissing(err)) throw err;
        await loadIpvs();
        return Ipvs.open(options);
      }),
    );
    const ipset = what.ipset ? await open(() => Ipset.open(options)) : undefined;
    const nftables = what.nftables ? await open(() => Nftables.open(options)) : undefined;
    const rtnl = await Rtnl.open(options);
    return { ipvs, rtnl, ...(ipset ? { ipset } : {}), ...(nftables ? { nftables } : {}) };
  } catch (err) {
    for (const c of opened) c.close();
    throw err;
  }
}

/** What --cleanup works with: every handle that opens here (IPVS too may be missing). */
export type CleanupClients = Omit<Clients, 'ipvs'> & { ipvs?: IpvsClient };

/**
 * The handles --cleanup removes with, each where it opens: no IPVS (its
 * module absent, or not loadable) leaves out the virtual servers alone, as
 * upstream's ipvs.CleanupLeftovers bails out where `modprobe ip_vs` fails
 * while its iptables and nftables modes' cleanups still run. Any other
 * failure to open IPVS (no CAP_NET_ADMIN) is thrown.
 */
export async function openCleanupClients(options: { netns?: string; timeoutMs?: number }): Promise<CleanupClients> {
  const ipvs = await Ipvs.open(options).catch((err: unknown) => {
    if (err instanceof NetlinkError && (err.code === 'EPROTONOSUPPORT' || err.code === 'ENOENT')) return undefined;
    throw err;
  });
  try {
    const rtnl = await Rtnl.open(options);
    const ipset = await Ipset.open(options).catch(() => undefined);
    const nftables = await Nftables.open(options).catch(() => undefined);
    return { rtnl, ...(ipvs ? { ipvs } : {}), ...(ipset ? { ipset } : {}), ...(nftables ? { nftables } : {}) };
  } catch (err) {
    ipvs?.close();
    throw err;
  }
}

export function closeClients(c: CleanupClients): void {
  c.ipvs?.close();
  c.ipset?.close();
  c.nftables?.close();
  c.rtnl.close();
}
