/**
 * How a controller pass ended, told apart as kube-proxy's IPVS
 * syncProxyRules tells its outcomes apart: an IPVS, ipset or address
 * operation the kernel refused is logged and the sync carries on, and it
 * still counts as done (/healthz, the health-check node ports, the
 * metrics); a failed iptables-restore, an ipset it cannot create or the
 * dummy device it cannot make end the sync early, not done. Here a pass
 * whose rules' restore failed (iptables-restore, or the nftables backend's
 * transaction, which holds the rules) or whose ipset create was refused is
 * a failure, as is one that threw (kube-ipvs0 not made); one with other
 * operations refused is incomplete: done, its refused operations retried
 * by a resync.
 */
import type { SyncResult } from '../kernel/controller-port.js';
import type { StaleConntrackReport } from '../kernel/stale-conntrack.js';

/** A pass that went through but for what makes kube-proxy's sync end early: it does not count as done. */
export class UnfinishedSyncError extends Error {
  constructor(
    readonly result: SyncResult,
    why: string,
  ) {
    super(`${why} (${result.failed} of ${result.planned} operations refused); retried by a resync`);
    this.name = 'UnfinishedSyncError';
  }
}

/** Runs one pass; rejects with an UnfinishedSyncError when its rules' restore failed or an ipset could not be created. */
export async function checkedPass(pass: () => Promise<SyncResult>): Promise<SyncResult> {
  const result = await pass();
  if (result.rulesFailed) throw new UnfinishedSyncError(result, "the rules' restore failed");
  const uncreated = result.ipsetFailures.find((f) => f.op === 'create');
  if (uncreated) throw new UnfinishedSyncError(result, `ipset ${uncreated.set} could not be created: ${uncreated.message}`);
  return result;
}

/** Whether a pass that went through left refused operations to retry. */
export function refusedSome(result: unknown): boolean {
  return ((result as SyncResult | undefined)?.failed ?? 0) > 0;
}

/**
 * The stale conntrack cleanup a pass ran, from its result or, when its
 * rules' restore failed or an ipset was not created, from the error that
 * carries the result: the cleanup ran and its entries are gone all the same.
 */
export function staleConntrackOf(outcome: { result?: unknown; error?: unknown }): StaleConntrackReport | undefined {
  if (outcome.error instanceof UnfinishedSyncError) return outcome.error.result.staleConntrack;
  if (outcome.error !== undefined) return undefined;
  return (outcome.result as SyncResult | undefined)?.staleConntrack;
}
