/**
 * What we programmed: the current state as we left it, updated with each
 * operation the applier carried out. Incremental updates plan against it
 * (no kernel dumps); a periodic resync or a restart starts it from a
 * kernel snapshot instead (adoption: nothing is flushed).
 */
import type { AddressServiceKey, ServiceSpec } from '../ipvs/types.js';
import type { IpsetType } from './ipsets.js';
import { canonicalAddress, type AddressFamily } from './net.js';
import {
  destinationKey,
  virtualServerKey,
  type CurrentDestination,
  type CurrentState,
  type CurrentVirtualServer,
  type Operation,
} from './state.js';

interface MutableVirtualServer extends CurrentVirtualServer {
  service: AddressServiceKey & Partial<ServiceSpec>;
  destinations: Map<string, CurrentDestination>;
}

/** The kernel as read back: IPVS services (fwmark ones are skipped), ipsets, kube-ipvs0 addresses. */
export interface KernelSnapshot {
  virtualServers: Array<(Partial<AddressServiceKey> & Partial<ServiceSpec> & { fwmark?: number }) & { destinations: CurrentDestination[] }>;
  ipsets: Array<{ name: string; type: IpsetType; entries: string[] }>;
  boundAddresses: string[];
}

export class Mirror implements CurrentState {
  readonly virtualServers = new Map<string, MutableVirtualServer>();
  readonly ipsets = new Map<string, { type: IpsetType; entries: Set<string> }>();
  readonly boundAddresses = new Set<string>();
  readonly iptables = new Map<AddressFamily, string>();

  static fromKernel(snapshot: KernelSnapshot): Mirror {
    const m = new Mirror();
    for (const vs of snapshot.virtualServers) {
      if (vs.fwmark || vs.address === undefined || vs.protocol === undefined || vs.port === undefined) continue;
      const service = { ...vs, address: canonicalAddress(vs.address) ?? vs.address } as AddressServiceKey & Partial<ServiceSpec>;
      delete (service as { destinations?: unknown }).destinations;
      const destinations = new Map(vs.destinations.map((d) => [destinationKey(d), { ...d }] as const));
      m.virtualServers.set(virtualServerKey(service), { service, destinations });
    }
    for (const set of snapshot.ipsets) m.ipsets.set(set.name, { type: set.type, entries: new Set(set.entries) });
    for (const a of snapshot.boundAddresses) m.boundAddresses.add(canonicalAddress(a) ?? a);
    return m;
  }

  /** Records operations that succeeded. */
  record(ops: Iterable<Operation>): void {
    for (const op of ops) this.recordOne(op);
  }

  private recordOne(op: Operation): void {
    switch (op.kind) {
      case 'ipset':
        return this.recordIpset(op);
      case 'address':
        if (op.op === 'bind') this.boundAddresses.add(op.address);
        else this.boundAddresses.delete(op.address);
        return;
      case 'iptables':
        this.iptables.set(op.family, op.restore);
        return;
      case 'ipvs':
        return this.recordIpvs(op.batch);
    }
  }

  private recordIpset(op: Extract<Operation, { kind: 'ipset' }>): void {
    if (op.op === 'create') this.ipsets.set(op.set, { type: op.type, entries: new Set() });
    else if (op.op === 'destroy') this.ipsets.delete(op.set);
    else {
      const set = this.ipsets.get(op.set);
      for (const e of op.entries) op.op === 'add' ? set?.entries.add(e) : set?.entries.delete(e);
    }
  }

  private recordIpvs(b: Extract<Operation, { kind: 'ipvs' }>['batch']): void {
    if (!('address' in b.service)) return;
    const key = virtualServerKey(b.service);
    switch (b.op) {
      case 'addService':
        this.virtualServers.set(key, { service: { ...b.service } as AddressServiceKey & Partial<ServiceSpec>, destinations: new Map() });
        return;
      case 'updateService': {
        const vs = this.virtualServers.get(key);
        if (vs) vs.service = { ...b.service } as AddressServiceKey & Partial<ServiceSpec>;
        return;
      }
      case 'deleteService':
        this.virtualServers.delete(key);
        return;
      case 'addDestination':
      case 'updateDestination':
        this.virtualServers
          .get(key)
          ?.destinations.set(destinationKey(b.destination), { address: b.destination.address, port: b.destination.port, weight: b.destination.weight ?? 1 });
        return;
      case 'deleteDestination':
        this.virtualServers.get(key)?.destinations.delete(destinationKey(b.destination));
        return;
    }
  }
}
