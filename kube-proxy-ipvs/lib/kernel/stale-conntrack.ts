/**
 * Deletes the stale UDP conntrack entries of the services a sync changed
 * (plan/stale-conntrack.ts says which), through the library's Conntrack
 * client in the controller's network namespace: per family, one dump of
 * the UDP entries (the kernel filters by protocol) and one batched delete
 * of the stale ones (thousands of deletes per sendmsg), every delete
 * answered on its own. kube-proxy lists the whole table on every sync; this
 * runs only after a sync that changed a UDP service.
 *
 * A kernel without conntrack over netlink (nf_conntrack_netlink not loaded
 * and not loadable) is told once in the log and left to its own
 * expiry, as kube-proxy logs and carries on when its listing fails.
 */
import { performance } from 'node:perf_hooks';
import { Conntrack, type ConntrackFamily, type SocketCounters } from 'ipvs-netlink';
import type { Logger } from 'pino';
import { staleEntries, type UdpTarget } from '../plan/stale-conntrack.js';
import { delta } from './sync-stats.js';
import { IP_FAMILY } from '../kubernetes/model.js';
import { logV } from '../logging/logger.js';

/** What one cleanup did, per the log and the metrics. */
export interface StaleConntrackReport {
  /** Entries listed (UDP, the families with changed services). */
  listed: number;
  deleted: number;
  /** Deletes the kernel refused (other than "already gone"). */
  failed: number;
  /** What it cost on the conntrack socket: messages sent and received, system calls. */
  netlink: SocketCounters;
  /**
   * Each family whose entries were listed: the time its cleanup took, from
   * the listing to the last delete answered, and the entries it deleted.
   * kube-proxy's metrics are per family (ip_family) and observed only once
   * the listing succeeded, so a family whose listing failed is not here.
   */
  families: StaleConntrackFamilyReport[];
}

export interface StaleConntrackFamilyReport {
  family: ConntrackFamily;
  seconds: number;
  deleted: number;
}


export class StaleConntrackCleaner {
  private conntrack?: Promise<Conntrack | undefined>;

  constructor(
    private readonly options: { netns?: string; timeoutMs?: number },
    private readonly logger: Logger,
  ) {}

  /** Undefined when there was nothing to look at (or no conntrack netlink). */
  async clean(targets: ReadonlyMap<ConntrackFamily, readonly UdpTarget[]>): Promise<StaleConntrackReport | undefined> {
    if (targets.size === 0) return undefined;
    const ct = await this.client();
    if (!ct) return undefined;
    const before = ct.counters();
    const counts = { listed: 0, deleted: 0, failed: 0 };
    const families: StaleConntrackFamilyReport[] = [];
    for (const [family, list] of targets) {
      const started = performance.now();
      let listed: StaleConntrackFamilyReport | undefined;
      try {
        const entries = await ct.list({ family, protocol: 'udp' });
        listed = { family, seconds: 0, deleted: 0 };
        counts.listed += entries.length;
        const keys = staleEntries(entries, list);
        if (keys.length === 0) continue;
        const r = await ct.deleteMany(keys);
        listed.deleted = r.deleted;
        counts.deleted += r.deleted;
        counts.failed += r.failures.length;
        for (const f of r.failures.slice(0, 3)) this.logger.warn({ err: f.error, entry: keys[f.index] }, 'a stale conntrack entry could not be deleted');
      } catch (err) {
        // As kube-proxy: logged, and the next sync that changes these services tries again.
        this.logger.error({ err, ipFamily: IP_FAMILY[family] }, 'Failed to clear stale conntrack entries');
      } finally {
        // Once listed, a family counts even when its delete failed, as kube-proxy observes after a failed clear too.
        if (listed) families.push({ ...listed, seconds: (performance.now() - started) / 1000 });
      }
    }
    const report: StaleConntrackReport = { ...counts, netlink: delta(before, ct.counters()), families };
    logV(this.logger, 4, { ...report, targetFamilies: [...targets.keys()] }, 'Finished reconciling conntrack entries');
    return report;
  }

  close(): void {
    void this.conntrack?.then((ct) => ct?.close());
    this.conntrack = undefined;
  }

  private client(): Promise<Conntrack | undefined> {
    this.conntrack ??= Conntrack.open(this.options).catch((err: unknown) => {
      this.logger.warn({ err }, 'conntrack over netlink is unavailable here (load nf_conntrack_netlink): stale UDP conntrack entries are left to expire');
      return undefined;
    });
    return this.conntrack;
  }
}
