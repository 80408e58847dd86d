/**
 * The slices of the netlink clients the controller uses, so the applier
 * and reader can be tested with fakes, and the real clients opened in one
 * namespace: one handle per family for everything the controller does
 * there (programming, reading back, the IPVS timeouts).
 */
import { Ipset, Ipvs, Rtnl } from 'ipvs-netlink';

export type IpvsClient = Pick<Ipvs, 'apply' | 'dump' | 'listDestinations' | 'setTimeouts' | 'counters' | 'close'>;
export type IpsetClient = Pick<Ipset, 'create' | 'addMany' | 'delMany' | 'destroy' | 'list' | 'listNames' | 'counters' | 'close'>;
export type RtnlClient = Pick<Rtnl, 'ensureDummyLink' | 'getLink' | 'listAddresses' | 'splitAddresses' | 'addAddresses' | 'deleteAddresses' | 'deleteLink' | 'counters' | 'close'>;

export interface Clients {
  ipvs: IpvsClient;
  ipset: IpsetClient;
  rtnl: RtnlClient;
}

export async function openClients(options: { netns?: string; timeoutMs?: number }): Promise<Clients> {
  const opened: Array<{ close(): void }> = [];
  try {
    const ipvs = await Ipvs.open(options);
    opened.push(ipvs);
    const ipset = await Ipset.open(options);
    opened.push(ipset);
    const rtnl = await Rtnl.open(options);
    return { ipvs, ipset, rtnl };
  } catch (err) {
    for (const c of opened) c.close();
    throw err;
  }
}

export function closeClients(c: Clients): void {
  c.ipvs.close();
  c.ipset.close();
  c.rtnl.close();
}
