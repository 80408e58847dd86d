/**
 * The IPVS proxy's kernel side: owns the proxy state (objects → desired),
 * the mirror (what we programmed) and the netlink clients of one network
 * namespace.
 *
 * - start() adopts the kernel as it is (nothing is flushed, so a restart
 *   interrupts no traffic); the first sync() then plans in full against
 *   what was read, which also serves again real servers a previous run left
 *   at weight 0. Feed every object before that first sync: a full plan with
 *   nothing known would remove every service.
 * - on*() record object changes; sync() plans only the keys they touched
 *   (plus those of failed operations) against the mirror. The only kernel
 *   reads are for graceful termination: a TCP real server that leaves is
 *   quiesced (weight 0), its virtual server's destinations are read at the
 *   end of the same batch, and it is deleted at once if idle.
 * - resync() reads the kernel back (a fixed handful of requests), takes
 *   the node's interface addresses from it (NodePorts, "already local")
 *   and repairs drift; removeDrainedRealServers() ends graceful
 *   termination. The caller runs both periodically.
 * - cleanup() removes what an IPVS proxy owns, and nothing else.
 */
import { performance } from 'node:perf_hooks';
import { release } from 'node:os';
import { pino, type Logger } from 'pino';
import type { AddressServiceKey, Destination } from 'ipvs-netlink';
import type { SocketCounters } from 'ipvs-netlink';
import { Applier, type ApplyReport, type FailedOperation, type OperationCounts } from './applier.js';
import { closeClients, openClients, type Clients } from './netlink-clients.js';
import { execIn } from './exec.js';
import { IptablesRunner, DEFAULT_IPTABLES, type IptablesTools } from './iptables-runner.js';
import { ipsetName, SET_DEFINITIONS } from '../desired/ipsets.js';
import { readKernel, type KernelRead } from './kernel-reader.js';
import { Mirror, type KernelSnapshot } from '../plan/mirror.js';
import type { EndpointSlice, NodeInfo, ProxyConfig, Service } from '../kubernetes/model.js';
import { canonicalAddress, cidrContains, parseCidr } from 'ipvs-netlink/address';
import { usableLocalAddresses } from '../desired/node-addresses.js';
import { emptyScope, isEmptyScope, mergeScope, scopeOf, type Scope } from '../plan/scope.js';
import { plan, planDrainedDeletions } from '../plan/planner.js';
import { ProxyState } from '../desired/known-objects.js';
import { compareDestinations, destinationKey, DUMMY_DEVICE, findDestination, virtualServerKey, type CurrentState, type CurrentVirtualServer, type DesiredState, type IpsetOp, type Operation } from '../plan/kernel-state.js';
import { kubeProxySysctls, writeSysctls } from './sysctls.js';

export interface ControllerOptions {
  /** A network namespace path (/run/netns/NAME); default: the process's own. */
  netns?: string;
  config: ProxyConfig;
  node: NodeInfo;
  /** Default: silent. */
  logger?: Logger;
  /** Which iptables binaries to run; default: `iptables`, `iptables-restore`, ... */
  iptables?: IptablesTools;
  /** Netlink request timeout (ms). */
  timeoutMs?: number;
  /** Called after every sync of any kind (a metrics histogram, a healthz timestamp). */
  onSync?: (result: SyncResult) => void;
}

export type SyncKind = 'full' | 'incremental' | 'resync' | 'drain';

export interface SyncResult {
  kind: SyncKind;
  /** Operations planned, carried out, refused (an ipset op the kernel took in part counts in both). */
  planned: number;
  applied: number;
  failed: number;
  durationSeconds: number;
  /** The ipset operations the kernel refused, in whole or in part; the other sets, IPVS and addresses went ahead. */
  ipsetFailures: IpsetFailure[];
  /** What this sync cost on each netlink socket: messages sent and received, sendmsg and receive system calls. */
  netlink: NetlinkTraffic;
}

export type NetlinkSocket = 'ipvs' | 'ipset' | 'rtnl';

/** Per socket: messages and system calls (the sockets' own counters). */
export type NetlinkTraffic = Record<NetlinkSocket, SocketCounters>;

