/**
 * The IPVS proxy's kernel side, the ControllerPort's implementation: owns
 * the known objects (objects → desired state), the mirror (what we
 * programmed), and the one netlink handle per family of one network
 * namespace, through which it also sets that namespace's kernel settings.
 *
 * - start() asks the kernel whether it takes the scheduler, as upstream's
 *   CanUseIPVSProxier (ipvs-proxier-check.ts), writes kube-proxy's sysctls
 *   and the IPVS timeouts, and adopts the kernel as it is (nothing is
 *   flushed, so a restart interrupts no traffic); the first sync() then
 *   plans in full against what was read, which also serves again real
 *   servers a previous run left at weight 0. Feed every object before that
 *   first sync: a full plan with nothing known would remove every service.
 * - upsert*() and delete*() record object changes; sync() plans only the
 *   keys they touched (plus those of failed operations) against the
 *   mirror. The only kernel reads are for graceful termination: a TCP real
 *   server that leaves is quiesced (weight 0), its virtual server's
 *   destinations are read at the end of the same batch, and it is deleted
 *   at once if idle.
 * - resync() reads the kernel back (a fixed handful of requests), takes
 *   the node's interface addresses from it (NodePorts, "already local"),
 *   repairs drift and writes the sysctls again; drain() ends graceful
 *   termination. The caller runs both periodically.
 * - cleanup() removes what an IPVS proxy owns, and nothing else.
 */
import { performance } from 'node:perf_hooks';
import type { AddressServiceKey } from 'ipvs-netlink';
import { pino, type Logger } from 'pino';
import { KnownObjects, type KnownCounts } from '../desired/known-objects.js';
import type { ServiceChange } from '../desired/service-change.js';
import type { LocalEndpoints } from '../desired/local-endpoints.js';
import { usableLocalAddresses } from '../desired/node-addresses.js';
import { namespaceOf, type EndpointSlice, type NodeInfo, type ProxyConfig, type Service } from '../kubernetes/model.js';
import { type CurrentState, type CurrentVirtualServer, type DesiredState, type Operation } from '../plan/kernel-state.js';
import { Mirror } from '../plan/mirror.js';
import { plan, planDrainedDeletions } from '../plan/planner.js';
import { emptyScope, mergeScope, scopeOf, type Scope } from '../plan/scope.js';
import { allUdpTargets, changedUdpTargets } from '../plan/stale-conntrack.js';
import { emptyOperationCounts, rulesRefused, type ApplyReport } from './applier.js';
import { removeOtherBackend } from './backend-switch.js';
import { removeOwned } from './cleanup.js';
import type { ControllerCounters, ControllerOptions, ControllerPort, NetlinkTraffic, SyncKind, SyncResult } from './controller-port.js';
import { checkIpvsProxier, logProxierFamilies, logProxierMode } from './ipvs-proxier-check.js';
import { connectionsOf, currentOf } from './kernel-reader.js';
import { NamespaceSession } from './namespace-session.js';
import { closeClients, openCleanupClients } from './netlink-clients.js';
import { familiesOf } from './nftables-tables.js';
import { SchedulerModules } from './scheduler-modules.js';
import { StaleConntrackCleaner, type StaleConntrackReport } from './stale-conntrack.js';
import { SyncStats, trafficBetween, trafficOf } from './sync-stats.js';
import { logV } from '../logging/logger.js';

export class Controller implements ControllerPort {
  private readonly objects: KnownObjects;
  private readonly config: ProxyConfig;
  private node: NodeInfo;
  private mirror = new Mirror();
  private readonly session: NamespaceSession;
  private readonly logger: Logger;
  /** Keys changed since the last sync, and keys of operations that failed. */
  private pending: Scope = emptyScope();
  /** A node change, or the first sync after start: compare everything. */
  private fullSyncPending = true;
  /** Syncs, resyncs, drains and cleanup never interleave: each starts once the one before has settled. */
  private queueTail: Promise<unknown> = Promise.resolve();
  private readonly stats = new SyncStats();
  /** The addresses on the node's interfaces except kube-ipvs0, as last read; undefined before start(). */
  private hostAddresses?: string[];
  /** The last failure to set the IPVS sysctls again at a resync, logged once until it changes or passes. */
  private sysctlFailure?: string;
  private readonly staleConntrack: StaleConntrackCleaner;
  private readonly schedulers: SchedulerModules;

