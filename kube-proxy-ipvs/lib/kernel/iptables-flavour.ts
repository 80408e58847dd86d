/**
 * Which iptables to drive, chosen as kube-proxy images' iptables-wrapper
 * chooses: the distribution's `iptables` (often the nf_tables variant)
 * unless it does not work in this kernel (no nf_tables, as in the UML
 * sandbox) or the legacy tables already hold kube-proxy's chains (a
 * previous kube-proxy used them; mixing both would split the rules).
 */
import type { Exec } from './exec.js';
import { DEFAULT_IPTABLES, LEGACY_IPTABLES, type IptablesTools } from './iptables-runner.js';

/** `exec` runs the programs in the namespace to be programmed. */
export async function detectIptables(exec: Exec): Promise<{ tools: IptablesTools; mode: 'default' | 'legacy' }> {
  const legacy = await exec(LEGACY_IPTABLES.inet.save, ['-t', 'nat']);
  if (legacy.code === 0 && legacy.stdout.includes(':KUBE-')) return { tools: LEGACY_IPTABLES, mode: 'legacy' };
  const def = await exec(DEFAULT_IPTABLES.inet.save, ['-t', 'nat']);
  if (def.code === 0) return { tools: DEFAULT_IPTABLES, mode: 'default' };
  if (legacy.code === 0) return { tools: LEGACY_IPTABLES, mode: 'legacy' };
  throw new Error(
    `neither ${DEFAULT_IPTABLES.inet.save} nor ${LEGACY_IPTABLES.inet.save} works here (${def.stderr.trim() || `exit ${def.code}`}); ` +
      'install iptables, and make sure the kernel has nf_tables or the x_tables (iptable_nat, iptable_filter) modules',
  );
}
