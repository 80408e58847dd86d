/**
 * kube-proxy's conntrack reconciler metrics (pkg/proxy/metrics, registered
 * in IPVS mode as in iptables and nftables modes): per ip_family, the time
 * one stale-UDP-entry cleanup took and the entries it deleted. kube-proxy
 * observes both at the end of each CleanStaleEntries call (pkg/proxy/conntrack),
 * a family whose listing failed left out; here they are observed from the
 * per-family report of each cleanup a sync ran (kernel/stale-conntrack.ts).
 */
import type { StaleConntrackReport } from '../kernel/stale-conntrack.js';
import { Counter, Histogram, type Registry } from './prom-client-parts.js';
import { IP_FAMILY } from '../kubernetes/model.js';

/** kube-proxy: metrics.ExponentialBuckets(0.001, 2, 15), as its sync histogram. */
const BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

export class ConntrackReconcilerMetrics {
  readonly duration: Histogram<'ip_family'>;
  readonly deleted: Counter<'ip_family'>;

  constructor(registry: Registry) {
    const registers = [registry];
    // component-base writes the stability level ("[ALPHA] ") before the HELP text, as for kube-proxy's other metrics.
    this.duration = new Histogram({
      name: 'kubeproxy_conntrack_reconciler_sync_duration_seconds',
      help: '[ALPHA] ReconcileConntrackFlowsLatency latency in seconds',
      labelNames: ['ip_family'],
      buckets: BUCKETS,
      registers,
    });
    this.deleted = new Counter({
      name: 'kubeproxy_conntrack_reconciler_deleted_entries_total',
      help: '[ALPHA] Cumulative conntrack flows deleted by conntrack reconciler',
      labelNames: ['ip_family'],
      registers,
    });
  }

  /** One cleanup's report (undefined: the sync ran none). */
  observe(report: StaleConntrackReport | undefined): void {
    for (const f of report?.families ?? []) {
      const ip_family = IP_FAMILY[f.family];
      this.duration.observe({ ip_family }, f.seconds);
      // Upstream adds the count even when it is 0, which makes the series appear at its first cleanup.
      this.deleted.inc({ ip_family }, f.deleted);
    }
  }
}