  constructor(private readonly options: ControllerOptions) {
    this.config = options.config;
    this.node = options.node;
    // Until start() reads the interfaces, the declared node addresses stand in.
    this.objects = new KnownObjects(options.node, options.config);
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.session = new NamespaceSession(options, options.config, this.logger);
    this.staleConntrack = new StaleConntrackCleaner({ netns: options.netns, timeoutMs: options.timeoutMs }, this.logger);
    this.schedulers = new SchedulerModules(options.config.scheduler, this.logger);
  }

  start(): Promise<void> {
    return this.serially(async () => {
      // A kernel before 5.16 does not load ip_vs on demand: modprobe it, as upstream's IPVS handle does.
      const { clients } = await this.session.open(true);
      // Upstream's CanUseIPVSProxier, before its NewProxier writes anything: the kernel takes the scheduler or the start fails.
      await checkIpvsProxier(clients.ipvs, this.config.scheduler, this.logger);
      logProxierMode(this.logger);
      // IPVS's sysctls exist once ip_vs is loaded in the namespace, which opening the client made sure of.
      // Upstream writes them and the timeouts per family; they are the host's (or the namespace's), so once.
      await this.session.writeSysctls(true);
      await this.session.setIpvsTimeouts(clients);
      logProxierFamilies(this.logger, this.node, this.options.proxierLines);
      // Upstream's platformCleanup runs before its check; here a proxy that cannot start leaves the rules that serve until then.
      await removeOtherBackend({
        backend: this.config.rulesBackend,
        ...(this.options.netns !== undefined ? { netns: this.options.netns } : {}),
        ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
        ...(clients.nftables ? { nftables: clients.nftables } : {}),
        iptables: () => this.session.iptables(),
        logger: this.logger,
      });
      const read = await this.session.read(clients, this.objects.desired);
      this.mirror = Mirror.fromKernel(read.snapshot);
      this.adoptHostAddresses(read.hostAddresses);
      this.fullSyncPending = true;
      this.logger.info({ virtualServers: this.mirror.virtualServers.size, hostAddresses: this.hostAddresses }, 'adopted the kernel state');
    });
  }

  // --- object changes: each marks the keys it touched ---

  upsertService(svc: Service): ServiceChange {
    const change = this.objects.serviceChange(svc);
    this.mark(this.objects.upsertService(svc));
    return change;
  }

  deleteService(svc: Service): ServiceChange {
    const change = this.objects.serviceChange(svc, true);
    this.mark(this.objects.deleteService(namespaceOf(svc.metadata), svc.metadata.name));
    return change;
  }

  upsertEndpointSlice(slice: EndpointSlice): void {
    this.mark(this.objects.upsertEndpointSlice(slice));
  }

  deleteEndpointSlice(slice: EndpointSlice): void {
    this.mark(this.objects.deleteEndpointSlice(slice));
  }

  /**
   * Keeps an object change's keys for the next sync. While a full sync is
   * pending (the first, or one after a node change, new interface
   * addresses or a cleanup) it plans every key anyway, so a cold start's
   * tens of thousands of keys are not copied.
   */
  private mark(scope: Scope): void {
    if (!this.fullSyncPending) mergeScope(this.pending, scope);
  }

  setNode(node: NodeInfo): void {
    this.node = node;
    this.objects.reset(node, this.config, this.hostAddresses);
    this.fullSyncPending = true;
  }

  get desired(): DesiredState {
    return this.objects.desired;
  }

  /** What we believe the kernel holds. */
  get current(): CurrentState {
    return this.mirror;
  }

