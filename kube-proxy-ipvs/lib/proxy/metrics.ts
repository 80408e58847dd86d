/**
 * Prometheus metrics with kube-proxy's names and labels (pkg/proxy/metrics,
 * the set its IPVS mode registers: ip_family on the sync, timestamp,
 * programming-latency and no-local-endpoints series), so existing
 * dashboards and alerts work; plus, as extensions under kubeproxy_ipvs_ /
 * kubeproxy_netlink_ / kubeproxy_ipset_, gauges of what is programmed
 * (virtual servers, real servers, ipset entries), counters of netlink
 * operations and the sync kinds, which upstream has no equivalent for.
 */
import { BUILD_INFO_LABELS, buildInfo } from './build-info.js';
import { ConntrackReconcilerMetrics } from './conntrack-metrics.js';
import { featureGateStates } from './feature-gate-state.js';
import { Counter, Gauge, Histogram, registerDefaultMetrics, Registry } from './prom-client-parts.js';
import { registerGoProcessExtras } from './process-metrics.js';
import { registerRestClientMetrics } from './rest-client-metrics.js';
import type { SocketCounters } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import type { KnownCounts } from '../desired/known-objects.js';
import { sameRead, type ServiceChange, type ServiceReading } from '../desired/service-change.js';
import type { ControllerCounters, SyncKind } from '../kernel/controller-port.js';
import { IP_FAMILY } from '../kubernetes/model.js';


const SYNC_KINDS: readonly SyncKind[] = ['full', 'incremental', 'resync', 'drain'];

/** kube-proxy: metrics.ExponentialBuckets(0.001, 2, 15) */
const SYNC_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);
/** kube-proxy: 0 (its merge() starts from make([]float64, 1)), 0.25, 0.5, then 1..59 s by 1, 60..115 by 5, 120..300 by 30 */
const PROGRAMMING_BUCKETS = [
  0, 0.25, 0.5,
  ...Array.from({ length: 59 }, (_, i) => i + 1),
  ...Array.from({ length: 12 }, (_, i) => 60 + 5 * i),
  ...Array.from({ length: 7 }, (_, i) => 120 + 30 * i),
];

/**
 * component-base writes each metric's stability level before its HELP
 * text; all of kube-proxy's are ALPHA; kubernetes_build_info (BETA since
 * 1.36) and kubernetes_feature_enabled are BETA. Our extensions have no
 * stability level, so no prefix.
 */
const alpha = (help: string) => `[ALPHA] ${help}`;
const beta = (help: string) => `[BETA] ${help}`;

/**
 * The pending-Services gauge: each family's ServiceChangeTracker in
 * kube-proxy keeps one entry per Service whose reading in that family
 * differs from what the last sync took (its first event since then gives
 * that reading), and drops the entry when a later event brings the Service
 * back to it. The gauge counts the Services pending in any family (upstream
 * has each tracker set it in turn, so in dual-stack it shows the last
 * family's alone). Setting it to 0 (a sync took the changes) forgets them.
 */
class PendingServicesGauge extends Gauge<string> {
  /** Per family, each pending Service's reading as the last sync took it (undefined: not proxied). */
  private readonly synced = new Map<AddressFamily, Map<string, ServiceReading | undefined>>();
  /** In how many families each pending Service is. */
  private readonly pendingIn = new Map<string, number>();

  /** Takes one event in each family; returns the families with a change pending. */
  changed(key: string, change: ServiceChange, families: readonly AddressFamily[]): AddressFamily[] {
    const pending: AddressFamily[] = [];
    for (const f of families) {
      let byKey = this.synced.get(f);
      if (!byKey) this.synced.set(f, (byKey = new Map()));
      const was = byKey.has(key);
      const synced = was ? byKey.get(key) : change.before.get(f);
      const now = !sameRead(synced, change.after.get(f));
      if (now && !was) byKey.set(key, synced);
      if (!now && was) byKey.delete(key);
      if (now !== was) this.count(key, now ? 1 : -1);
      if (byKey.size > 0) pending.push(f);
    }
    super.set(this.pendingIn.size);
    return pending;
  }

