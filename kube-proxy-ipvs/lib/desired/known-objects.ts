/**
 * The one store of the Services and EndpointSlices the proxy knows, and
 * what they imply, updated one object at a time: the desired state (an
 * event recomputes only the service it concerns and returns the Scope of
 * keys that may have changed) and the node-local endpoints of the
 * Services with a Local traffic policy (local-endpoints.ts). Objects are
 * kept as their facts (object-facts.ts): what the mapping reads.
 */
import { type AddressFamily, naturalCompare } from 'ipvs-netlink/address';
import type { EndpointSlice, NodeInfo, ProxyConfig, Service } from '../kubernetes/model.js';
import { serviceKeyOf, sliceOwner } from '../kubernetes/model.js';
import { FactsBuilder, type SliceFacts } from '../kubernetes/object-facts.js';
import type { DesiredState } from '../plan/kernel-state.js';
import { emptyScope, mergeScope, type Scope } from '../plan/scope.js';
import { DesiredIndex } from './desired-index.js';
import { hasLocalPolicy, localEndpointsOf, type LocalEndpoints } from './local-endpoints.js';
import { nodeContext, type NodeContext } from './node-addresses.js';
import { serviceContribution } from './service-contribution.js';
import type { ServiceChange, ServiceReading } from './service-change.js';
import { servicePortInfos } from './service-ports.js';
import { requestedScheduler, sameReport, serviceScheduling, type SchedulingReport } from './scheduling.js';

export interface KnownCounts {
  services: number;
  /** address type (IPv4, IPv6, FQDN) → EndpointSlices naming a Service */
  slices: Readonly<Record<string, number>>;
}

const NO_SLICES: Readonly<Record<string, number>> = {};

/** What one object adds to KnownObjects.counts(): a Service one, an EndpointSlice naming a Service one of its address type, anything else nothing. */
export function countsOf(kind: string, object: Service | EndpointSlice | object): KnownCounts {
  if (kind === 'Service') return { services: 1, slices: NO_SLICES };
  const slice = object as EndpointSlice;
  if (kind === 'EndpointSlice' && sliceOwner(slice) !== undefined) return { services: 0, slices: { [slice.addressType]: 1 } };
  return { services: 0, slices: NO_SLICES };
}

export class KnownObjects {
  private readonly facts = new FactsBuilder();
  private readonly services = new Map<string, Service>();
  /** service key → its slices' facts, in name order (the order the mapping reads them in) */
  private readonly slices = new Map<string, SliceFacts[]>();
  /** Keys of the Services with a Local traffic policy (most have none): the only ones localEndpoints() looks at. */
  private readonly localPolicy = new Set<string>();
  private ctx: NodeContext;
  private index: DesiredIndex;
  /** Schedulers the kernel refused for want of their module: Services asking for one get the global scheduler. */
  private readonly missingSchedulers = new Set<string>();
  /** service key → what was last reported about its scheduler annotations (each change is reported once). */
  private readonly schedulingReports = new Map<string, SchedulingReport>();
  private pendingReports: SchedulingReport[] = [];

  /**
   * @param hostAddresses the addresses on the node's interfaces except
   *   kube-ipvs0, read from the kernel; without them node.addresses stand in.
   */
  constructor(node: NodeInfo, config: ProxyConfig, hostAddresses?: readonly string[]) {
    this.ctx = nodeContext(node, config, hostAddresses);
    this.index = new DesiredIndex(this.ctx);
  }

  get desired(): DesiredState {
    return this.index.state;
  }

  get context(): NodeContext {
    return this.ctx;
  }

  upsertService(svc: Service): Scope {
    const key = serviceKeyOf(svc.metadata);
    const facts = this.facts.service(svc);
    this.services.set(key, facts);
    if (hasLocalPolicy(facts)) this.localPolicy.add(key);
    else this.localPolicy.delete(key);
    this.noteScheduling(key, facts);
    return this.recompute(key);
  }

  /**
   * What upserting this Service (or, `deleted`, deleting it) changes of
   * what the proxy reads of it, in each family (service-change.ts). Asked
   * before the upsert or delete.
   */
  serviceChange(svc: Service, deleted = false): ServiceChange {
    const before = this.services.get(serviceKeyOf(svc.metadata));
    const after = deleted ? undefined : this.facts.service(svc);
    return { before: this.readByFamily(before), after: this.readByFamily(after) };
  }

  deleteService(namespace: string, name: string): Scope {
    const key = `${namespace}/${name}`;
    this.services.delete(key);
    this.localPolicy.delete(key);
    this.schedulingReports.delete(key);
    return this.recompute(key);
  }

