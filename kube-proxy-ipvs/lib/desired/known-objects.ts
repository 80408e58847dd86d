/**
 * The Services and EndpointSlices the proxy knows, and the desired state
 * they imply, updated one object at a time: an event recomputes only the
 * service it concerns and returns the Scope of keys that may have changed.
 * Objects are kept as their facts (facts.ts): what the mapping reads.
 */
import { serviceContribution } from './service-contribution.js';
import { emptyScope, type Scope } from '../plan/scope.js';
import { DesiredIndex } from './desired-index.js';
import { FactsBuilder, type SliceFacts } from '../kubernetes/object-facts.js';
import type { EndpointSlice, NodeInfo, ProxyConfig, Service } from '../kubernetes/model.js';
import { namespaceOf, SERVICE_NAME_LABEL, serviceKeyOf } from '../kubernetes/model.js';
import { naturalCompare } from 'ipvs-netlink/address';
import { nodeContext, type NodeContext } from './node-addresses.js';
import type { DesiredState } from '../plan/kernel-state.js';

export class KnownObjects {
  private readonly facts = new FactsBuilder();
  private readonly services = new Map<string, Service>();
  /** service key → its slices' facts, in name order (the order the mapping reads them in) */
  private readonly slices = new Map<string, SliceFacts[]>();
  private ctx: NodeContext;
  private index: DesiredIndex;

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
    this.services.set(key, this.facts.service(svc));
    return this.recompute(key);
  }

  deleteService(namespace: string, name: string): Scope {
    const key = `${namespace}/${name}`;
    this.services.delete(key);
    return this.recompute(key);
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
    return this.index.setService(key, svc ? serviceContribution(svc, this.slices.get(key) ?? [], this.ctx) : undefined);
  }
}

/** Slices name their service by label (this is how selector-less services with manual slices work too). */
function sliceOwner(slice: EndpointSlice): string | undefined {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name === undefined ? undefined : `${namespaceOf(slice.metadata)}/${name}`;
}

/** The desired state of a whole set of objects (the `plan` command, tests). */
export function desiredState(objects: { services: Service[]; endpointSlices: EndpointSlice[] }, node: NodeInfo, config: ProxyConfig): DesiredState {
  const state = new KnownObjects(node, config);
  for (const slice of objects.endpointSlices) state.upsertEndpointSlice(slice);
  for (const svc of objects.services) state.upsertService(svc);
  return state.desired;
}
