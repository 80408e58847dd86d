/**
 * What we programmed: the current state as we left it, updated with each
 * operation the applier carried out. Incremental updates plan against it
 * (no kernel dumps); a periodic resync or a restart starts it from a
 * kernel snapshot instead (adoption: nothing is flushed).
 *
 * It is as big as the cluster, so it is kept lean: real servers in sorted
 * lists (no per-real-server key strings), and what matches the desired
 * state is the desired state's own objects and strings (real servers,
 * service specs, keys: the planner hands them over in its operations; a
 * snapshot is matched against the desired state). Nothing here is changed
 * in place: an update replaces the object. The totals the proxy reports
 * after every sync and at every scrape (real servers, set entries) are
 * kept as it changes, so reading them does not walk the cluster.
 */
import type { AddressServiceKey, ServiceSpec } from 'ipvs-netlink';
import { canonicalAddress, type AddressFamily } from 'ipvs-netlink/address';
import {
  compareDestinations,
  findDestination,
  serviceOptionsDiffer,
  virtualServerKey,
  type CurrentDestination,
  type CurrentState,
  type CurrentVirtualServer,
  type IpsetType,
  type DesiredDestination,
  type DesiredState,
  type IpvsOp,
  type NftablesOp,
  type Operation,
} from './kernel-state.js';

interface MutableVirtualServer extends CurrentVirtualServer {
  service: AddressServiceKey & Partial<ServiceSpec>;
  destinations: CurrentDestination[];
}

/** The kernel as read back: IPVS services (fwmark ones are skipped), ipsets, kube-ipvs0 addresses. */
export interface KernelSnapshot {
  virtualServers: ReadonlyArray<(Partial<AddressServiceKey> & Partial<ServiceSpec> & { fwmark?: number }) & { destinations: readonly CurrentDestination[] }>;
  ipsets: Array<{ name: string; type: IpsetType; entries: string[] }>;
  boundAddresses: string[];
  /** The nftables backend's tables found, by family, as their fingerprints (their elements are in `ipsets`). */
  nftables?: ReadonlyMap<AddressFamily, string>;
}

export class Mirror implements CurrentState {
  readonly virtualServers = new Map<string, MutableVirtualServer>();
  readonly ipsets = new Map<string, { type: IpsetType; entries: Set<string> }>();
  readonly boundAddresses = new Set<string>();
  readonly iptables = new Map<AddressFamily, string>();
  readonly nftables = new Map<AddressFamily, string>();
  private realServerCount = 0;
  private ipsetEntryCount = 0;

  /** Real servers over all virtual servers. */
  get realServers(): number {
    return this.realServerCount;
  }

  /** Entries over all sets (with the nftables backend, the tables' set elements). */
  get ipsetEntries(): number {
    return this.ipsetEntryCount;
  }

  /**
   * The kernel as read. Given the desired state, what the kernel holds as
   * wanted takes the desired state's key strings, address strings and
   * service specs instead of the snapshot's; connection counts are not
   * kept (they are stale at once).
   */
  static fromKernel(snapshot: KernelSnapshot, desired?: DesiredState): Mirror {
    const m = new Mirror();
    for (const vs of snapshot.virtualServers) {
      if (vs.fwmark || vs.address === undefined || vs.protocol === undefined || vs.port === undefined) continue;
      const address = canonicalAddress(vs.address) ?? vs.address;
      const key = virtualServerKey({ protocol: vs.protocol, address, port: vs.port });
      const want = desired?.virtualServers.get(key);
      const service =
        want && !serviceOptionsDiffer(want.service, vs)
          ? want.service
          : { protocol: vs.protocol, address, port: vs.port, scheduler: vs.scheduler, ...(vs.persistent ? { persistent: vs.persistent } : {}), ...(vs.flags ? { flags: vs.flags } : {}) };
      const destinations = vs.destinations
        .map((d): CurrentDestination => ({ address: canonicalAddress(d.address) ?? d.address, port: d.port, weight: d.weight }))
        .sort(compareDestinations);
      m.setVirtualServer(want?.key ?? key, { service, destinations: want ? shared(destinations, want.destinations) : destinations });
    }
    for (const set of snapshot.ipsets) m.setIpset(set.name, { type: set.type, entries: sharedEntries(set.entries, desired?.ipsets.get(set.name)?.entries) });
    sharedEntries(snapshot.boundAddresses.map((a) => canonicalAddress(a) ?? a), desired?.boundAddresses, m.boundAddresses);
    for (const [family, fingerprint] of snapshot.nftables ?? []) m.nftables.set(family, fingerprint);
    return m;
  }

