/**
 * --cleanup: removes everything an IPVS proxy owns, read from the kernel
 * (so a previous run's leftovers too), whichever rules backend made it:
 * its iptables jumps and KUBE-* chains, the nftables tables, the virtual
 * servers outside excludeCIDRs, kube-ipvs0 with its addresses (when it is
 * a dummy link, as upstream checks), and the
 * kube-proxy ipsets; and, as upstream's --cleanup, what kube-proxy's
 * iptables and nftables modes left (other-modes.ts). Other sets, chains,
 * tables and the excluded virtual servers stay. It keeps going past a
 * failure and throws the first one at the end.
 */
import { cidrContains, parseCidr } from 'ipvs-netlink/address';
import type { Logger } from 'pino';
import { ipsetName, SET_DEFINITIONS } from '../desired/ipsets.js';
import { DUMMY_DEVICE } from '../plan/kernel-state.js';
import type { IptablesRunner } from './iptables-runner.js';
import type { CleanupClients, IpsetClient } from './netlink-clients.js';
import { deleteNftTables } from './nftables-tables.js';
import { removeNftablesModeTables } from './other-modes.js';

type Attempt = (what: string, fn: () => Promise<unknown>) => Promise<void>;

/** Runs each step, logging and keeping its failure; `errors` gets them in order. */
export function attempts(logger: Pick<Logger, 'warn'>, errors: unknown[], prefix: string): Attempt {
  return async (what, fn) => {
    try {
      await fn();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, `${prefix}: ${what} failed`);
      errors.push(err);
    }
  };
}

/** `iptables`: absent where no iptables program works (a host of the nftables backend without it): there are no chains to remove. */
export async function removeOwned(clients: CleanupClients, iptables: IptablesRunner | undefined, excludeCIDRs: readonly string[], logger: Pick<Logger, 'warn'>): Promise<void> {
  const errors: unknown[] = [];
  const attempt = attempts(logger, errors, 'cleanup');
  // The rules go first: they reference the sets, which cannot be destroyed while in use.
  if (iptables) for (const family of ['inet', 'inet6'] as const) await attempt(`${family} iptables`, () => iptables.cleanup(family, { iptablesMode: true }));
  if (clients.nftables) {
    await attempt('nftables tables', () => deleteNftTables(clients.nftables!));
    await attempt("nftables mode's tables", () => removeNftablesModeTables(clients.nftables!));
  }
  const ipvs = clients.ipvs;
  if (ipvs) await attempt('virtual servers', async () => {
    const excluded = excludeCIDRs.map((c, i) => parseCidr(c, `excludeCIDRs[${i}]`));
    // fwmark services are never a kube-proxy's: only address-keyed ones are candidates.
    const ours = (await ipvs.dump()).flatMap((s) =>
      'address' in s && !excluded.some((c) => cidrContains(c, s.address)) ? [{ protocol: s.protocol, address: s.address, port: s.port }] : [],
    );
    const results = await ipvs.apply(ours.map((service) => ({ op: 'deleteService' as const, service })));
    const failed = results.find((r) => !r.ok);
    if (failed && !failed.ok) throw failed.error;
  });
  await attempt(DUMMY_DEVICE, () => deleteDummyDevice(clients.rtnl));
  if (clients.ipset) await attempt('ipsets', () => destroyKubeIpsets(clients.ipset!));
  if (errors.length > 0) throw errors[0];
}

/**
 * kube-ipvs0, as upstream's DeleteDummyDevice: a link of that name that is
 * no dummy is not one a proxy made, and stays (the cleanup then fails, as
 * upstream's, in its words).
 */
async function deleteDummyDevice(rtnl: Pick<CleanupClients['rtnl'], 'getLink' | 'deleteLink'>): Promise<void> {
  const link = await rtnl.getLink(DUMMY_DEVICE);
  if (!link) return;
  // netlink's Type() reads "device" for a link without a kind (a physical one).
  if (link.kind !== 'dummy') throw new Error(`expect dummy device, got device type: ${link.kind || 'device'}`);
  await rtnl.deleteLink(DUMMY_DEVICE);
}

/** Destroys the kube-proxy ipsets of both families that exist (after the rules that use them are gone). */
export async function destroyKubeIpsets(ipset: Pick<IpsetClient, 'listNames' | 'destroy'>): Promise<void> {
  const names = new Set(SET_DEFINITIONS.flatMap((d) => [ipsetName(d.name, 'inet'), ipsetName(d.name, 'inet6')]));
  for (const name of await ipset.listNames()) if (names.has(name)) await ipset.destroy(name);
}
