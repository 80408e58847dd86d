/**
 * The IP families this host can serve, decided as kube-proxy's
 * platformCheckSupported decides it: from the host, never from the Node's
 * addresses. A family is usable when its iptables works (the flavour
 * iptables-flavour.ts picks reads the family's nat table) and, for IPv6,
 * when the kernel has IPv6 (/proc/net/if_inet6 exists). A dual-stack host
 * serves both families whatever addresses its Node object declares.
 *
 * The flavour found is handed on to the controller, so the programs run
 * once: under an emulated kernel each run costs seconds.
 *
 * With the nftables rules backend it is nftables that must work, as for
 * kube-proxy's nftables mode: a family is usable when the kernel lists its
 * nf_tables tables (one netlink dump each, no program).
 */
import { existsSync } from 'node:fs';
import { Nftables } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import type { Exec } from './exec.js';
import { detectIptables, type IptablesFound } from './iptables-flavour.js';

export interface HostFamilies {
  families: AddressFamily[];
  /** Why a family is missing, in upstream's words, for the log. */
  missing: Array<{ family: AddressFamily; message: 'No iptables support for family' | 'No nftables support for family' | 'No kernel support for family'; error?: string }>;
  /** The iptables flavour in use; undefined when none works. */
  iptables?: IptablesFound;
}

/**
 * `exec` runs in the namespace to be programmed. `ipv6Kernel`: whether the
 * kernel has IPv6; /proc/net/if_inet6 exists in every namespace or in
 * none, so this process's own view answers for the target's.
 */
export async function detectHostFamilies(exec: Exec, ipv6Kernel = () => existsSync('/proc/net/if_inet6')): Promise<HostFamilies> {
  const out: HostFamilies = { families: [], missing: [] };
  try {
    out.iptables = await detectIptables(exec);
    out.families.push('inet');
  } catch (err) {
    out.missing.push({ family: 'inet', message: 'No iptables support for family', error: (err as Error).message });
  }
  const v6 = out.iptables?.tools.inet6.save ?? 'ip6tables-save';
  const r = await exec(v6, ['-t', 'nat']);
  if (r.code !== 0) out.missing.push({ family: 'inet6', message: 'No iptables support for family', error: r.stderr.trim() || `${v6} exited ${r.code}` });
  else if (!ipv6Kernel()) out.missing.push({ family: 'inet6', message: 'No kernel support for family' });
  else out.families.push('inet6');
  return out;
}

/** The families whose nf_tables work in `netns` (the nftables backend's check). */
export async function detectNftablesFamilies(netns: string | undefined, ipv6Kernel = () => existsSync('/proc/net/if_inet6')): Promise<HostFamilies> {
  const out: HostFamilies = { families: [], missing: [] };
  const nft = await Nftables.open(netns === undefined ? {} : { netns });
  try {
    for (const [family, nftFamily] of [['inet', 'ip'], ['inet6', 'ip6']] as const) {
      try {
        await nft.listTables({ family: nftFamily });
      } catch (err) {
        out.missing.push({ family, message: 'No nftables support for family', error: (err as Error).message });
        continue;
      }
      if (family === 'inet6' && !ipv6Kernel()) out.missing.push({ family, message: 'No kernel support for family' });
      else out.families.push(family);
    }
  } finally {
    nft.close();
  }
  return out;
}