export interface IpsetFailure {
  set: string;
  op: IpsetOp['op'];
  /** Why, as the kernel said it: IPSET_ERR_HASH_FULL (the set reached maxelem), ... */
  code: string;
  message: string;
  /**
   * The entries this operation did not settle: for an add, those not in
   * the kernel; for a del, those still in it. The next sync retries these
   * and only these. Empty for create/destroy.
   */
  entries: string[];
}

export interface ControllerCounters {
  /** What is programmed, as the mirror knows it. */
  virtualServers: number;
  realServers: number;
  ipsetEntries: number;
  boundAddresses: number;
  /** Operations carried out since start, by kind and result. */
  operations: OperationCounts;
  /** ipset operations refused since start, by set and the kernel's code. */
  ipsetFailures: Array<{ set: string; code: string; count: number }>;
  /** Netlink traffic per socket since start (messages, system calls); undefined before the clients are open. */
  netlink: { ipvs?: SocketCounters; ipset?: SocketCounters; rtnl?: SocketCounters };
  syncs: Record<SyncKind, number> & { lastDurationSeconds: number; totalDurationSeconds: number };
  /** The last sync, resync or drain pass: its kind and netlink traffic; undefined before the first. */
  lastSync?: { kind: SyncKind; netlink: NetlinkTraffic };
}

export class Controller {
  private readonly state: ProxyState;
  private config: ProxyConfig;
  private node: NodeInfo;
  private mirror = new Mirror();
  private clients?: Clients;
  private applier?: Applier;
  private readonly exec;
  private readonly iptables: IptablesRunner;
  private readonly logger: Logger;
  /** Keys changed since the last sync, and keys of operations that failed. */
  private pending: Scope = emptyScope();
  /** A node or config change, or the first sync after start: compare everything. */
  private fullSyncPending = true;
  /** Syncs, resyncs, drains and cleanup never interleave: each starts once the one before has settled. */
  private queueTail: Promise<unknown> = Promise.resolve();
  private readonly syncCounts = { full: 0, incremental: 0, resync: 0, drain: 0, lastDurationSeconds: 0, totalDurationSeconds: 0 };
  /** "set\0code" → refused ipset operations since start. */
  private readonly ipsetFailureCounts = new Map<string, number>();
  /** The addresses on the node's interfaces except kube-ipvs0, as last read; undefined before start(). */
  private hostAddresses?: string[];
  private lastSync?: { kind: SyncKind; netlink: NetlinkTraffic };

  constructor(private readonly options: ControllerOptions) {
    this.config = options.config;
    this.node = options.node;
    // Until start() reads the interfaces, the declared node addresses stand in.
    this.state = new ProxyState(options.node, options.config);
    this.logger = options.logger ?? pino({ level: 'silent' });
    this.exec = execIn(options.netns);
    this.iptables = new IptablesRunner(this.exec, options.iptables ?? DEFAULT_IPTABLES);
  }

  /** Opens the clients, makes kube-ipvs0, sets the sysctls, reads the node's addresses and adopts what the kernel holds. */
  async start(): Promise<void> {
    await this.serially(async () => {
      const clients = await this.ensureClients();
      // IPVS's sysctls exist once ip_vs is loaded in the namespace, which opening the client made sure of.
      await writeSysctls(this.exec, kubeProxySysctls(this.config, release()));
      const read = await this.readKernel(clients);
      this.mirror = Mirror.fromKernel(read.snapshot);
      this.adoptHostAddresses(read.hostAddresses);
      this.fullSyncPending = true;
      this.logger.info({ virtualServers: this.mirror.virtualServers.size, hostAddresses: this.hostAddresses }, 'adopted the kernel state');
    });
  }

  // --- object changes: each marks the keys it touched ---

  onServiceChange(svc: Service): void {
    mergeScope(this.pending, this.state.upsertService(svc));
  }

  onServiceDelete(namespace: string, name: string): void {
    mergeScope(this.pending, this.state.deleteService(namespace, name));
  }

  onEndpointSliceChange(slice: EndpointSlice): void {
    mergeScope(this.pending, this.state.upsertEndpointSlice(slice));
  }

  onEndpointSliceDelete(slice: EndpointSlice): void {
    mergeScope(this.pending, this.state.deleteEndpointSlice(slice));
  }