  /**
   * Programs the changes since the last sync (all of it after start or a
   * node change). A TCP real server that leaves goes to weight 0
   * (GracefulDeleteRS); its virtual server's destinations, read in the same
   * batch, tell whether it is idle, and then it is deleted at once.
   */
  sync(): Promise<SyncResult> {
    return this.serially(async () => {
      const started = performance.now();
      const traffic = trafficOf(this.session.opened?.clients);
      const full = this.fullSyncPending;
      const scope = this.takePending();
      try {
        const planned = plan(this.objects.desired, this.mirror, { scope: full ? undefined : scope, excludeCIDRs: this.config.excludeCIDRs });
        const { ops, report } = await this.applyWithSchedulerFallback(planned);
        const { ops: deletions, report: deleted } = await this.deleteIdleQuiesced(report);
        const stale = await this.staleConntrack.clean(full ? allUdpTargets(this.objects.desired, joinReports(report, deleted).applied) : changedUdpTargets(this.objects.desired, report.applied, scope.virtualServers));
        return this.finish(full ? 'full' : 'incremental', [...ops, ...deletions], joinReports(report, deleted), started, traffic, stale);
      } catch (err) {
        // Nothing may be lost: the next sync looks at these keys again.
        mergeScope(this.pending, scope);
        this.fullSyncPending ||= full;
        throw err;
      }
    });
  }

  /**
   * Reads the kernel back — one IPVS dump, one list per kube-proxy set,
   * one address dump — and repairs whatever differs from the desired state
   * (drift, lost operations, changed interface addresses). The iptables
   * chains are rewritten only when iptables-save shows them changed.
   *
   * The sysctls are written again too: they live in the ip_vs module's
   * per-namespace state, so an operator's `modprobe -r ip_vs; modprobe
   * ip_vs` resets them to the kernel's defaults (net.ipv4.vs.conntrack=0
   * breaks masqueraded IPVS traffic), and the resync that reprograms the
   * flushed table must restore them as well.
   */
  resync(): Promise<SyncResult> {
    return this.serially(async () => {
      const started = performance.now();
      const { clients } = await this.session.open();
      const traffic = trafficOf(clients);
      const read = await this.session.read(clients, this.objects.desired);
      const previous = this.mirror;
      this.mirror = Mirror.fromKernel(read.snapshot, this.objects.desired);
      if (previous.iptables.size > 0) {
        const iptables = await this.session.iptables();
        for (const [family, payload] of previous.iptables) {
          if (await iptables.holds(family, payload).catch(() => false)) this.mirror.iptables.set(family, payload);
        }
      }
      this.adoptHostAddresses(read.hostAddresses);
      this.takePending();
      // The dump just read has the connections of real servers already at weight 0; those still
      // serving are quiesced first and read again, as in sync().
      const planned = plan(this.objects.desired, this.mirror, { excludeCIDRs: this.config.excludeCIDRs, connections: connectionsOf(read.snapshot, this.objects.desired) });
      const { ops, report } = await this.applyWithSchedulerFallback(planned);
      const { ops: deletions, report: deleted } = await this.deleteIdleQuiesced(report);
      const stale = await this.staleConntrack.clean(allUdpTargets(this.objects.desired, report.applied));
      const result = this.finish('resync', [...ops, ...deletions], joinReports(report, deleted), started, traffic, stale);
      // Our repair of drift (an ip_vs reload resets them); upstream sets them at start only. One that
      // cannot be written again (a read-only /proc/sys) is reported, and the resync's work stands.
      await this.session.writeSysctls().then(
        () => (this.sysctlFailure = undefined),
        (err: unknown) => {
          const message = (err as Error).message;
          if (message !== this.sysctlFailure) this.logger.error({ err: message }, 'Could not set the IPVS sysctls again; set them on the node');
          this.sysctlFailure = message;
        },
      );
      return result;
    });
  }

