/**
 * The IP families this host can serve, decided as kube-proxy's
 * platformCheckSupported decides it: from the host, never from the Node's
 * addresses. A family is usable when its iptables works (the nat table can
 * be read, by either flavour) and, for IPv6, when the kernel has IPv6 in
 * the namespace (/proc/net/if_inet6 exists). A dual-stack host serves both
 * families whatever addresses its Node object declares.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { Exec } from './exec.js';
import { DEFAULT_IPTABLES, LEGACY_IPTABLES } from './iptables-runner.js';

export interface HostFamilies {
  families: AddressFamily[];
  /** Why a family is missing, in upstream's words, for the log. */
  missing: Array<{ family: AddressFamily; message: 'No iptables support for family' | 'No kernel support for family'; error?: string }>;
}

/** `exec` runs in the namespace to be programmed. */
export async function detectHostFamilies(exec: Exec): Promise<HostFamilies> {
  const out: HostFamilies = { families: [], missing: [] };
  for (const family of ['inet', 'inet6'] as const) {
    const error = await iptablesError(exec, family);
    if (error !== undefined) {
      out.missing.push({ family, message: 'No iptables support for family', error });
      continue;
    }
    // /proc/net is the namespace of the process reading it: ask one running there.
    if (family === 'inet6' && (await exec('test', ['-e', '/proc/net/if_inet6'])).code !== 0) {
      out.missing.push({ family, message: 'No kernel support for family' });
      continue;
    }
    out.families.push(family);
  }
  return out;
}

/** undefined when either iptables flavour reads the family's nat table; else what the default one said. */
async function iptablesError(exec: Exec, family: AddressFamily): Promise<string | undefined> {
  const def = await exec(DEFAULT_IPTABLES[family].save, ['-t', 'nat']);
  if (def.code === 0) return undefined;
  if ((await exec(LEGACY_IPTABLES[family].save, ['-t', 'nat'])).code === 0) return undefined;
  return def.stderr.trim() || `${DEFAULT_IPTABLES[family].save} exited ${def.code}`;
}
