/**
 * A ControllerPort that records what the proxy asks of it, for unit tests
 * without a kernel. Syncs can be made failing. The local endpoints come
 * from the real store of known objects, as the Controller's do.
 */
import type { SocketCounters } from 'ipvs-netlink';
import type { ControllerCounters, ControllerFactory, ControllerOptions, ControllerPort, NetlinkTraffic, OperationCounts, SyncKind, SyncResult } from '../../lib/kernel/controller-port.js';
import { KnownObjects, type KnownCounts } from '../../lib/desired/known-objects.js';
import type { ServiceChange } from '../../lib/desired/service-change.js';
import type { LocalEndpoints } from '../../lib/desired/local-endpoints.js';
import { defaultProxyConfig, namespaceOf, type EndpointSlice, type NodeInfo, type Service } from '../../lib/kubernetes/model.js';

export class FakeController implements ControllerPort {
  readonly calls: string[] = [];
  services = new Map<string, Service>();
  slices = new Map<string, EndpointSlice>();
  node?: NodeInfo;
  failStart?: Error;
  failSyncs = 0;
  ops: OperationCounts = { ipvs: { ok: 0, failed: 0 }, ipset: { ok: 0, failed: 0 }, address: { ok: 0, failed: 0 }, iptables: { ok: 0, failed: 0 }, nftables: { ok: 0, failed: 0 } };
  /** Like the real controller's socket counters: every sync sends 2 IPVS messages and 1 ipset message, one sendmsg each. */
  netlink = { ipvs: traffic(0, 0), ipset: traffic(0, 0), rtnl: traffic(0, 0) };
  /** IPVS messages each sync and resync sends (a big cluster's cold start or resync: tens of thousands). */
  ipvsMessages = 2;
  syncs = { full: 0, incremental: 0, resync: 0, drain: 0, lastDurationSeconds: 0, totalDurationSeconds: 0 };
  lastSync?: ControllerCounters['lastSync'];

  private readonly objects: KnownObjects;

  constructor(readonly init?: ControllerOptions) {
    this.node = init?.node;
    this.objects = new KnownObjects(init?.node ?? { name: 'node-a', addresses: [] }, init?.config ?? defaultProxyConfig());
  }

  async start(): Promise<void> {
    this.calls.push('start');
    if (this.failStart) throw this.failStart;
  }
  upsertService(svc: Service): ServiceChange {
    this.calls.push(`upsertService ${svc.metadata.name}`);
    this.services.set(`${svc.metadata.namespace}/${svc.metadata.name}`, svc);
    const change = this.objects.serviceChange(svc);
    this.objects.upsertService(svc);
    return change;
  }
  deleteService(svc: Service): ServiceChange {
    this.calls.push(`deleteService ${svc.metadata.name}`);
    this.services.delete(`${svc.metadata.namespace}/${svc.metadata.name}`);
    const change = this.objects.serviceChange(svc, true);
    this.objects.deleteService(namespaceOf(svc.metadata), svc.metadata.name);
    return change;
  }
  upsertEndpointSlice(slice: EndpointSlice): void {
    this.calls.push(`upsertEndpointSlice ${slice.metadata.name}`);
    this.slices.set(`${slice.metadata.namespace}/${slice.metadata.name}`, slice);
    this.objects.upsertEndpointSlice(slice);
  }
  deleteEndpointSlice(slice: EndpointSlice): void {
    this.calls.push(`deleteEndpointSlice ${slice.metadata.name}`);
    this.slices.delete(`${slice.metadata.namespace}/${slice.metadata.name}`);
    this.objects.deleteEndpointSlice(slice);
  }
  setNode(node: NodeInfo): void {
    this.calls.push(`setNode ${node.addresses.join(',')}`);
    this.node = node;
    this.objects.reset(node, this.init?.config ?? defaultProxyConfig());
  }
  private async run(kind: string): Promise<SyncResult> {
    this.calls.push(kind);
    if (this.failSyncs > 0) {
      this.failSyncs--;
      this.ops.ipvs.failed++;
      throw new Error(`${kind} refused`);
    }
    this.ops.ipvs.ok += 2;
    this.ops.ipset.ok += 1;
    // The nftables socket's share is zero, as the real controller's is with the iptables backend.
    const cost: NetlinkTraffic = { ipvs: traffic(this.ipvsMessages, 1), ipset: traffic(1, 1), rtnl: traffic(0, 0), nftables: traffic(0, 0) };
    for (const k of ['ipvs', 'ipset', 'rtnl'] as const) this.netlink[k] = add(this.netlink[k], cost[k]);
    const syncKind: SyncKind = kind === 'sync' ? (this.syncs.full === 0 ? 'full' : 'incremental') : (kind as 'resync' | 'drain');
    this.syncs[syncKind]++;
    this.lastSync = { kind: syncKind, netlink: cost };
    return { kind: syncKind, planned: 3, applied: 3, failed: 0, durationSeconds: 0, ipsetFailures: [], rulesFailed: false, netlink: cost };
  }
  sync(): Promise<SyncResult> {
    return this.run('sync');
  }
  resync(): Promise<SyncResult> {
    return this.run('resync');
  }
  drain(): Promise<SyncResult> {
    return this.run('drain');
  }
  async cleanup(): Promise<void> {
    this.calls.push('cleanup');
  }
  objectCounts(): KnownCounts {
    return this.objects.counts();
  }
  counters(): ControllerCounters {
    let realServers = 0;
    for (const s of this.slices.values()) realServers += s.endpoints.length;
    return {
      virtualServers: this.services.size,
      realServers,
      ipsetEntries: this.services.size * 2,
      boundAddresses: this.services.size,
      operations: structuredClone(this.ops),
      ipsetFailures: [],
      netlink: structuredClone(this.netlink),
      syncs: { ...this.syncs },
      lastSync: this.lastSync,
    };
  }
  localEndpoints(): LocalEndpoints {
    return this.objects.localEndpoints();
  }
  async close(): Promise<void> {
    this.calls.push('close');
  }
}

/** A controller's counters with nothing done, but for `overrides` (for metrics tests). */
export function idleCounters(overrides: Partial<ControllerCounters> = {}): ControllerCounters {
  const zero = { ok: 0, failed: 0 };
  return {
    virtualServers: 0,
    realServers: 0,
    ipsetEntries: 0,
    boundAddresses: 0,
    operations: { ipvs: zero, ipset: zero, address: zero, iptables: zero, nftables: zero },
    ipsetFailures: [],
    netlink: {},
    syncs: { full: 0, incremental: 0, resync: 0, drain: 0, lastDurationSeconds: 0, totalDurationSeconds: 0 },
    ...overrides,
  };
}

function traffic(messages: number, calls: number): SocketCounters {
  return { messagesSent: messages, messagesReceived: messages, sendmsgCalls: calls, recvCalls: calls, dumpsRestarted: 0 };
}

function add(a: SocketCounters, b: SocketCounters): SocketCounters {
  return {
    messagesSent: a.messagesSent + b.messagesSent,
    messagesReceived: a.messagesReceived + b.messagesReceived,
    sendmsgCalls: a.sendmsgCalls + b.sendmsgCalls,
    recvCalls: a.recvCalls + b.recvCalls,
    dumpsRestarted: a.dumpsRestarted + b.dumpsRestarted,
  };
}

/** A factory that remembers the controller it made. */
export function fakeFactory(setup: (c: FakeController) => void = () => {}): ControllerFactory & { last?: FakeController } {
  const f: ControllerFactory & { last?: FakeController } = (init) => {
    const c = new FakeController(init);
    setup(c);
    f.last = c;
    return c;
  };
  return f;
}
