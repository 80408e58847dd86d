/**
 * What kube-proxy's other modes leave in the kernel, removed as upstream's
 * platformCleanup does for IPVS mode: at every start, its nftables mode's
 * `kube-proxy` tables (ip and ip6), which would go on catching Service
 * traffic after a switch from that mode; at --cleanup, those and its
 * iptables mode's chains with the jumps to them.
 */
import type { NftablesClient } from './netlink-clients.js';
import { deleteTablesNamed } from './nftables-tables.js';

/** The table kube-proxy's nftables mode keeps in the ip and ip6 families (ours is another: NFT_TABLE). */
export const NFTABLES_MODE_TABLE = 'kube-proxy';

/** The iptables mode's chains by table, as upstream's cleanup removes them (KUBE-FIREWALL, the kubelet's, stays). */
const IPTABLES_MODE_CHAINS: Readonly<Record<string, readonly string[]>> = {
  nat: ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ', 'KUBE-PROXY-CANARY'],
  filter: ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL', 'KUBE-PROXY-CANARY'],
  mangle: ['KUBE-PROXY-CANARY'],
};
/** Its nat chains per Service and per endpoint, by prefix (KUBE-XLB- from releases before KUBE-SVL-). */
const SERVICE_CHAIN_PREFIXES = ['KUBE-SVC-', 'KUBE-SVL-', 'KUBE-EXT-', 'KUBE-FW-', 'KUBE-SEP-', 'KUBE-XLB-'];
const BUILT_IN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

/**
 * The iptables mode's chains found in `saved` (iptables-save's chain and
 * rule lines, by table), with the built-in chains' jumps to them: what an
 * iptables-restore must delete before it can flush and delete the chains.
 */
export function iptablesModeLeftovers(saved: ReadonlyArray<{ table: string; line: string }>): Map<string, { chains: string[]; jumps: string[] }> {
  const out = new Map<string, { chains: string[]; jumps: string[] }>();
  for (const [table, named] of Object.entries(IPTABLES_MODE_CHAINS)) {
    const lines = saved.filter((l) => l.table === table);
    const chains = lines
      .filter((l) => l.line.startsWith(':'))
      .map((l) => l.line.slice(1))
      .filter((c) => named.includes(c) || (table === 'nat' && SERVICE_CHAIN_PREFIXES.some((p) => c.startsWith(p))));
    if (chains.length === 0) continue;
    const jumps = lines
      .filter((l) => {
        const m = /^-A (\S+) .*-j (\S+)/.exec(l.line);
        return m !== null && BUILT_IN.has(m[1]) && chains.includes(m[2]);
      })
      .map((l) => l.line);
    out.set(table, { chains, jumps });
  }
  return out;
}

/** Deletes the nftables mode's tables that exist, in one transaction; true when there was one. A kernel without nf_tables has none. */
export function removeNftablesModeTables(nft: Pick<NftablesClient, 'listTables' | 'commit'>): Promise<boolean> {
  return deleteTablesNamed(nft, NFTABLES_MODE_TABLE, ['ip', 'ip6']);
}