  /** Records operations that succeeded. Their objects are kept (operations are not changed once planned). */
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
        return this.recordIpvs(op);
      case 'nftables':
        return this.recordNftables(op);
    }
  }

  /**
   * A table made whole replaces its sets' entries; element changes update
   * them, as ipset ones do. The table's sets are kept under their ipset
   * names; their `type` is the ipset backend's field, which nothing reads
   * for them.
   */
  private recordNftables(op: NftablesOp): void {
    if (op.op === 'table') {
      this.nftables.set(op.family, op.table.fingerprint);
      for (const [name, entries] of op.entries) this.setIpset(name, { type: 'hash:ip', entries: new Set(entries) });
    } else if (op.op === 'deleteTable') this.nftables.delete(op.family);
    else {
      let set = this.ipsets.get(op.set);
      if (!set) this.setIpset(op.set, (set = { type: 'hash:ip', entries: new Set() }));
      this.changeEntries(set.entries, op.op === 'add', op.entries);
    }
  }

  /** Forgets a family's table (a refused transaction): the next plan makes it whole again. */
  forgetNftables(family: AddressFamily): void {
    this.nftables.delete(family);
  }

  private recordIpset(op: Extract<Operation, { kind: 'ipset' }>): void {
    if (op.op === 'create') this.setIpset(op.set, { type: op.type, entries: new Set() });
    else if (op.op === 'destroy') this.setIpset(op.set, undefined);
    else {
      const set = this.ipsets.get(op.set);
      if (set) this.changeEntries(set.entries, op.op === 'add', op.entries);
    }
  }

  /** Puts (or with undefined removes) a set, keeping the entry total. */
  private setIpset(name: string, set: { type: IpsetType; entries: Set<string> } | undefined): void {
    this.ipsetEntryCount -= this.ipsets.get(name)?.entries.size ?? 0;
    if (set === undefined) this.ipsets.delete(name);
    else {
      this.ipsets.set(name, set);
      this.ipsetEntryCount += set.entries.size;
    }
  }

  /** Adds or removes entries of a set the mirror holds, keeping the entry total (an entry already there, or not there, changes nothing). */
  private changeEntries(entries: Set<string>, add: boolean, changed: Iterable<string>): void {
    const before = entries.size;
    for (const e of changed) add ? entries.add(e) : entries.delete(e);
    this.ipsetEntryCount += entries.size - before;
  }

  /** Puts (or with undefined removes) a virtual server, keeping the real-server total. */
  private setVirtualServer(key: string, vs: MutableVirtualServer | undefined): void {
    this.realServerCount -= this.virtualServers.get(key)?.destinations.length ?? 0;
    if (vs === undefined) this.virtualServers.delete(key);
    else {
      this.virtualServers.set(key, vs);
      this.realServerCount += vs.destinations.length;
    }
  }

  private recordIpvs(op: IpvsOp): void {
    const b = op.batch;
    if (!('address' in b.service)) return;
    const key = op.key ?? virtualServerKey(b.service);
    switch (b.op) {
      case 'addService':
        this.setVirtualServer(key, { service: b.service as AddressServiceKey & Partial<ServiceSpec>, destinations: [] });
        return;
      case 'updateService': {
        const vs = this.virtualServers.get(key);
        if (vs) vs.service = b.service as AddressServiceKey & Partial<ServiceSpec>;
        return;
      }
      case 'deleteService':
        this.setVirtualServer(key, undefined);
        return;
      case 'addDestination':
      case 'updateDestination': {
        const list = this.virtualServers.get(key)?.destinations;
        if (!list) return;
        // The planner's real servers are the desired state's own objects (weight 1) or new ones: kept as they are.
        const given = b.destination;
        const d: CurrentDestination = given.weight !== undefined ? (given as CurrentDestination) : { address: given.address, port: given.port, weight: 1 };
        // The planner emits real servers in destination order: appending is the common case.
        const before = list.length;
        const last = list[list.length - 1];
        if (last === undefined || compareDestinations(last, d) < 0) list.push(d);
        else {
          const at = findDestination(list, d);
          if (at >= 0) list[at] = d;
          else list.splice(-at - 1, 0, d);
        }
        this.realServerCount += list.length - before;
        return;
      }
      case 'deleteDestination': {
        const list = this.virtualServers.get(key)?.destinations;
        const at = list ? findDestination(list, b.destination) : -1;
        if (at >= 0) {
          list!.splice(at, 1);
          this.realServerCount--;
        }
        return;
      }
    }
  }
}

/** The real servers read, each that is as wanted (weight 1) replaced by the desired state's object (both lists in destination order). */
function shared(have: CurrentDestination[], want: readonly DesiredDestination[]): CurrentDestination[] {
  let j = 0;
  for (let i = 0; i < have.length; i++) {
    const d = have[i];
    while (j < want.length && compareDestinations(want[j], d) < 0) j++;
    if (j < want.length && d.weight === 1 && compareDestinations(want[j], d) === 0) have[i] = want[j];
  }
  return have;
}

/** The entries (or addresses) added to `out`, each that the desired set has as the desired set's string. */
function sharedEntries(entries: readonly string[], desired: ReadonlySet<string> | undefined, out = new Set<string>()): Set<string> {
  if (desired) {
    // A Set hands back no stored string for a lookup: the desired strings are met by walking it once.
    const have = new Set(entries);
    for (const e of desired) if (have.has(e)) out.add(e);
  }
  for (const e of entries) out.add(e);
  return out;
}