  /**
   * Graceful termination's second half: deletes the weight-0 real servers
   * nobody wants once they have no connections left. Only the virtual
   * servers with such a real server are read (one request each).
   */
  drain(): Promise<SyncResult> {
    return this.serially(async () => {
      const started = performance.now();
      const traffic = trafficOf(this.session.opened?.clients);
      const services = new Map<string, AddressServiceKey>();
      for (const [key, vs] of this.mirror.virtualServers) {
        if (vs.destinations.some((d) => d.weight === 0)) services.set(key, vs.service);
      }
      const ops = planDrainedDeletions(this.objects.desired, await this.readDestinations(services));
      return this.finish('drain', ops, await this.apply(ops), started, traffic);
    });
  }

  cleanup(): Promise<void> {
    return this.serially(async () => {
      // Whichever backend programmed the rules, both are removed: every handle that opens here is opened.
      const clients = await openCleanupClients(this.session.netlinkOptions());
      if (!clients.ipvs) this.logger.info('cleanup: this kernel has no IPVS; the rest is removed, as kube-proxy skips IPVS then');
      try {
        const iptables = await this.session.iptables().catch((err: Error) => void this.logger.warn({ err: err.message }, 'cleanup: no iptables to remove KUBE-* chains with'));
        await removeOwned(clients, iptables ?? undefined, this.config.excludeCIDRs, this.logger);
      } finally {
        closeClients(clients);
        this.mirror = new Mirror();
        this.fullSyncPending = true;
      }
    });
  }

  objectCounts(): KnownCounts {
    return this.objects.counts();
  }

  counters(): ControllerCounters {
    const clients = this.session.opened?.clients;
    return {
      virtualServers: this.mirror.virtualServers.size,
      realServers: this.mirror.realServers,
      // With the nftables backend these are the table's set elements.
      ipsetEntries: this.mirror.ipsetEntries,
      boundAddresses: this.mirror.boundAddresses.size,
      ipsetFailures: this.stats.ipsetFailures(),
      operations: structuredClone(this.session.opened?.applier.counts ?? emptyOperationCounts()),
      ...(this.session.opened ? { iptablesFailedByFamily: { ...this.session.opened.applier.iptablesFailedByFamily } } : {}),
      netlink: clients
        ? { ipvs: clients.ipvs.counters(), rtnl: clients.rtnl.counters(), ...(clients.ipset ? { ipset: clients.ipset.counters() } : {}), ...(clients.nftables ? { nftables: clients.nftables.counters() } : {}) }
        : {},
      syncs: this.stats.syncs(),
      lastSync: this.stats.lastSync,
      schedulerAnnotationProblems: { ...this.schedulers.counts },
    };
  }

  localEndpoints(): LocalEndpoints {
    return this.objects.localEndpoints();
  }

  async close(): Promise<void> {
    this.staleConntrack.close();
    this.session.close();
  }

