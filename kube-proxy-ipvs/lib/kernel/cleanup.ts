/**
 * --cleanup: removes everything an IPVS proxy owns, read from the kernel
 * (so a previous run's leftovers too): its iptables jumps and KUBE-*
 * chains, the virtual servers outside excludeCIDRs, kube-ipvs0 with its
 * addresses, and the kube-proxy ipsets. Other sets, chains and the
 * excluded virtual servers stay. It keeps going past a failure and throws
 * the first one at the end.
 */
import { cidrContains, parseCidr } from 'ipvs-netlink/address';
import type { Logger } from 'pino';
import { ipsetName, SET_DEFINITIONS } from '../desired/ipsets.js';
import { DUMMY_DEVICE } from '../plan/kernel-state.js';
import type { IptablesRunner } from './iptables-runner.js';
import type { Clients } from './netlink-clients.js';

export async function removeOwned(clients: Clients, iptables: IptablesRunner, excludeCIDRs: readonly string[], logger: Pick<Logger, 'warn'>): Promise<void> {
  const errors: unknown[] = [];
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, `cleanup: ${what} failed`);
      errors.push(err);
    }
  };
  // The rules go first: they reference the sets, which cannot be destroyed while in use.
  for (const family of ['inet', 'inet6'] as const) await attempt(`${family} iptables`, () => iptables.cleanup(family));
  await attempt('virtual servers', async () => {
    const excluded = excludeCIDRs.map((c, i) => parseCidr(c, `excludeCIDRs[${i}]`));
    // fwmark services are never a kube-proxy's: only address-keyed ones are candidates.
    const ours = (await clients.ipvs.dump()).flatMap((s) =>
      'address' in s && !excluded.some((c) => cidrContains(c, s.address)) ? [{ protocol: s.protocol, address: s.address, port: s.port }] : [],
    );
    const results = await clients.ipvs.apply(ours.map((service) => ({ op: 'deleteService' as const, service })));
    const failed = results.find((r) => !r.ok);
    if (failed && !failed.ok) throw failed.error;
  });
  await attempt(DUMMY_DEVICE, () => clients.rtnl.deleteLink(DUMMY_DEVICE));
  await attempt('ipsets', async () => {
    const names = new Set(SET_DEFINITIONS.flatMap((d) => [ipsetName(d.name, 'inet'), ipsetName(d.name, 'inet6')]));
    for (const name of await clients.ipset.listNames()) if (names.has(name)) await clients.ipset.destroy(name);
  });
  if (errors.length > 0) throw errors[0];
}
