/**
 * Switching rules backends leaves nothing of the other behind: at start,
 * the nftables backend removes the KUBE-* iptables chains, the jumps to
 * them and the kube-proxy ipsets an iptables run left, and the iptables
 * backend removes the nftables tables. Each looks before it touches: the
 * iptables programs run only when the kernel may hold such chains (KUBE-*
 * chains in the nat or filter tables iptables-nft keeps in nf_tables, or
 * the legacy x_tables modules loaded), and the ipset socket is opened only
 * when the ip_set module is loaded; a kernel without nf_tables has no
 * table to remove. Either backend also removes kube-proxy's nftables mode
 * tables, as upstream's IPVS mode does at every start (other-modes.ts).
 */
import { existsSync } from 'node:fs';
import { Ipset, Nftables } from 'ipvs-netlink';
import type { Logger } from 'pino';
import type { RulesBackend } from '../kubernetes/model.js';
import { attempts, destroyKubeIpsets } from './cleanup.js';
import type { IptablesRunner } from './iptables-runner.js';
import type { NftablesClient } from './netlink-clients.js';
import { deleteNftTables, hasNftTables } from './nftables-tables.js';
import { removeNftablesModeTables } from './other-modes.js';

export interface SwitchContext {
  backend: RulesBackend;
  netns?: string;
  timeoutMs?: number;
  /** The nftables handle the nftables backend has open. */
  nftables?: NftablesClient;
  /** The iptables runner, found (flavour detection runs programs) only when needed. */
  iptables: () => Promise<IptablesRunner>;
  logger: Pick<Logger, 'warn' | 'info'>;
}

/** Removes the other backend's leftovers; a failure is logged and does not stop the start. */
export async function removeOtherBackend(ctx: SwitchContext): Promise<void> {
  if (ctx.backend === 'nftables') {
    await removeIptablesBackend(ctx, ctx.nftables!);
    await removeNftablesMode(ctx, ctx.nftables!);
  } else await removeNftablesBackend(ctx);
}

/** kube-proxy's nftables mode tables: they would catch Service traffic before IPVS sees it. A failure is logged. */
async function removeNftablesMode(ctx: SwitchContext, nft: Pick<NftablesClient, 'listTables' | 'commit'>): Promise<void> {
  try {
    if (await removeNftablesModeTables(nft)) ctx.logger.info({}, "removed kube-proxy's nftables mode tables (ip and ip6 kube-proxy), as upstream's IPVS mode does at start");
  } catch (err) {
    ctx.logger.warn({ err: (err as Error).message }, "could not remove kube-proxy's nftables mode tables");
  }
}

async function removeIptablesBackend(ctx: SwitchContext, nft: NftablesClient): Promise<void> {
  const errors: unknown[] = [];
  const attempt = attempts(ctx.logger, errors, 'removing the iptables backend\'s rules');
  const kubeChains = (await nft.listChains().catch(() => [])).some((c) => (c.table === 'nat' || c.table === 'filter') && c.name.startsWith('KUBE-'));
  const legacy = existsSync('/sys/module/ip_tables') || existsSync('/sys/module/ip6_tables');
  if (kubeChains || legacy) {
    const runner = await ctx.iptables().catch(() => undefined);
    if (runner) for (const family of ['inet', 'inet6'] as const) await attempt(`${family} iptables`, () => runner.cleanup(family));
  }
  if (existsSync('/sys/module/ip_set')) {
    await attempt('ipsets', async () => {
      const ipset = await Ipset.open({ netns: ctx.netns, timeoutMs: ctx.timeoutMs });
      try {
        await destroyKubeIpsets(ipset);
      } finally {
        ipset.close();
      }
    });
  }
  if (errors.length === 0 && (kubeChains || legacy)) ctx.logger.info({}, 'switched to the nftables rules backend: no KUBE-* iptables chain or kube-proxy ipset is left');
}

async function removeNftablesBackend(ctx: SwitchContext): Promise<void> {
  let nft: Nftables | undefined;
  try {
    nft = await Nftables.open({ netns: ctx.netns, timeoutMs: ctx.timeoutMs });
    await removeNftablesMode(ctx, nft);
    if (!(await hasNftTables(nft))) return;
    await deleteNftTables(nft);
    ctx.logger.info({}, 'switched to the iptables rules backend: the nftables tables are removed');
  } catch (err) {
    // A kernel without nf_tables holds no table of ours.
    if (nft) ctx.logger.warn({ err: (err as Error).message }, 'could not remove the nftables backend\'s tables');
  } finally {
    nft?.close();
  }
}