  /** Node addresses or labels (topology) changed: everything may have. */
  onNodeChange(node: NodeInfo): void {
    this.node = node;
    this.state.reset(node, this.config, this.hostAddresses);
    this.fullSyncPending = true;
  }

  get desired(): DesiredState {
    return this.state.desired;
  }

  /** What we believe the kernel holds. */
  get current(): CurrentState {
    return this.mirror;
  }

  /** Whether a sync() would have anything to look at. */
  hasPendingChanges(): boolean {
    return this.fullSyncPending || !isEmptyScope(this.pending);
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
      const traffic = this.traffic();
      const full = this.fullSyncPending;
      const scope = this.takePending();
      try {
        const ops = plan(this.state.desired, this.mirror, { scope: full ? undefined : scope, excludeCIDRs: this.config.excludeCIDRs });
        const report = await this.apply(ops);
        const { ops: deletions, report: deleted } = await this.deleteIdleQuiesced(report);
        return this.finish(full ? 'full' : 'incremental', [...ops, ...deletions], joinReports(report, deleted), started, traffic);
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
   */
  resync(): Promise<SyncResult> {
    return this.serially(async () => {
      const started = performance.now();
      const clients = await this.ensureClients();
      const traffic = this.traffic();
      const read = await this.readKernel(clients);
      const previous = this.mirror;
      this.mirror = Mirror.fromKernel(read.snapshot, this.state.desired);
      for (const [family, payload] of previous.iptables) {
        if (await this.iptables.holds(family, payload).catch(() => false)) this.mirror.iptables.set(family, payload);
      }
      this.adoptHostAddresses(read.hostAddresses);
      this.takePending();
      // The dump just read has the connections of real servers already at weight 0; those still
      // serving are quiesced first and read again, as in sync().
      const ops = plan(this.state.desired, this.mirror, { excludeCIDRs: this.config.excludeCIDRs, connections: connectionsOf(read.snapshot, this.state.desired) });
      const report = await this.apply(ops);
      const { ops: deletions, report: deleted } = await this.deleteIdleQuiesced(report);
      return this.finish('resync', [...ops, ...deletions], joinReports(report, deleted), started, traffic);
    });
  }

  /**
   * Graceful termination's second half: deletes the weight-0 real servers
   * nobody wants once they have no connections left. Only the virtual
   * servers with such a real server are read (one request each).
   */
  removeDrainedRealServers(): Promise<SyncResult> {
    return this.serially(async () => {
      const started = performance.now();
      const traffic = this.traffic();
      const services = new Map<string, AddressServiceKey>();
      for (const [key, vs] of this.mirror.virtualServers) {
        if (vs.destinations.some((d) => d.weight === 0)) services.set(key, vs.service);
      }
      const ops = planDrainedDeletions(this.state.desired, await this.readDestinations(services));
      return this.finish('drain', ops, await this.apply(ops), started, traffic);
    });
  }

  /**
   * Removes everything an IPVS proxy owns, read from the kernel (so a
   * previous run's leftovers too): its iptables jumps and KUBE-* chains,
   * the virtual servers outside excludeCIDRs, kube-ipvs0 with its
   * addresses, and the kube-proxy ipsets. Other sets, chains and the
   * excluded virtual servers stay. Keeps going past a failure and throws
   * the first one at the end.
   */
  cleanup(): Promise<void> {
    return this.serially(async () => {
      const clients = await this.ensureClients();
      const errors: unknown[] = [];
      const attempt = async (what: string, fn: () => Promise<unknown>) => {
        try {
          await fn();
        } catch (err) {
          this.logger.warn({ err: (err as Error).message }, `cleanup: ${what} failed`);
          errors.push(err);
        }
      };
      // The rules go first: they reference the sets, which cannot be destroyed while in use.
      for (const family of ['inet', 'inet6'] as const) await attempt(`${family} iptables`, () => this.iptables.cleanup(family));
      await attempt('virtual servers', async () => {
        const excluded = this.config.excludeCIDRs.map((c, i) => parseCidr(c, `excludeCIDRs[${i}]`));
        // fwmark services are never a kube-proxy's: only address-keyed ones are candidates.
        const ours = (await clients.ipvs.dump()).flatMap((s) =>
          'address' in s && !excluded.some((c) => cidrContains(c, s.address)) ? [{ protocol: s.protocol, address: s.address, port: s.port }] : [],
        );
        const results = await clients.ipvs.apply(ours.map((service) => ({ op: 'deleteService' as const, service })));
        const failed = results.find((r) => !r.ok);
        if (failed && !failed.ok) throw failed.error;
      });
      await attempt(DUMMY_DEVICE, () => clients.rtnl.deleteLink(DUMMY_DEVICE));
      await attempt('ipsets', async () => {
        const names = new Set(SET_DEFINITIONS.flatMap((d) => [ipsetName(d.name, 'inet'), ipsetName(d.name, 'inet6')]));
        for (const name of await clients.ipset.listNames()) if (names.has(name)) await clients.ipset.destroy(name);
      });
      this.mirror = new Mirror();
      this.fullSyncPending = true;
      if (errors.length > 0) throw errors[0];
    });
  }

  counters(): ControllerCounters {
    let realServers = 0;
    for (const vs of this.mirror.virtualServers.values()) realServers += vs.destinations.length;
    let ipsetEntries = 0;
    for (const set of this.mirror.ipsets.values()) ipsetEntries += set.entries.size;
    return {
      virtualServers: this.mirror.virtualServers.size,
      realServers,
      ipsetEntries,
      boundAddresses: this.mirror.boundAddresses.size,
      ipsetFailures: [...this.ipsetFailureCounts].map(([key, count]) => {
        const [set, code] = key.split('\0');
        return { set, code, count };
      }),
      operations: structuredClone(this.applier?.counts ?? { ipvs: { ok: 0, failed: 0 }, ipset: { ok: 0, failed: 0 }, address: { ok: 0, failed: 0 }, iptables: { ok: 0, failed: 0 } }),
      netlink: {
        ipvs: this.clients?.ipvs.counters(),
        ipset: this.clients?.ipset.counters(),
        rtnl: this.clients?.rtnl.counters(),
      },
      syncs: { ...this.syncCounts },
      lastSync: this.lastSync,
    };
  }

  /** Closes the sockets; the kernel state stays (a restart adopts it). */
  close(): void {
    if (this.clients) closeClients(this.clients);
    this.clients = undefined;
    this.applier = undefined;
  }

  // --- internals ---

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queueTail.then(task, task);
    this.queueTail = result.then(noop, noop);
    return result;
  }

  private async ensureClients(): Promise<Clients> {
    if (!this.clients) {
      this.clients = await openClients({ netns: this.options.netns, timeoutMs: this.options.timeoutMs });
      this.applier = new Applier(this.clients, this.iptables, this.logger);
    }
    return this.clients;
  }

  /** The kernel read shared by start() and resync(); kube-ipvs0 is (re)made only when it is missing, down or replaced. */
  private async readKernel(clients: Clients): Promise<KernelRead> {
    const read = await readKernel(clients, this.ourSetNames());
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
    this.state.reset(this.node, this.config, addresses);
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
    const ops = planDrainedDeletions(this.state.desired, read);
    return { ops, report: ops.length > 0 ? await this.apply(ops) : { applied: [], failed: [] } };
  }

  /** The live destinations (weights, connection counts) of these virtual servers: one destination dump each. */
  private async readDestinations(services: Map<string, AddressServiceKey>): Promise<CurrentState> {
    const clients = await this.ensureClients();
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
    await this.ensureClients();
    const report = await this.applier!.apply(ops);
    this.mirror.record(report.applied);
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

  /** Every socket's counters now (zeros before the clients are open), to take the difference a sync made. */
  private traffic(): NetlinkTraffic {
    const c = this.clients;
    return { ipvs: c?.ipvs.counters() ?? ZERO_COUNTERS, ipset: c?.ipset.counters() ?? ZERO_COUNTERS, rtnl: c?.rtnl.counters() ?? ZERO_COUNTERS };
  }

  private finish(kind: SyncKind, ops: Operation[], report: ApplyReport, started: number, before: NetlinkTraffic): SyncResult {
    const durationSeconds = (performance.now() - started) / 1000;
    const after = this.traffic();
    const netlink = { ipvs: countersDelta(before.ipvs, after.ipvs), ipset: countersDelta(before.ipset, after.ipset), rtnl: countersDelta(before.rtnl, after.rtnl) };
    this.lastSync = { kind, netlink };
    this.syncCounts[kind]++;
    this.syncCounts.lastDurationSeconds = durationSeconds;
    this.syncCounts.totalDurationSeconds += durationSeconds;
    const ipsetFailures = report.failed.flatMap(ipsetFailureOf);
    for (const f of ipsetFailures) {
      const key = `${f.set}\0${f.code}`;
      this.ipsetFailureCounts.set(key, (this.ipsetFailureCounts.get(key) ?? 0) + 1);
    }
    const result: SyncResult = { kind, planned: ops.length, applied: report.applied.length, failed: report.failed.length, durationSeconds, ipsetFailures, netlink };
    if (ipsetFailures.length > 0) this.logger.warn({ ipsetFailures: ipsetFailures.map((f) => ({ ...f, entries: f.entries.length })) }, 'ipset operations refused; the rest of the sync was applied');
    this.logger.debug(result, 'sync');
    this.options.onSync?.(result);
    return result;
  }

  private ourSetNames(): Set<string> {
    return new Set(this.state.desired.ipsets.keys());
  }
}

/** Destinations as the kernel reported them, in the mirror's form (canonical addresses, sorted). */
function currentOf(service: AddressServiceKey, live: readonly Destination[]): CurrentVirtualServer {
  const destinations = live
    .map((d) => ({ address: canonicalAddress(d.address) ?? d.address, port: d.port, weight: d.weight, activeConns: d.activeConns, inactiveConns: d.inactiveConns }))
    .sort(compareDestinations);
  return { service, destinations };
}

function joinReports(a: ApplyReport, b: ApplyReport): ApplyReport {
  return b.applied.length === 0 && b.failed.length === 0 ? a : { applied: [...a.applied, ...b.applied], failed: [...a.failed, ...b.failed], quiesced: a.quiesced };
}

const noop = (): void => undefined;

const ZERO_COUNTERS: SocketCounters = { sendmsgCalls: 0, recvCalls: 0, messagesSent: 0, messagesReceived: 0, dumpsRestarted: 0 };

function countersDelta(a: SocketCounters, b: SocketCounters): SocketCounters {
  return {
    sendmsgCalls: b.sendmsgCalls - a.sendmsgCalls,
    recvCalls: b.recvCalls - a.recvCalls,
    messagesSent: b.messagesSent - a.messagesSent,
    messagesReceived: b.messagesReceived - a.messagesReceived,
    dumpsRestarted: b.dumpsRestarted - a.dumpsRestarted,
  };
}

function ipsetFailureOf(f: FailedOperation): IpsetFailure[] {
  if (f.op.kind !== 'ipset') return [];
  const code = (f.error as { code?: string }).code ?? f.error.name;
  return [{ set: f.op.set, op: f.op.op, code, message: f.error.message, entries: 'entries' in f.op ? f.op.entries : [] }];
}

/**
 * Connection counts, keyed as the planner wants them, of the real servers
 * in a kernel snapshot that the desired state does not want (the only
 * ones the planner asks about: those it may remove).
 */
function connectionsOf(snapshot: KernelSnapshot, desired: DesiredState): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const vs of snapshot.virtualServers) {
    if (vs.address === undefined || vs.protocol === undefined || vs.port === undefined) continue;
    const key = virtualServerKey({ protocol: vs.protocol, address: canonicalAddress(vs.address) ?? vs.address, port: vs.port });
    const wanted = desired.virtualServers.get(key)?.destinations ?? [];
    for (const d of vs.destinations) {
      const dest = { address: canonicalAddress(d.address) ?? d.address, port: d.port };
      if (findDestination(wanted, dest) >= 0) continue;
      let counts = out.get(key);
      if (!counts) out.set(key, (counts = new Map()));
      counts.set(destinationKey(dest), (d.activeConns ?? 0) + (d.inactiveConns ?? 0));
    }
  }
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
