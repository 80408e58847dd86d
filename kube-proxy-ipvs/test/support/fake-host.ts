/**
 * A HostSetup that touches nothing: the families it is given, and a record
 * of the conntrack settings and OOM score the proxy asked for.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { ConntrackSettings } from '../../lib/kernel/conntrack-sysctls.js';
import type { HostSetup } from '../../lib/proxy/host-setup.js';

export interface FakeHost extends HostSetup {
  conntrack: ConntrackSettings[];
  oomScoreAdj: Array<number | null>;
}

export function fakeHost(families: AddressFamily[] = ['inet', 'inet6']): FakeHost {
  const host: FakeHost = {
    conntrack: [],
    oomScoreAdj: [],
    families: async () => ({
      families,
      missing: (['inet', 'inet6'] as const).filter((f) => !families.includes(f)).map((family) => ({ family, message: 'No kernel support for family' as const })),
    }),
    setConntrack: async (settings) => {
      host.conntrack.push(settings);
    },
    applyOomScoreAdj: async (value) => {
      host.oomScoreAdj.push(value);
    },
  };
  return host;
}