  override set(labelsOrValue: number | Partial<Record<string, string | number>>, value?: number): void {
    if (typeof labelsOrValue !== 'number') return super.set(labelsOrValue, value!);
    if (labelsOrValue === 0) {
      this.synced.clear();
      this.pendingIn.clear();
    }
    super.set(labelsOrValue);
  }

  private count(key: string, by: number): void {
    const n = (this.pendingIn.get(key) ?? 0) + by;
    if (n > 0) this.pendingIn.set(key, n);
    else this.pendingIn.delete(key);
  }
}

export class ProxyMetrics {
  readonly registry = new Registry();
  readonly syncDuration: Histogram<'ip_family'>;
  readonly syncFullDuration: Histogram;
  readonly syncPartialDuration: Histogram;
  readonly lastSyncTimestamp: Gauge<'ip_family'>;
  readonly lastQueuedTimestamp: Gauge<'ip_family'>;
  readonly networkProgrammingDuration: Histogram<'ip_family'>;
  readonly endpointChangesTotal: Counter;
  readonly endpointChangesPending: Gauge;
  readonly serviceChangesTotal: Counter;
  readonly serviceChangesPending: PendingServicesGauge;
  readonly noLocalEndpoints: Gauge<'traffic_policy' | 'ip_family'>;
  readonly healthzTotal: Counter<'code'>;
  readonly livezTotal: Counter<'code'>;
  readonly syncErrorsTotal: Counter<'kind'>;
  readonly invalidObjectsTotal: Counter<'kind' | 'action'>;
  /** kube-proxy's conntrack reconciler metrics, per family (conntrack-metrics.ts). */
  readonly conntrackReconciler: ConntrackReconcilerMetrics;

  /** The families served, for the ip_family label of what is not per family here (one sync programs both). */
  private families: readonly AddressFamily[] = [];
  private buildInfoGauge?: Gauge<(typeof BUILD_INFO_LABELS)[number]>;
  private featureGauge?: Gauge<'name' | 'stage'>;

