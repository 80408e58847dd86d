/**
 * (desired, current) → the ordered operations that make current desired.
 * Pure. With a Scope it looks only at the keys an update touched, so an
 * incremental change costs the size of the change, not of the cluster;
 * without one it compares everything (resync, restart adoption, drift).
 */
import type { AddressServiceKey, BatchOp, DestinationKey } from '../ipvs/types.js';
import type { Scope } from './desired-index.js';
import { cidrContains, familyOf, naturalCompare, parseCidr, type Cidr } from './net.js';
import type { CurrentDestination, CurrentState, CurrentVirtualServer, DesiredState, DesiredVirtualServer, Operation } from './state.js';
import { DUMMY_DEVICE, virtualServerKey } from './state.js';

export interface PlanOptions {
  /** Limit the comparison to these keys (an incremental update). */
  scope?: Scope;
  /** --ipvs-exclude-cidrs: virtual servers there that we do not want are someone else's; never removed. */
  excludeCIDRs?: readonly string[];
  /**
   * Connection counts (active + inactive) just read from the kernel:
   * virtualServerKey → destinationKey → count. A TCP real server that
   * leaves with a count of 0 here is deleted at once; without a count it
   * is quiesced at weight 0 (see gracefulRemovals()).
   */
  connections?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/**
 * Operations come out in an order that never opens a gap: sets and their
 * entries before the rules and addresses that use them; new virtual and
 * real servers before addresses are bound (a bound VIP with no virtual
 * server would answer from the host); iptables; then removals, addresses
 * first, ipset entries last (KUBE-IPVS-FILTER rejects a bound address
 * missing from the sets).
 */
class Steps {
  createSets: Operation[] = [];
  addEntries: Operation[] = [];
  addServices: Operation[] = [];
  addDestinations: Operation[] = [];
  bind: Operation[] = [];
  iptables: Operation[] = [];
  unbind: Operation[] = [];
  removeDestinations: Operation[] = [];
  deleteServices: Operation[] = [];
  delEntries: Operation[] = [];

