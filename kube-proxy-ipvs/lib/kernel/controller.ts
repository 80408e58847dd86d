/**
 * The IPVS proxy's kernel side, the ControllerPort's implementation: owns
 * the known objects (objects → desired state), the mirror (what we
 * programmed), and the one netlink handle per family of one network
 * namespace, through which it also sets that namespace's kernel settings.
 *
 * - start() writes kube-proxy's sysctls and the IPVS timeouts, and adopts
 *   the kernel as it is (nothing is flushed, so a restart interrupts no
 *   traffic); the first sync() then plans in full against what was read,
 *   which also serves again real servers a previous run left at weight 0.
 *   Feed every object before that first sync: a full plan with nothing
 *   known would remove every service.
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
import { release } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { AddressServiceKey } from 'ipvs-netlink';
import { pino, type Logger } from 'pino';
import { KnownObjects } from '../desired/known-objects.js';
import type { LocalEndpoints } from '../desired/local-endpoints.js';
import { usableLocalAddresses } from '../desired/node-addresses.js';
import { namespaceOf, type EndpointSlice, type NodeInfo, type ProxyConfig, type Service } from '../kubernetes/model.js';
import { DUMMY_DEVICE, type CurrentState, type CurrentVirtualServer, type DesiredState, type Operation } from '../plan/kernel-state.js';
import { Mirror } from '../plan/mirror.js';
import { plan, planDrainedDeletions } from '../plan/planner.js';
import { emptyScope, isEmptyScope, mergeScope, scopeOf, type Scope } from '../plan/scope.js';
import { allUdpTargets, changedUdpTargets } from '../plan/stale-conntrack.js';
import { Applier, emptyOperationCounts, type ApplyReport } from './applier.js';
import { removeOtherBackend } from './backend-switch.js';
import { removeOwned } from './cleanup.js';
import type { ControllerCounters, ControllerOptions, ControllerPort, NetlinkTraffic, SyncKind, SyncResult } from './controller-port.js';
import { execIn, type Exec } from './exec.js';
import { detectIptables } from './iptables-flavour.js';
import { IptablesRunner } from './iptables-runner.js';
import { connectionsOf, currentOf, readKernel, type KernelRead } from './kernel-reader.js';
import { closeClients, openClients, openRulesHandles, type Clients } from './netlink-clients.js';
import { familiesOf } from './nftables-tables.js';
import { StaleConntrackCleaner, type StaleConntrackReport } from './stale-conntrack.js';
import { SyncStats, trafficBetween, trafficOf } from './sync-stats.js';
import { kubeProxySysctls, writeSysctls } from './sysctls.js';

/** The handles of the namespace, opened together. */
interface Kernel {
  clients: Clients;
  applier: Applier;
}

export class Controller implements ControllerPort {
  private readonly objects: KnownObjects;
  private readonly config: ProxyConfig;
  private node: NodeInfo;
  private mirror = new Mirror();
  private kernel?: Kernel;
  private readonly exec: Exec;
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
  private readonly staleConntrack: StaleConntrackCleaner;
  /** The iptables programs, once their flavour is found (the iptables backend, cleanup, a switch from it). */
  private iptablesRunner?: Promise<IptablesRunner>;

  constructor(private readonly options: ControllerOptions) {
    this.config = options.config;
    this.node = options.node;
    // Until start() reads the interfaces, the declared node addresses stand in.
    this.objects = new KnownObjects(options.node, options.config);
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.exec = execIn(options.netns);
    this.staleConntrack = new StaleConntrackCleaner({ netns: options.netns, timeoutMs: options.timeoutMs }, this.logger);
  }

  start(): Promise<void> {
    return this.serially(async () => {
      const { clients } = await this.openKernel();
      // IPVS's sysctls exist once ip_vs is loaded in the namespace, which opening the client made sure of.
      await this.writeSysctls();
      await this.setIpvsTimeouts(clients);
      await removeOtherBackend({
        backend: this.config.rulesBackend,
        ...(this.options.netns !== undefined ? { netns: this.options.netns } : {}),
        ...(this.options.timeoutMs !== undefined ? { timeoutMs: this.options.timeoutMs } : {}),
        ...(clients.nftables ? { nftables: clients.nftables } : {}),
        iptables: () => this.iptables(),
        logger: this.logger,
      });
      const read = await this.readKernel(clients);
      this.mirror = Mirror.fromKernel(read.snapshot);
      this.adoptHostAddresses(read.hostAddresses);
      this.fullSyncPending = true;
      this.logger.info({ virtualServers: this.mirror.virtualServers.size, hostAddresses: this.hostAddresses }, 'adopted the kernel state');
    });
  }

