/**
 * The proxy: source → controller → sync runner, with the healthz, metrics
 * and health-check-node-port servers around it.
 *
 * Start-up order matters: the conntrack sysctls are set and the host says
 * which families are served (before any object is read, as kube-proxy
 * does both before its informers start), the initial objects are
 * collected until the source says it has delivered them all (a first sync
 * with half the services known would delete the others' virtual servers),
 * the Node object gives the node's addresses (waited for as kube-proxy
 * waits, then loopback is assumed and the Node taken when it appears),
 * then the controller adopts the kernel, takes the objects and the first
 * (full) sync runs. Any failure before that is thrown with an
 * explanation; after it, failures are logged and retried.
 */
import type { Logger } from 'pino';
import type { EndpointSlice, Node, NodeInfo, Service } from '../kubernetes/model.js';
import { IP_FAMILY, serviceKeyOf, sliceOwner } from '../kubernetes/model.js';
import type { AddressFamily } from 'ipvs-netlink/address';
import { type Clock, systemClock } from './clock.js';
import type { ControllerFactory, ControllerPort, SyncResult } from '../kernel/controller-port.js';
import { countsOf } from '../desired/known-objects.js';
import { BULK_MESSAGES, collectAfterBulk, messagesOf, trimNativeHeap } from './heap.js';
import { HealthServer } from './health-server.js';
import { ProxyMetrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';
import { NetnsWatch } from './netns-watch.js';
import { nodeEligible, nodeInfoOf, sameNodeInfo } from '../kubernetes/node.js';
import { type HostSetup, realHost } from './host-setup.js';
import { startingNode } from './node-ips.js';
import { exitIfPodCIDRsChanged, waitForPodCIDRs } from './node-pod-cidrs.js';
import { type ServerStart, startServers } from './server-start.js';
import { nodeInfoFor, type ProxyOptions } from './options.js';
import { ProxyHealth } from './proxy-health.js';
import { healthCheckHosts, ServiceHealthServers } from './service-health.js';
import { type Source, type SourceEvent, eventLabel } from './sources/source.js';
import { type RunOutcome, SyncRunner } from './sync-runner.js';
import { checkedPass, refusedSome, staleConntrackOf } from './sync-outcome.js';
import { ProgrammingLatency } from './programming-latency.js';
import { Wait } from './wait.js';
import { controllerOptionsFor, startedController } from './controller-start.js';
import { enabledAtV, logV } from '../logging/logger.js';

/** How long kube-proxy waits for its Node object to exist and have addresses (nodeIPsTimeout). */
const NODE_WAIT_MS = 30_000;

export interface ProxyDeps {
  source: Source;
  controllerFactory: ControllerFactory;
  logger: Logger;
  clock?: Clock;
  /** Default: process metrics (CPU, memory) too. */
  defaultMetrics?: boolean;
  /** Called after a sync or resync that was bulk work (heap.ts); default: a full garbage collection. */
  collectGarbage?: () => void;
  /** Called after every other periodic resync (heap.ts); default: ipvs-netlink's trimNativeHeap. */
  trimNativeHeap?: () => void;
  /** Families, conntrack sysctls, OOM score; default: the real host (host-setup.ts). */
  host?: HostSetup;
  /** How long to wait for the Node object; default kube-proxy's 30 s. */
  nodeWaitMs?: number;
  /** The effective configuration /configz serves on the metrics server (the cli's); without it /configz is 404. */
  configz?: () => unknown;
}

export interface ProxyAddresses {
  healthz?: string;
  metrics?: string;
}

export class Proxy {
  readonly metrics: ProxyMetrics;
  readonly health: ProxyHealth;
  private controller?: ControllerPort;
  private runner?: SyncRunner;
  private readonly healthServer: HealthServer;
  private readonly metricsServer: MetricsServer;
  private readonly serviceHealth: ServiceHealthServers;
  private readonly clock: Clock;
  private readonly log: Logger;
  private node?: Node;
  private nodeInfo?: NodeInfo;
  /** Events that arrived before the controller existed. */
  private buffered: SourceEvent[] = [];
  /**
   * Events received and not yet handled. A source delivers many at once (a
   * manifests reload, an informer's relist): they are handled together,
   * with one clock reading and one sync request for the lot (under
   * user-mode-linux every clock reading is a system call).
   */
  private incoming: SourceEvent[] = [];
  private readonly programming = new ProgrammingLatency();
  private stopping = false;
  private firstSyncLogged = false;
  /** The families served, from the host; empty until start() has asked it. */
  private families: AddressFamily[] = [];
  /** The healthz and metrics servers, retried while they cannot listen. */
  private readonly serverStarts: ServerStart[] = [];
  /** start()'s wait for the Node object, ended early by its arrival or a stop. */
  private readonly nodeWait: Wait;
  /** --netns: the target namespace, checked every second (netns-watch.ts). */
  private netnsTimer?: NodeJS.Timeout;

  constructor(
    private readonly options: ProxyOptions,
    private readonly deps: ProxyDeps,
  ) {
    this.clock = deps.clock ?? systemClock;
    this.nodeWait = new Wait(this.clock);
    this.log = deps.logger;
    this.metrics = new ProxyMetrics(() => this.controller?.counters(), { defaultMetrics: deps.defaultMetrics });
    // kube-proxy's AddMetrics, once the gates are set and before it runs.
    this.metrics.setFeatureGates(options.featureGates ?? {});
    // server.go: healthTimeout = 2 × syncPeriod.
    this.health = new ProxyHealth(2 * options.ipvs.syncPeriodMs, this.clock);
    this.healthServer = new HealthServer(this.health, this.metrics);
    this.metricsServer = new MetricsServer(this.metrics, { configz: deps.configz });
    this.serviceHealth = new ServiceHealthServers({
      hosts: () => healthCheckHosts(options, this.nodeInfo),
      netns: options.netns,
      logger: this.log,
      proxyHealthy: () => this.health.status().healthy,
    });
  }

  async start(): Promise<ProxyAddresses> {
    const o = this.options;
    const host = this.deps.host ?? realHost(o.netns, o.ipvs.rulesBackend);
    await host.applyOomScoreAdj(o.oomScoreAdj, this.log);
    // Servers first: a probe that cannot connect restarts the pod, one that gets a 503 waits.
    const addresses: ProxyAddresses = await startServers(
      {
        healthz: { bind: o.healthzBindAddress, listen: () => this.healthServer.start(o.healthzBindAddress), failed: () => ({ msg: 'Healthz server failed' }) },
        metrics: { bind: o.metricsBindAddress, listen: () => this.metricsServer.start(o.metricsBindAddress), failed: (err) => ({ msg: `starting metrics server failed: ${err.message}` }) },
      },
      { hardFail: o.bindAddressHardFail, clock: this.clock, log: this.log },
      this.serverStarts,
      () => this.stopping,
    );
    // A stop may come at any step of the start: nothing is begun after it (stop() has closed what was).
    if (this.stopping) return addresses;

    // Before any object is read: a failure stops the start early, and the
    // programs run here are forked from a process that does not yet hold
    // the cluster's objects (a fork copies the page tables of all).
    await host.setConntrack(o.conntrack, this.log);
    const found = await host.families();
    if (found.iptables) this.log.info({ iptables: found.iptables.mode, version: found.iptables.version }, 'iptables flavour');
    // Upstream's iptables runner, which then writes no --random-fully.
    if (found.iptables && found.iptables.version === undefined) this.log.info({ version: '1.4.11', err: 'no version in iptables-save or iptables --version' }, 'Error checking iptables version, assuming version at least');
    if (this.stopping) return addresses;

    this.log.info({ source: this.deps.source.description }, 'reading objects');
    await this.deps.source.start({
      event: (e) => this.onEvent(e),
      synced: () => {},
      // The source has logged it (object, field); here it is counted.
      rejected: (r) => this.metrics.invalidObjectsTotal.inc({ kind: r.kind, action: r.action }),
      // Handed over again unchanged: kube-proxy's trackers count such objects, and nothing more happens.
      replayed: (e) => this.metrics.objectsReplayed(countsOf(e.kind, e.object)),
      resync: () => {
        if (this.controller) this.metrics.objectsReplayed(this.controller.objectCounts());
      },
    });
    this.flush();
    await this.waitForNode();
    if (this.stopping) return addresses;
    // NodeCIDR's ranges are the Node's: as kube-proxy, the start waits for them (or fails without them).
    if (o.detectLocalMode === 'NodeCIDR') await waitForPodCIDRs(() => this.node, o.hostnameOverride, this.clock, () => this.stopping);
    if (this.stopping) return addresses;
    this.nodeInfo = startingNode(o, this.node, found, this.log);
    this.families = found.families;
    this.metrics.setFamilies(this.families);
    this.health.setNodeEligible(nodeEligible(this.node));

    const controller = await startedController(this.deps.controllerFactory(controllerOptionsFor(o, this.nodeInfo, this.log, found)), () => this.stopping);
    if (!controller) return addresses;
    this.controller = controller;
    this.flush();
    const initial = this.buffered;
    this.buffered = [];
    const now = this.clock.now();
    for (const e of initial) this.apply(e, now);

    this.runner = new SyncRunner({
      minSyncPeriodMs: o.ipvs.minSyncPeriodMs,
      syncPeriodMs: o.ipvs.syncPeriodMs,
      // A sync takes the pending changes as it starts (kube-proxy's checkoutChanges), failing or not.
      sync: () => (this.metrics.syncStarting(), checkedPass(() => controller.sync())),
      resync: () => (this.metrics.syncStarting(), checkedPass(() => controller.resync())),
      drain: () => checkedPass(() => controller.drain()),
      incomplete: refusedSome,
      onRun: (r) => this.afterRun(r),
      clock: this.clock,
    });
    this.runner.start();
    // As kube-proxy's SyncLoop: every family counts as updated at the start, so a first sync that never succeeds turns it unhealthy.
    this.health.updated(this.families);
    this.health.queued(this.families);
    this.runner.request(); // the first, full sync
    if (o.netns) this.watchNetns(new NetnsWatch(o.netns));
    this.log.info({ objects: initial.length, ...addresses }, 'kube-proxy-ipvs started');
    return addresses;
  }

  /** Waits for the first sync to finish (tests, the demo). */
  async waitForSync(timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!this.firstSyncLogged) {
      if (Date.now() > end) throw new Error(`no sync completed within ${timeoutMs}ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Stops watching and syncing; the kernel state stays programmed (a restart adopts it). */
  private stage = 'not stopping';

  /** What a stop is waiting for, for the binary's message when it takes too long. */
  get stopStage(): string {
    return this.stage;
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // A start waiting for the Node gives up at once, and one adopting the kernel goes no further.
    this.nodeWait.end();
    clearInterval(this.netnsTimer);
    for (const s of this.serverStarts) s.cancel();
    this.stage = 'the object source';
    await this.deps.source.stop().catch((err: unknown) => this.log.warn({ err }, 'stopping the source failed'));
    this.stage = 'the sync in progress';
    await this.runner?.stop();
    this.stage = 'the health and metrics servers';
    await Promise.all([this.healthServer.close(), this.metricsServer.close(), this.serviceHealth.close()]);
    this.stage = 'the kernel handles';
    await this.controller?.close();
    this.stage = 'done';
    this.log.info('kube-proxy-ipvs stopped; the programmed state is left in place');
  }

  /**
   * The --netns target deleted under us: one clear error, no more syncs
   * (nothing could be programmed; retrying would only spin), health 503 so
   * a supervisor restarts the proxy. See netns-watch.ts for why.
   */
  private watchNetns(watch: NetnsWatch): void {
    this.netnsTimer = watch.every((reason) => {
      this.health.setFatal(reason);
      this.log.error(
        { netns: watch.path, reason },
        'the target network namespace is gone: syncing stopped, /healthz and /livez answer 503; restart kube-proxy-ipvs once the namespace exists again',
      );
      void this.runner?.stop();
      void this.deps.source.stop().catch(() => undefined);
    }, () => this.stopping);
  }

  /**
   * kube-proxy's NodeManager: up to 30 s for this Node to exist with an
   * address, then on without it (the error says which was missing).
   */
  private async waitForNode(): Promise<void> {
    if (this.nodeHasIPs() || this.stopping) return;
    await this.nodeWait.for(this.deps.nodeWaitMs ?? NODE_WAIT_MS);
    if (this.nodeHasIPs() || this.stopping) return;
    const node = this.options.hostnameOverride;
    if (this.node === undefined) this.log.error({ node }, 'Timed out waiting for node to exist');
    else this.log.error({ node }, 'Timed out waiting for node to be assigned IPs');
  }

  private nodeHasIPs(): boolean {
    return this.node !== undefined && nodeInfoOf(this.options.hostnameOverride, this.node, undefined).addresses.length > 0;
  }

  private onEvent(e: SourceEvent): void {
    if (this.stopping) return;
    this.incoming.push(e);
    if (this.incoming.length === 1) queueMicrotask(() => this.flush());
  }

  /** Handles the events received so far, in order, as one batch. */
  private flush(): void {
    const batch = this.incoming;
    if (batch.length === 0) return;
    this.incoming = [];
    if (this.stopping) return;
    const logEvents = enabledAtV(this.log, 4);
    let now: number | undefined;
    const queued = new Set<AddressFamily>();
    for (const e of batch) {
      // At V(4), as kube-proxy's informer handlers log each event.
      if (logEvents) logV(this.log, 4, { type: e.type, object: eventLabel(e) }, 'object event');
      if (e.kind === 'Node') this.onNode(e.type, e.object);
      else if (!this.controller) this.buffered.push(e);
      else for (const f of this.apply(e, (now ??= this.clock.now()))) queued.add(f);
    }
    if (now === undefined) return;
    // As kube-proxy's Sync(), called only when a change tracker has a change pending: /healthz waits
    // for those. The sync itself is asked for every event; for a no-op it finds nothing to do.
    if (queued.size > 0) this.health.queued([...queued]);
    this.runner?.request();
  }

  /** Feeds one Service/EndpointSlice event to the controller; `now` is when it was received. Returns the families with a change pending. */
  private apply(e: SourceEvent, now: number): AddressFamily[] {
    const c = this.controller!;
    if (e.kind === 'Service') {
      const svc = e.object as Service;
      const change = e.type === 'delete' ? c.deleteService(svc) : c.upsertService(svc);
      return this.metrics.serviceChanged(serviceKeyOf(svc.metadata), change, now);
    }
    if (e.kind === 'EndpointSlice') {
      const slice = e.object as EndpointSlice;
      if (e.type === 'delete') c.deleteEndpointSlice(slice);
      else c.upsertEndpointSlice(slice);
      return this.endpointSliceChanged(slice, e.type === 'delete', now);
    }
    return [];
  }

  /**
   * An EndpointSlice change in the metrics, as the EndpointsChangeTracker
   * of its family takes it: FQDN slices, those of a family not served and
   * those naming no Service are no tracker's. Every event that reaches here
   * is a change to sync: kube-proxy (since 1.31) compares the slice whole,
   * metadata included, and an object handed over again unchanged comes as
   * a replay instead. Its trigger time goes to the programming latency.
   * Returns the family whose tracker takes it.
   */
  private endpointSliceChanged(slice: EndpointSlice, deleted: boolean, now: number): AddressFamily[] {
    const family = slice.addressType;
    const service = sliceOwner(slice);
    const served = this.families.find((f) => IP_FAMILY[f] === family);
    if ((family !== 'IPv4' && family !== 'IPv6') || service === undefined || served === undefined) return [];
    this.metrics.endpointsChanged(family, now);
    this.programming.changed(slice, family, service, deleted, now);
    return [served];
  }

  private onNode(type: SourceEvent['type'], node: Node): void {
    if (node.metadata.name !== this.options.hostnameOverride) return;
    // kube-proxy 1.37's line; it then exits to restart, where this proxy runs on, unhealthy until the Node is back.
    if (type === 'delete') this.log.info({ node: node.metadata.name }, 'Node is being deleted');
    this.node = type === 'delete' ? undefined : node;
    this.health.setNodeEligible(type !== 'delete' && nodeEligible(node));
    // As kube-proxy: the pod CIDRs are those of the start; in NodeCIDR mode a change of them restarts the process.
    if (this.options.detectLocalMode === 'NodeCIDR' && this.nodeInfo && type !== 'delete') exitIfPodCIDRsChanged(this.nodeInfo.podCIDRs ?? [], node, this.log);
    if (this.nodeHasIPs()) this.nodeWait.end();
    if (!this.controller || type === 'delete') return;
    const info = { ...nodeInfoFor(this.options, node), families: this.families };
    if (info.addresses.length === 0 || (this.nodeInfo && sameNodeInfo(info, this.nodeInfo))) return;
    // kube-proxy 1.34-1.36 only logs this (1.37 exits to restart); the new addresses are taken at once instead.
    this.log.info({ node: info.name, newNodeIPs: info.addresses, oldNodeIPs: this.nodeInfo?.addresses ?? [] }, 'NodeIPs changed for the node');
    this.nodeInfo = info;
    this.controller.setNode(info);
    this.health.queued(this.families);
    this.metrics.syncQueued(this.clock.now());
    this.runner?.request();
  }

  private afterRun(r: RunOutcome): void {
    const ms = Math.round(r.durationMs * 10) / 10;
    if (this.health.fatal !== undefined) {
      // A run that was under way when the namespace went: its outcome means nothing; the error was said once.
      this.log.debug({ kind: r.kind, durationMs: ms, err: r.error === undefined ? undefined : String(r.error) }, 'run ended after the target was gone');
      return;
    }
    // As kube-proxy observes a sync's duration in a defer: failed ones count too.
    if (r.kind !== 'drain') this.metrics.syncRan(r.kind, r.durationMs);
    this.metrics.conntrackReconciler.observe(staleConntrackOf(r));
    if (r.error !== undefined) {
      // The changes it took are dropped from the latency, as kube-proxy's sync checks them out and returns early.
      if (r.kind !== 'drain') this.programming.dropTaken(r.startedAt);
      this.metrics.syncErrorsTotal.inc({ kind: r.kind });
      this.log.error({ kind: r.kind, err: (r.error as Error)?.message ?? String(r.error), durationMs: ms }, 'sync failed; retrying with a resync');
      return;
    }
    // As kube-proxy: refused operations (each logged by the applier) do not stop the sync from counting; a resync retries them.
    const result = r.result as SyncResult | undefined;
    if (refusedSome(result)) {
      this.metrics.syncErrorsTotal.inc({ kind: r.kind });
      this.log.warn({ kind: r.kind, refused: result!.failed, planned: result!.planned, durationMs: ms }, 'some operations were refused; the rest is programmed and a resync retries them');
    }
    if (r.kind === 'drain') {
      logV(this.log, 4, { durationMs: ms }, 'graceful-termination pass');
      return;
    }
    const end = r.startedAt + r.durationMs;
    this.health.updated(this.families);
    this.metrics.synced(end);
    for (const p of this.programming.programmed(r.startedAt, end)) this.metrics.networkProgrammingDuration.observe({ ip_family: p.family }, p.seconds);
    const local = this.controller!.localEndpoints();
    this.metrics.setNoLocalEndpoints(local.withoutLocalEndpointsByFamily);
    this.serviceHealth.update(local.healthChecks).catch((err: unknown) => this.log.error({ err }, 'health check node ports'));
    const counters = this.controller?.counters();
    const fields = { kind: r.kind, durationMs: ms, virtualServers: counters?.virtualServers, realServers: counters?.realServers, ipsetEntries: counters?.ipsetEntries };
    // The first sync is worth an info line (start-up is done); the rest are routine, at V(4) as kube-proxy's "syncProxyRules complete".
    if (!this.firstSyncLogged) {
      this.firstSyncLogged = true;
      this.log.info(fields, 'first sync done');
    } else logV(this.log, 4, fields, 'synced');
    // A run that moved this many messages left garbage worth collecting now.
    if (messagesOf(result?.netlink) >= BULK_MESSAGES) this.collectAfterBulk(r.kind);
    // Otherwise each periodic resync gives the C heap's free pages back (see heap.ts): a few microseconds.
    else if (r.kind === 'resync') (this.deps.trimNativeHeap ?? trimNativeHeap)();
  }

  /** A method of its own so that the benchmarks can time the collection (bench/proxy-instrument.mjs). */
  private collectAfterBulk(kind: RunOutcome['kind']): void {
    collectAfterBulk(kind, this.log, this.deps.collectGarbage);
  }
}