  ordered(): Operation[] {
    return [
      ...this.createSets,
      ...this.addEntries,
      ...this.addServices,
      ...this.addDestinations,
      ...this.bind,
      ...this.iptables,
      ...this.unbind,
      ...this.removeDestinations,
      ...this.deleteServices,
      ...this.delEntries,
    ];
  }
}

export function plan(desired: DesiredState, current: CurrentState, options: PlanOptions = {}): Operation[] {
  const steps = new Steps();
  const excluded = (options.excludeCIDRs ?? []).map((c, i) => parseCidr(c, `excludeCIDRs[${i}]`));
  planIpsets(desired, current, options.scope, steps);
  planVirtualServers(desired, current, options.scope, excluded, options.connections, steps);
  planAddresses(desired, current, options.scope, steps);
  if (!options.scope || options.scope.iptables) planIptables(desired, current, steps);
  return steps.ordered();
}

function planIpsets(desired: DesiredState, current: CurrentState, scope: Scope | undefined, steps: Steps): void {
  for (const name of sorted(desired.ipsets.keys())) {
    const want = desired.ipsets.get(name)!;
    const have = current.ipsets.get(name);
    // Sets are created whole (kube-proxy: `ipset create -exist` each sync); entries follow.
    if (!have) {
      steps.createSets.push({ kind: 'ipset', op: 'create', set: name, type: want.type, options: want.options });
      if (want.entries.size > 0) steps.addEntries.push({ kind: 'ipset', op: 'add', set: name, entries: sorted(want.entries) });
      continue;
    }
    const candidates = scope ? scope.setEntries.get(name) : union(want.entries, have.entries);
    if (!candidates) continue;
    const add: string[] = [];
    const del: string[] = [];
    for (const e of candidates) {
      if (want.entries.has(e) && !have.entries.has(e)) add.push(e);
      else if (!want.entries.has(e) && have.entries.has(e)) del.push(e);
    }
    if (add.length) steps.addEntries.push({ kind: 'ipset', op: 'add', set: name, entries: add.sort(naturalCompare) });
    if (del.length) steps.delEntries.push({ kind: 'ipset', op: 'del', set: name, entries: del.sort(naturalCompare) });
  }
}

type Connections = PlanOptions['connections'];

function planVirtualServers(desired: DesiredState, current: CurrentState, scope: Scope | undefined, excluded: Cidr[], connections: Connections, steps: Steps): void {
  const keys = scope ? scope.virtualServers : union(desired.virtualServers.keys(), current.virtualServers.keys());
  for (const key of sorted(keys)) {
    const want = desired.virtualServers.get(key);
    const have = current.virtualServers.get(key);
    if (want && !have) addVirtualServer(want, steps);
    else if (want && have) syncVirtualServer(want, have, connections?.get(key), steps);
    else if (have && isOurs(have, desired, excluded)) steps.deleteServices.push(ipvs({ op: 'deleteService', service: keyOf(have) }));
  }
}

/**
 * kube-proxy's cleanLegacyService spares virtual servers inside
 * excludeCIDRs and those of a family this proxy does not serve.
 */
function isOurs(vs: CurrentVirtualServer, desired: DesiredState, excluded: Cidr[]): boolean {
  const address = vs.service.address;
  return desired.families.includes(familyOf(address)) && !excluded.some((c) => cidrContains(c, address));
}

function addVirtualServer(want: DesiredVirtualServer, steps: Steps): void {
  steps.addServices.push(ipvs({ op: 'addService', service: want.service }));
  for (const key of sorted(want.destinations.keys())) {
    steps.addDestinations.push(ipvs({ op: 'addDestination', service: keyOf(want), destination: withWeight(want.destinations.get(key)!, 1) }));
  }
}

function syncVirtualServer(want: DesiredVirtualServer, have: CurrentVirtualServer, connections: ReadonlyMap<string, number> | undefined, steps: Steps): void {
  if (serviceDiffers(want, have)) steps.addServices.push(ipvs({ op: 'updateService', service: want.service }));
  for (const key of sorted(union(want.destinations.keys(), have.destinations.keys()))) {
    const wanted = want.destinations.get(key);
    const present = have.destinations.get(key);
    if (wanted && !present) {
      steps.addDestinations.push(ipvs({ op: 'addDestination', service: keyOf(want), destination: withWeight(wanted, 1) }));
    } else if (wanted && present && present.weight !== 1) {
      // A draining real server whose endpoint came back, or a weight-0
      // leftover found at startup (#92019, #108319): serve it again.
      steps.addDestinations.push(ipvs({ op: 'updateDestination', service: keyOf(want), destination: withWeight(wanted, 1) }));
    } else if (!wanted && present) {
      const op = removeDestination(want.service.protocol, keyOf(want), present, connections?.get(key));
      if (op) steps.removeDestinations.push(op);
    }
  }
}

/**
 * Graceful termination (GracefulDeleteRS in graceful_termination.go): a
 * real server that leaves is deleted at once when nothing can be cut off —
 * UDP and SCTP (IsRsGracefulTerminationNeeded; #71514: expire_nodest_conn
 * drops their flows on the next packet), or a TCP one whose active and
 * inactive connections, just read, are 0. Otherwise it is quiesced with
 * weight 0 so established connections finish, and deleted once they have
 * (planDrainedDeletions).
 */
function removeDestination(protocol: string, service: BatchOp['service'], present: CurrentDestination, connections: number | undefined): Operation | undefined {
  const destination: DestinationKey = { address: present.address, port: present.port };
  if (protocol !== 'tcp' || connections === 0) return ipvs({ op: 'deleteDestination', service, destination });
  if (present.weight === 0) return undefined; // already draining
  return ipvs({ op: 'updateDestination', service, destination: withWeight(destination, 0) });
}

/**
 * The virtual servers whose connection counts decide the plan: those with
 * a real server being quiesced (weight 0). Reading just these (one
 * destination dump each) and planning again with `connections` turns the
 * idle ones into deletions.
 */
export function gracefulRemovals(ops: readonly Operation[]): Map<string, AddressServiceKey> {
  const out = new Map<string, AddressServiceKey>();
  for (const op of ops) {
    if (op.kind !== 'ipvs' || op.batch.op !== 'updateDestination' || op.batch.destination.weight !== 0) continue;
    const s = op.batch.service;
    if ('address' in s) out.set(virtualServerKey(s), { protocol: s.protocol, address: s.address, port: s.port });
  }
  return out;
}

function serviceDiffers(want: DesiredVirtualServer, have: CurrentVirtualServer): boolean {
  const w = want.service;
  const h = have.service;
  return (
    w.scheduler !== h.scheduler ||
    (w.persistent?.timeout ?? 0) !== (h.persistent?.timeout ?? 0) ||
    Boolean(w.flags?.sched1) !== Boolean(h.flags?.sched1) ||
    Boolean(w.flags?.sched2) !== Boolean(h.flags?.sched2) ||
    Boolean(w.flags?.sched3) !== Boolean(h.flags?.sched3) ||
    Boolean(w.flags?.onePacket) !== Boolean(h.flags?.onePacket)
  );
}

function planAddresses(desired: DesiredState, current: CurrentState, scope: Scope | undefined, steps: Steps): void {
  const keys = scope ? scope.addresses : union(desired.boundAddresses, current.boundAddresses);
  for (const address of sorted(keys)) {
    const want = desired.boundAddresses.has(address);
    const have = current.boundAddresses.has(address);
    if (want && !have) steps.bind.push({ kind: 'address', op: 'bind', device: DUMMY_DEVICE, address });
    // Everything on kube-ipvs0 is ours: addresses no service wants go.
    if (!want && have) steps.unbind.push({ kind: 'address', op: 'unbind', device: DUMMY_DEVICE, address });
  }
}

function planIptables(desired: DesiredState, current: CurrentState, steps: Steps): void {
  for (const family of desired.families) {
    const restore = desired.iptables.get(family);
    if (restore !== undefined && current.iptables.get(family) !== restore) steps.iptables.push({ kind: 'iptables', family, restore });
  }
}

/**
 * The periodic half of graceful termination (kube-proxy's tryDeleteRs,
 * every minute): weight-0 real servers that are no longer wanted and whose
 * connection counts, read from the kernel, have reached zero.
 */
export function planDrainedDeletions(desired: DesiredState, current: CurrentState): Operation[] {
  const ops: Operation[] = [];
  for (const key of sorted(current.virtualServers.keys())) {
    const have = current.virtualServers.get(key)!;
    const wanted = desired.virtualServers.get(key)?.destinations;
    for (const dkey of sorted(have.destinations.keys())) {
      const d = have.destinations.get(dkey)!;
      const idle = d.activeConns !== undefined && (d.activeConns ?? 0) + (d.inactiveConns ?? 0) === 0;
      if (d.weight === 0 && idle && !wanted?.has(dkey)) {
        ops.push(ipvs({ op: 'deleteDestination', service: keyOf(have), destination: { address: d.address, port: d.port } }));
      }
    }
  }
  return ops;
}

function ipvs(batch: BatchOp): Operation {
  return { kind: 'ipvs', batch };
}

function keyOf(vs: { service: { protocol: 'tcp' | 'udp' | 'sctp'; address: string; port: number } }) {
  return { protocol: vs.service.protocol, address: vs.service.address, port: vs.service.port };
}

function withWeight(d: DestinationKey, weight: number) {
  return { address: d.address, port: d.port, weight };
}

function union<T>(a: Iterable<T>, b: Iterable<T>): Set<T> {
  const out = new Set(a);
  for (const x of b) out.add(x);
  return out;
}

function sorted(keys: Iterable<string>): string[] {
  return [...keys].sort(naturalCompare);
}