  // --- object changes: each marks the keys it touched ---

  upsertService(svc: Service): void {
    mergeScope(this.pending, this.objects.upsertService(svc));
  }

  deleteService(svc: Service): void {
    mergeScope(this.pending, this.objects.deleteService(namespaceOf(svc.metadata), svc.metadata.name));
  }

  upsertEndpointSlice(slice: EndpointSlice): void {
    mergeScope(this.pending, this.objects.upsertEndpointSlice(slice));
  }

  deleteEndpointSlice(slice: EndpointSlice): void {
    mergeScope(this.pending, this.objects.deleteEndpointSlice(slice));
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
      const traffic = trafficOf(this.kernel?.clients);
      const full = this.fullSyncPending;
      const scope = this.takePending();
      try {
        const ops = plan(this.objects.desired, this.mirror, { scope: full ? undefined : scope, excludeCIDRs: this.config.excludeCIDRs });
        const report = await this.apply(ops);
        const { ops: deletions, report: deleted } = await this.deleteIdleQuiesced(report);
        const stale = await this.staleConntrack.clean(full ? allUdpTargets(this.objects.desired) : changedUdpTargets(this.objects.desired, report.applied));
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
      const { clients } = await this.openKernel();
      const traffic = trafficOf(clients);
      const read = await this.readKernel(clients);
      const previous = this.mirror;
      this.mirror = Mirror.fromKernel(read.snapshot, this.objects.desired);
      if (previous.iptables.size > 0) {
        const iptables = await this.iptables();
        for (const [family, payload] of previous.iptables) {
          if (await iptables.holds(family, payload).catch(() => false)) this.mirror.iptables.set(family, payload);
        }
      }
      this.adoptHostAddresses(read.hostAddresses);
      this.takePending();
      // The dump just read has the connections of real servers already at weight 0; those still
      // serving are quiesced first and read again, as in sync().
      const ops = plan(this.objects.desired, this.mirror, { excludeCIDRs: this.config.excludeCIDRs, connections: connectionsOf(read.snapshot, this.objects.desired) });
      const report = await this.apply(ops);
      const { ops: deletions, report: deleted } = await this.deleteIdleQuiesced(report);
      const stale = await this.staleConntrack.clean(allUdpTargets(this.objects.desired));
      const result = this.finish('resync', [...ops, ...deletions], joinReports(report, deleted), started, traffic, stale);
      await this.writeSysctls();
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
      const traffic = trafficOf(this.kernel?.clients);
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
      const { clients } = await this.openKernel();
      // Whichever backend programmed the rules, both are removed: the handles of the other are opened for it.
      const extra = await openRulesHandles(this.netlinkOptions(), clients);
      try {
        const iptables = await this.iptables().catch((err: Error) => void this.logger.warn({ err: err.message }, 'cleanup: no iptables to remove KUBE-* chains with'));
        await removeOwned({ ...clients, ...extra }, iptables ?? undefined, this.config.excludeCIDRs, this.logger);
      } finally {
        extra.ipset?.close();
        extra.nftables?.close();
        this.mirror = new Mirror();
        this.fullSyncPending = true;
      }
    });
  }

  counters(): ControllerCounters {
    let realServers = 0;
    for (const vs of this.mirror.virtualServers.values()) realServers += vs.destinations.length;
    // With the nftables backend these are the table's set elements.
    let ipsetEntries = 0;
    for (const set of this.mirror.ipsets.values()) ipsetEntries += set.entries.size;
    const clients = this.kernel?.clients;
    return {
      virtualServers: this.mirror.virtualServers.size,
      realServers,
      ipsetEntries,
      boundAddresses: this.mirror.boundAddresses.size,
      ipsetFailures: this.stats.ipsetFailures(),
      operations: structuredClone(this.kernel?.applier.counts ?? emptyOperationCounts()),
      netlink: clients
        ? { ipvs: clients.ipvs.counters(), rtnl: clients.rtnl.counters(), ...(clients.ipset ? { ipset: clients.ipset.counters() } : {}), ...(clients.nftables ? { nftables: clients.nftables.counters() } : {}) }
        : {},
      syncs: this.stats.syncs(),
      lastSync: this.stats.lastSync,
    };
  }

  localEndpoints(): LocalEndpoints {
    return this.objects.localEndpoints();
  }

  async close(): Promise<void> {
    this.staleConntrack.close();
    if (this.kernel) closeClients(this.kernel.clients);
    this.kernel = undefined;
  }

  // --- internals ---

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queueTail.then(task, task);
    this.queueTail = result.then(noop, noop);
    return result;
  }

  /**
   * The namespace's handles: the ipset one for the iptables backend, the
   * nftables one for the nftables backend, which runs no iptables program
   * (the flavour is not even looked for).
   */
  private async openKernel(): Promise<Kernel> {
    if (!this.kernel) {
      const nft = this.config.rulesBackend === 'nftables';
      const iptables = nft ? undefined : await this.iptables();
      const clients = await openClients(this.netlinkOptions(), { ipset: !nft, nftables: nft });
      const noIptables = { apply: () => Promise.reject(new Error('the nftables backend runs no iptables program')) };
      this.kernel = { clients, applier: new Applier(clients, iptables ?? noIptables, this.logger) };
    }
    return this.kernel;
  }

  private netlinkOptions(): { netns?: string; timeoutMs?: number } {
    return { netns: this.options.netns, timeoutMs: this.options.timeoutMs };
  }

  /** The iptables flavour in use in the namespace (found once, unless given) and its runner. */
  private iptables(): Promise<IptablesRunner> {
    this.iptablesRunner ??= (async () => {
      let tools = this.options.iptables;
      if (!tools) {
        const found = await detectIptables(this.exec);
        this.logger.info({ iptables: found.mode }, 'iptables flavour');
        tools = found.tools;
      }
      return new IptablesRunner(this.exec, tools);
    })();
    // A failed detection is tried again next time.
    this.iptablesRunner.catch(() => (this.iptablesRunner = undefined));
    return this.iptablesRunner;
  }

  private writeSysctls(): Promise<void> {
    return writeSysctls(this.exec, kubeProxySysctls(this.config, release()));
  }

  /** ipvsadm --set semantics: a 0 leaves that timeout as the kernel has it. */
  private async setIpvsTimeouts(clients: Clients): Promise<void> {
    const { tcp, tcpFin, udp } = this.options.ipvsTimeouts ?? {};
    if (!tcp && !tcpFin && !udp) return;
    await clients.ipvs.setTimeouts({ ...(tcp ? { tcp } : {}), ...(tcpFin ? { tcpFin } : {}), ...(udp ? { udp } : {}) });
  }

  /** The kernel read shared by start() and resync(); kube-ipvs0 is (re)made only when it is missing, down or replaced. */
  private async readKernel(clients: Clients): Promise<KernelRead> {
    // The nftables backend reads both families' tables: one of a family no longer served is removed.
    const nftFamilies = this.objects.desired.nftables ? (['inet', 'inet6'] as const) : undefined;
    const read = await readKernel(clients, new Set(this.objects.desired.ipsets.keys()), nftFamilies);
    const link = read.dummyLink;
    if (!link || !link.up || link.kind !== 'dummy') await clients.rtnl.ensureDummyLink(DUMMY_DEVICE);
    return read;
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
    const { clients } = await this.openKernel();
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
    const { applier } = await this.openKernel();
    const report = await applier.apply(ops);
    this.mirror.record(report.applied);
    // A refused transaction may have met a table that is not as the mirror says: the next sync makes it whole.
    const refused = report.failed.flatMap((f) => (f.op.kind === 'nftables' ? [f.op] : []));
    for (const family of familiesOf(refused)) this.mirror.forgetNftables(family);
    // Failed operations are looked at again by the next sync.
    mergeScope(this.pending, scopeOf(report.failed.map((f) => f.op)));
    return report;
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
    const netlink = trafficBetween(before, trafficOf(this.kernel?.clients));
    const ipsetFailures = this.stats.record(kind, durationSeconds, netlink, report);
    const result: SyncResult = { kind, planned: ops.length, applied: report.applied.length, failed: report.failed.length, durationSeconds, ipsetFailures, netlink, ...(staleConntrack ? { staleConntrack } : {}) };
    if (ipsetFailures.length > 0) this.logger.warn({ ipsetFailures: ipsetFailures.map((f) => ({ ...f, entries: f.entries.length })) }, 'ipset operations refused; the rest of the sync was applied');
    this.logger.debug(result, 'sync');
    return result;
  }
}

const noop = (): void => undefined;

function joinReports(a: ApplyReport, b: ApplyReport): ApplyReport {
  return b.applied.length === 0 && b.failed.length === 0 ? a : { applied: [...a.applied, ...b.applied], failed: [...a.failed, ...b.failed], quiesced: a.quiesced };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