  // --- internals ---

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queueTail.then(task, task);
    this.queueTail = result.then(noop, noop);
    return result;
  }

  /** New interface addresses change NodePort virtual servers and what is bound: the desired state is rebuilt (rare). */
  private adoptHostAddresses(read: string[]): void {
    // Only what can matter is compared: a link-local address coming and going changes nothing.
    const addresses = usableLocalAddresses(read);
    if (this.hostAddresses && sameList(this.hostAddresses, addresses)) return;
    if (this.hostAddresses) this.logger.info({ before: this.hostAddresses, after: addresses }, 'the node\'s interface addresses changed');
    this.hostAddresses = addresses;
    this.objects.reset(this.node, this.config, addresses);
    this.fullSyncPending = true;
  }

  /**
   * Graceful termination's fast path: the real servers a sync just
   * quiesced were read back in the same batch (Applier); the idle ones are
   * deleted now. Read after the weight-0 update, a count of 0 stays 0:
   * nothing new is scheduled to them.
   */
  private async deleteIdleQuiesced(report: ApplyReport): Promise<{ ops: Operation[]; report: ApplyReport }> {
    const read: CurrentState = { virtualServers: new Map(), ipsets: new Map(), boundAddresses: new Set(), iptables: new Map() };
    for (const [key, { service, destinations }] of report.quiesced ?? []) (read.virtualServers as Map<string, CurrentVirtualServer>).set(key, currentOf(service, destinations));
    const ops = planDrainedDeletions(this.objects.desired, read);
    return { ops, report: ops.length > 0 ? await this.apply(ops) : { applied: [], failed: [] } };
  }

  /** The live destinations (weights, connection counts) of these virtual servers: one destination dump each. */
  private async readDestinations(services: Map<string, AddressServiceKey>): Promise<CurrentState> {
    const { clients } = await this.session.open();
    const out: CurrentState = { virtualServers: new Map(), ipsets: new Map(), boundAddresses: new Set(), iptables: new Map() };
    for (const [key, service] of services) {
      const live = await clients.ipvs.listDestinations(service).catch(() => undefined);
      if (!live) continue; // gone meanwhile: the next resync notices
      (out.virtualServers as Map<string, CurrentVirtualServer>).set(key, currentOf(service, live));
    }
    return out;
  }

  private async apply(ops: Operation[]): Promise<ApplyReport> {
    if (ops.length === 0) return { applied: [], failed: [] };
    const { applier } = await this.session.open();
    const report = await applier.apply(ops);
    this.mirror.record(report.applied);
    // A refused transaction may have met a table that is not as the mirror says: the next sync makes it whole.
    const refused = report.failed.flatMap((f) => (f.op.kind === 'nftables' ? [f.op] : []));
    for (const family of familiesOf(refused)) this.mirror.forgetNftables(family);
    // Failed operations are looked at again by the next sync.
    mergeScope(this.pending, scopeOf(report.failed.map((f) => f.op)));
    return report;
  }

  /**
   * Applies, and when the kernel refused an annotated scheduler for want of
   * its module, plans those Services again with the global scheduler and
   * applies that too, in the same sync. What is to be said about
   * Services' scheduler annotations is logged here, once per sync.
   */
  private async applyWithSchedulerFallback(ops: Operation[]): Promise<{ ops: Operation[]; report: ApplyReport }> {
    const report = await this.apply(ops);
    const missing = this.schedulers.learn(report);
    for (const scheduler of missing) mergeScope(this.pending, this.objects.schedulerMissing(scheduler));
    let result = { ops, report };
    if (missing.length > 0) {
      const again = plan(this.objects.desired, this.mirror, { scope: this.takePending(), excludeCIDRs: this.config.excludeCIDRs });
      result = { ops: [...ops, ...again], report: joinReports(report, await this.apply(again)) };
    }
    this.schedulers.report(this.objects.takeSchedulingReports());
    return result;
  }

  /** Takes the pending scope (and the full-sync flag) for the sync about to plan. */
  private takePending(): Scope {
    const scope = this.pending;
    this.pending = emptyScope();
    this.fullSyncPending = false;
    return scope;
  }

  private finish(kind: SyncKind, ops: Operation[], report: ApplyReport, started: number, before: NetlinkTraffic, staleConntrack?: StaleConntrackReport): SyncResult {
    const durationSeconds = (performance.now() - started) / 1000;
    const netlink = trafficBetween(before, trafficOf(this.session.opened?.clients));
    const ipsetFailures = this.stats.record(kind, durationSeconds, netlink, report);
    const result: SyncResult = { kind, planned: ops.length, applied: report.applied.length, failed: report.failed.length, durationSeconds, ipsetFailures, rulesFailed: rulesRefused(report), netlink, ...(staleConntrack ? { staleConntrack } : {}) };
    if (ipsetFailures.length > 0) this.logger.warn({ ipsetFailures: ipsetFailures.map((f) => ({ ...f, entries: f.entries.length })) }, 'ipset operations refused; the rest of the sync was applied');
    logV(this.logger, 4, result, 'sync');
    return result;
  }
}

const noop = (): void => undefined;

function joinReports(a: ApplyReport, b: ApplyReport): ApplyReport {
  if (b.applied.length === 0 && b.failed.length === 0) return a;
  const quiesced = a.quiesced && b.quiesced ? new Map([...a.quiesced, ...b.quiesced]) : (a.quiesced ?? b.quiesced);
  return { applied: [...a.applied, ...b.applied], failed: [...a.failed, ...b.failed], ...(quiesced ? { quiesced } : {}) };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