  constructor(counters: () => ControllerCounters | undefined, opts: { defaultMetrics?: boolean } = {}) {
    const r = [this.registry];
    const ipFamily = ['ip_family'] as const;
    if (opts.defaultMetrics ?? true) {
      registerDefaultMetrics(this.registry);
      registerGoProcessExtras(this.registry);
    }
    this.syncDuration = new Histogram({ name: 'kubeproxy_sync_proxy_rules_duration_seconds', help: alpha('SyncProxyRules latency in seconds'), labelNames: ipFamily, buckets: SYNC_BUCKETS, registers: r });
    // Ours: kube-proxy's IPVS mode has no full/partial split (its iptables mode's names mean something else).
    this.syncFullDuration = new Histogram({ name: 'kubeproxy_ipvs_sync_full_duration_seconds', help: 'Sync latency in seconds of full resyncs (kernel read back)', buckets: SYNC_BUCKETS, registers: r });
    this.syncPartialDuration = new Histogram({ name: 'kubeproxy_ipvs_sync_partial_duration_seconds', help: 'Sync latency in seconds of incremental syncs', buckets: SYNC_BUCKETS, registers: r });
    this.lastSyncTimestamp = new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds', help: alpha('The last time proxy rules were successfully synced'), labelNames: ipFamily, registers: r });
    this.lastQueuedTimestamp = new Gauge({ name: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds', help: alpha('The last time a sync of proxy rules was queued'), labelNames: ipFamily, registers: r });
    this.networkProgrammingDuration = new Histogram({
      name: 'kubeproxy_network_programming_duration_seconds',
      help: alpha('In Cluster Network Programming Latency in seconds'),
      labelNames: ipFamily,
      buckets: PROGRAMMING_BUCKETS,
      registers: r,
    });
    this.endpointChangesTotal = new Counter({ name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total', help: alpha('Cumulative proxy rules Endpoint changes'), registers: r });
    this.endpointChangesPending = new Gauge({ name: 'kubeproxy_sync_proxy_rules_endpoint_changes_pending', help: alpha('Pending proxy rules Endpoint changes'), registers: r });
    this.serviceChangesTotal = new Counter({ name: 'kubeproxy_sync_proxy_rules_service_changes_total', help: alpha('Cumulative proxy rules Service changes'), registers: r });
    this.serviceChangesPending = new PendingServicesGauge({ name: 'kubeproxy_sync_proxy_rules_service_changes_pending', help: alpha('Pending proxy rules Service changes'), registers: r });
    this.noLocalEndpoints = new Gauge({
      name: 'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
      help: alpha('Number of services with a Local traffic policy and no endpoints'),
      labelNames: ['traffic_policy', 'ip_family'],
      registers: r,
    });
    this.healthzTotal = new Counter({ name: 'kubeproxy_proxy_healthz_total', help: alpha('Cumulative proxy healthz HTTP status'), labelNames: ['code'], registers: r });
    this.livezTotal = new Counter({ name: 'kubeproxy_proxy_livez_total', help: alpha('Cumulative proxy livez HTTP status'), labelNames: ['code'], registers: r });
    this.syncErrorsTotal = new Counter({ name: 'kubeproxy_ipvs_sync_errors_total', help: 'Syncs, resyncs and drain passes that failed or had operations refused, by kind', labelNames: ['kind'], registers: r });
    this.invalidObjectsTotal = new Counter({
      name: 'kubeproxy_invalid_objects_total',
      help: 'Objects (or unreadable manifest documents) rejected by validation, by kind and action (skipped, kept-last-good)',
      labelNames: ['kind', 'action'],
      registers: r,
    });
    this.conntrackReconciler = new ConntrackReconcilerMetrics(this.registry);
    registerRestClientMetrics(this.registry);

    // What is programmed, read from the controller when scraped.
    const gauge = (name: string, help: string, pick: (c: ControllerCounters) => number) =>
      new Gauge({
        name,
        help,
        registers: r,
        collect() {
          const c = counters();
          if (c) this.set(pick(c));
        },
      });
    gauge('kubeproxy_ipvs_virtual_servers', 'IPVS virtual servers programmed', (c) => c.virtualServers);
    gauge('kubeproxy_ipvs_real_servers', 'IPVS real servers programmed, over all virtual servers', (c) => c.realServers);
    gauge('kubeproxy_ipset_entries', 'ipset entries programmed, over all kube-proxy sets', (c) => c.ipsetEntries);
    new Counter({
      name: 'kubeproxy_netlink_operations_total',
      help: 'Netlink operations carried out, by family (ipvs, ipset, rtnl, nftables) and result (ok, error)',
      labelNames: ['family', 'result'],
      registers: r,
      collect() {
        const c = counters();
        if (!c) return;
        // The controller keeps monotonic counts; mirror them.
        this.reset();
        for (const [kind, family] of [['ipvs', 'ipvs'], ['ipset', 'ipset'], ['address', 'rtnl'], ['nftables', 'nftables']] as const) {
          const counts = c.operations[kind];
          // nftables only with that backend's controller (a fake may leave it out).
          if (!counts) continue;
          this.inc({ family, result: 'ok' }, counts.ok);
          this.inc({ family, result: 'error' }, counts.failed);
        }
      },
    });
    // Netlink traffic: what the operations above cost in messages and system calls, per socket.
    const traffic: Array<[string, string, keyof SocketCounters]> = [
      ['kubeproxy_netlink_messages_sent_total', 'Netlink messages sent, by socket (ipvs, ipset, rtnl)', 'messagesSent'],
      ['kubeproxy_netlink_messages_received_total', 'Netlink messages received (replies, acks, dump records), by socket', 'messagesReceived'],
      ['kubeproxy_netlink_sendmsg_calls_total', 'sendmsg system calls on the netlink sockets, by socket', 'sendmsgCalls'],
      ['kubeproxy_netlink_recv_calls_total', 'Receive system calls on the netlink sockets, by socket', 'recvCalls'],
    ];
    for (const [name, help, field] of traffic) {
      new Counter({
        name,
        help,
        labelNames: ['family'],
        registers: r,
        collect() {
          const c = counters();
          if (!c?.netlink) return;
          this.reset();
          for (const [family, n] of Object.entries(c.netlink)) if (n) this.inc({ family }, n[field]);
        },
      });
    }
    const lastSync: Array<[string, string, keyof SocketCounters]> = [
      ['kubeproxy_sync_netlink_messages_sent', 'Netlink messages the last sync, resync or drain pass sent, by socket', 'messagesSent'],
      ['kubeproxy_sync_netlink_sendmsg_calls', 'sendmsg system calls of the last sync, resync or drain pass, by socket', 'sendmsgCalls'],
    ];
    for (const [name, help, field] of lastSync) {
      new Gauge({
        name,
        help,
        labelNames: ['family'],
        registers: r,
        collect() {
          const last = counters()?.lastSync;
          if (!last) return;
          for (const [family, n] of Object.entries(last.netlink)) this.set({ family }, n[field]);
        },
      });
    }
    new Counter({
      name: 'kubeproxy_ipvs_syncs_total',
      help: 'Syncs carried out, by kind: full (the first, or after a node change), incremental, resync (kernel read back), drain (graceful termination)',
      labelNames: ['kind'],
      registers: r,
      collect() {
        const c = counters();
        if (!c?.syncs) return;
        this.reset();
        for (const kind of SYNC_KINDS) this.inc({ kind }, c.syncs[kind]);
      },
    });
    new Counter({
      name: 'kubeproxy_ipvs_netlink_ipset_failures_total',
      help: 'ipset operations the kernel refused in whole or in part, by set and the kernel\'s code (IPSET_ERR_HASH_FULL: the set reached maxelem)',
      labelNames: ['set', 'code'],
      registers: r,
      collect() {
        const c = counters();
        if (!c) return;
        this.reset();
        for (const f of c.ipsetFailures ?? []) this.inc({ set: f.set, code: f.code }, f.count);
      },
    });
    new Counter({
      name: 'kubeproxy_ipvs_scheduler_annotation_problems_total',
      help: 'Services whose IPVS scheduler annotations were not (all) applied, each change counted once, by reason: invalid-annotation, module-missing (the kernel has not got the scheduler; the global one is used)',
      labelNames: ['reason'],
      registers: r,
      collect() {
        const problems = counters()?.schedulerAnnotationProblems;
        if (!problems) return;
        this.reset();
        for (const [reason, n] of Object.entries(problems)) this.inc({ reason }, n);
      },
    });
    const metrics = this;
    new Counter({
      name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
      help: alpha('Cumulative proxy iptables restore failures'),
      labelNames: ipFamily,
      registers: r,
      collect() {
        const c = counters();
        if (!c) return;
        this.reset();
        // One iptables-restore per family: a failure counts for its family only.
        for (const f of metrics.families) this.inc({ ip_family: IP_FAMILY[f] }, c.iptablesFailedByFamily?.[f] ?? 0);
      },
    });
  }

  /**
   * The families served; the per-family series start at zero for each.
   * They are set as the sync runner is about to start, when kube-proxy's
   * runner marks each family queued.
   */
  setFamilies(families: readonly AddressFamily[], at = Date.now()): void {
    this.families = families;
    this.queued(families.map((f) => IP_FAMILY[f]), at);
  }

  /** kubernetes_build_info for this Kubernetes version (build-info.ts); the cli gives it. */
  setBuildInfo(gitVersion: string): void {
    this.buildInfoGauge ??= new Gauge({
      name: 'kubernetes_build_info',
      help: beta("A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running."),
      labelNames: BUILD_INFO_LABELS,
      registers: [this.registry],
    });
    this.buildInfoGauge.reset();
    this.buildInfoGauge.set(buildInfo(gitVersion), 1);
  }

  /**
   * kubernetes_feature_enabled{name,stage}: component-base's gauge, which
   * kube-proxy fills (featuregate's AddMetrics) once its feature gates are
   * set, before it starts: one series per known gate, 1 if enabled, 0 if
   * not, stage ALPHA, BETA, DEPRECATED or "" (GA). `gates` is the merged
   * --feature-gates / featureGates, already checked.
   */
  setFeatureGates(gates: Readonly<Record<string, boolean>>): void {
    this.featureGauge ??= new Gauge({
      name: 'kubernetes_feature_enabled',
      help: beta('This metric records the data about the stage and enablement of a k8s feature.'),
      labelNames: ['name', 'stage'],
      registers: [this.registry],
    });
    this.featureGauge.reset();
    for (const f of featureGateStates(gates)) this.featureGauge.set({ name: f.name, stage: f.stage }, f.enabled ? 1 : 0);
  }

  /** After a sync: the Services with a Local traffic policy and no local endpoint, per policy, in each family served. */
  setNoLocalEndpoints(byFamily: Readonly<Record<'IPv4' | 'IPv6', { internal: number; external: number }>>): void {
    for (const family of this.families.map((f) => IP_FAMILY[f])) {
      this.noLocalEndpoints.set({ traffic_policy: 'internal', ip_family: family }, byFamily[family].internal);
      this.noLocalEndpoints.set({ traffic_policy: 'external', ip_family: family }, byFamily[family].external);
    }
  }

  /** A sync or resync ended, whatever its outcome: kube-proxy observes the duration in a defer, failed syncs too. */
  syncRan(kind: 'sync' | 'resync', durationMs: number): void {
    const seconds = durationMs / 1000;
    for (const f of this.families) this.syncDuration.observe({ ip_family: IP_FAMILY[f] }, seconds);
    (kind === 'resync' ? this.syncFullDuration : this.syncPartialDuration).observe(seconds);
  }

  /** A sync or resync counted as done (every family served programmed, operations refused or not); a failed one leaves the timestamp, as kube-proxy's returns before setting it. */
  synced(at: number): void {
    for (const f of this.families) this.lastSyncTimestamp.set({ ip_family: IP_FAMILY[f] }, at / 1000);
  }

  /** A sync of every family queued for another reason than an object change (the Node's addresses changed): kube-proxy's Sync(). */
  syncQueued(at: number): void {
    this.queued(this.families.map((f) => IP_FAMILY[f]), at);
  }

  /**
   * A Service event, as the controller weighed it. kube-proxy gives it to
   * each family's ServiceChangeTracker, and each counts it in the total, a
   * no-op too; the pending gauge counts Services whose reading in some
   * family differs from the last sync's, each once; a sync is queued for
   * each family with a change pending (its tracker's Update returns true).
   * Returns those families.
   */
  serviceChanged(key: string, change: ServiceChange, at: number): AddressFamily[] {
    this.serviceChangesTotal.inc(this.families.length);
    const pending = this.serviceChangesPending.changed(key, change, this.families);
    if (pending.length > 0) this.queued(pending.map((f) => IP_FAMILY[f]), at);
    return pending;
  }

  /**
   * A change of an EndpointSlice of a family served, which only that
   * family's EndpointsChangeTracker takes (FQDN slices and the families not
   * served are no one's, so not counted): each one is pending until a sync
   * takes it, and queues a sync of its family.
   */
  endpointsChanged(family: 'IPv4' | 'IPv6', at: number): void {
    this.endpointChangesTotal.inc();
    this.endpointChangesPending.inc();
    this.queued([family], at);
  }

  /**
   * Objects an informer handed over again unchanged (a relist's, or all of
   * them at a resync): kube-proxy's trackers count each in their totals
   * (every family's ServiceChangeTracker each Service; the
   * EndpointsChangeTracker of a slice's address type the slice) and find
   * nothing pending.
   */
  objectsReplayed(counts: KnownCounts): void {
    if (counts.services > 0) this.serviceChangesTotal.inc(counts.services * this.families.length);
    let slices = 0;
    for (const f of this.families) slices += counts.slices[IP_FAMILY[f]] ?? 0;
    if (slices > 0) this.endpointChangesTotal.inc(slices);
  }

  /** A sync or resync is starting: it takes the pending changes, as kube-proxy's checkoutChanges() at the start of syncProxyRules. */
  syncStarting(): void {
    this.endpointChangesPending.set(0);
    this.serviceChangesPending.set(0);
  }

  private queued(families: ReadonlyArray<'IPv4' | 'IPv6'>, at: number): void {
    for (const f of families) this.lastQueuedTimestamp.set({ ip_family: f }, at / 1000);
  }
}