  /**
   * The kernel has no module for this scheduler: the Services that ask for
   * it get the global one from now on (each reported). Returns the keys
   * that changed.
   */
  schedulerMissing(scheduler: string): Scope {
    const scope = emptyScope();
    if (scheduler === this.ctx.config.scheduler || this.missingSchedulers.has(scheduler)) return scope;
    this.missingSchedulers.add(scheduler);
    for (const [key, svc] of this.services) {
      if (requestedScheduler(svc) !== scheduler) continue;
      this.noteScheduling(key, svc);
      mergeScope(scope, this.recompute(key));
    }
    return scope;
  }

  /** What is to be said about Services' scheduler annotations since the last call, each change once. */
  takeSchedulingReports(): SchedulingReport[] {
    const out = this.pendingReports;
    this.pendingReports = [];
    return out;
  }

  /** How many Services, and EndpointSlices of each address type, are known. */
  counts(): KnownCounts {
    const slices: Record<string, number> = {};
    for (const list of this.slices.values()) for (const s of list) slices[s.addressType] = (slices[s.addressType] ?? 0) + 1;
    return { services: this.services.size, slices };
  }

  /** The Services with a Local traffic policy and their ready endpoints on this node. */
  localEndpoints(): LocalEndpoints {
    const services = [...this.localPolicy].map((key): [string, Service] => [key, this.services.get(key)!]);
    return localEndpointsOf(services, (key) => this.slices.get(key), this.ctx.hostname);
  }

  upsertEndpointSlice(slice: EndpointSlice): Scope {
    const key = sliceOwner(slice);
    if (key === undefined) return emptyScope();
    const facts = this.facts.slice(slice);
    const list = this.slices.get(key);
    if (!list) this.slices.set(key, [facts]);
    else {
      const at = list.findIndex((s) => s.name === facts.name);
      if (at >= 0) list[at] = facts;
      else {
        list.push(facts);
        list.sort((a, b) => naturalCompare(a.name, b.name));
      }
    }
    return this.recompute(key);
  }

  deleteEndpointSlice(slice: EndpointSlice): Scope {
    const key = sliceOwner(slice);
    if (key === undefined) return emptyScope();
    const list = this.slices.get(key);
    const at = list?.findIndex((s) => s.name === slice.metadata.name) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    if (list?.length === 0) this.slices.delete(key);
    return this.recompute(key);
  }

  /** A node change (addresses, zone label, the interfaces' addresses) or a config change can touch everything: rebuild. */
  reset(node: NodeInfo, config: ProxyConfig, hostAddresses?: readonly string[]): void {
    this.ctx = nodeContext(node, config, hostAddresses);
    this.index = new DesiredIndex(this.ctx);
    for (const key of this.services.keys()) this.recompute(key);
  }

  private recompute(key: string): Scope {
    const svc = this.services.get(key);
    return this.index.setService(key, svc ? serviceContribution(svc, this.slices.get(key) ?? [], this.ctx, this.missingSchedulers) : undefined);
  }

  /** What each family served reads of a Service, where it proxies it. */
  private readByFamily(svc: Service | undefined): Map<AddressFamily, ServiceReading> {
    const read = new Map<AddressFamily, ServiceReading>();
    if (svc === undefined) return read;
    for (const f of this.ctx.families) {
      const ports = servicePortInfos(svc, f);
      if (ports.length > 0) read.set(f, { ports, annotations: svc.metadata.annotations });
    }
    return read;
  }

  private noteScheduling(key: string, svc: Service): void {
    const { report } = serviceScheduling(svc, this.ctx.config.scheduler, this.missingSchedulers);
    if (sameReport(report, this.schedulingReports.get(key))) return;
    if (report) {
      this.schedulingReports.set(key, report);
      this.pendingReports.push(report);
    } else this.schedulingReports.delete(key);
  }
}

/** The desired state of a whole set of objects (the `plan` command, tests). */
export function desiredState(objects: { services: Service[]; endpointSlices: EndpointSlice[] }, node: NodeInfo, config: ProxyConfig): DesiredState {
  return plannedState(objects, node, config).desired;
}

/** The desired state of a whole set of objects, and what is to be said about their scheduler annotations. */
export function plannedState(objects: { services: Service[]; endpointSlices: EndpointSlice[] }, node: NodeInfo, config: ProxyConfig): { desired: DesiredState; schedulingReports: SchedulingReport[] } {
  const state = new KnownObjects(node, config);
  for (const slice of objects.endpointSlices) state.upsertEndpointSlice(slice);
  for (const svc of objects.services) state.upsertService(svc);
  return { desired: state.desired, schedulingReports: state.takeSchedulingReports() };
}
