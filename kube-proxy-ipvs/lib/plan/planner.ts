/**
 * (desired, current) → the ordered operations that make current desired.
 * Pure. With a Scope it looks only at the keys an update touched, so an
 * incremental change costs the size of the change, not of the cluster;
 * without one it compares everything (resync, restart adoption, drift).
 */
import type { AddressServiceKey, BatchOp, DestinationKey } from 'ipvs-netlink';
import type { Scope } from './scope.js';
import { planNftables } from './nftables-plan.js';
import { cidrContains, familyOf, naturalCompare, parseCidr, type Cidr } from 'ipvs-netlink/address';
import type { CurrentDestination, CurrentState, CurrentVirtualServer, DesiredState, DesiredVirtualServer, Operation } from './kernel-state.js';
import { compareDestinations, destinationKey, DUMMY_DEVICE, findDestination, serviceOptionsDiffer, virtualServerKey } from './kernel-state.js';

export interface PlanOptions {
  /** Limit the comparison to these keys (an incremental update). */
  scope?: Scope;
  /** --ipvs-exclude-cidrs: virtual servers there that we do not want are someone else's; never removed. */
  excludeCIDRs?: readonly string[];
  /**
   * Connection counts (active + inactive) just read from the kernel:
   * virtualServerKey → destinationKey → count. An unwanted TCP real server
   * already at weight 0 with a count of 0 here is deleted; one still
   * serving is quiesced at weight 0 whatever its count (see
   * removeDestination()).
   */
  connections?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/**
 * Operations come out in an order that never opens a gap: sets and their
 * entries before the rules and addresses that use them; new virtual and
 * real servers before addresses are bound (a bound VIP with no virtual
 * server would answer from the host); iptables; then removals, addresses
 * first, ipset entries last (KUBE-IPVS-FILTER rejects a bound address
 * missing from the sets). The nftables backend's changes, deletions too,
 * all go where the entries are added: one transaction per sync, as
 * kube-proxy changes its ipsets all at once before it touches IPVS.
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
  // With the nftables backend its table takes the place of the ipsets and the iptables rules.
  if (desired.nftables) steps.addEntries.push(...planNftables(desired, current, options.scope));
  else planIpsets(desired, current, options.scope, steps);
  planVirtualServers(desired, current, options.scope, excluded, options.connections, steps);
  planAddresses(desired, current, options.scope, steps);
  if (!desired.nftables && (!options.scope || options.scope.iptables)) planIptables(desired, current, steps);
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
    else if (have && isOurs(have, desired, excluded)) steps.deleteServices.push(ipvs({ op: 'deleteService', service: keyOf(have) }, key));
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
  steps.addServices.push(ipvs({ op: 'addService', service: want.service }, want.key));
  // One service key object for all its real servers' operations (the client only reads it).
  const service = keyOf(want);
  for (const destination of want.destinations) steps.addDestinations.push(ipvs({ op: 'addDestination', service, destination }, want.key));
}

/** Both lists are in destination order: one walk finds what to add, serve again and remove, in that order. */
function syncVirtualServer(want: DesiredVirtualServer, have: CurrentVirtualServer, connections: ReadonlyMap<string, number> | undefined, steps: Steps): void {
  if (serviceOptionsDiffer(want.service, have.service)) steps.addServices.push(ipvs({ op: 'updateService', service: want.service }, want.key));
  const w = want.destinations;
  const h = have.destinations;
  let service: ReturnType<typeof keyOf> | undefined;
  for (let i = 0, j = 0; i < w.length || j < h.length; ) {
    const order = i === w.length ? 1 : j === h.length ? -1 : compareDestinations(w[i], h[j]);
    if (order < 0) {
      steps.addDestinations.push(ipvs({ op: 'addDestination', service: (service ??= keyOf(want)), destination: w[i++] }, want.key));
    } else if (order > 0) {
      const present = h[j++];
      const op = removeDestination(want.service.protocol, (service ??= keyOf(want)), present, connections?.get(destinationKey(present)), want.key);
      if (op) steps.removeDestinations.push(op);
    } else {
      // A draining real server whose endpoint came back, or a weight-0
      // leftover found at startup (#92019, #108319): serve it again.
      if (h[j].weight !== 1) steps.addDestinations.push(ipvs({ op: 'updateDestination', service: (service ??= keyOf(want)), destination: w[i] }, want.key));
      i++;
      j++;
    }
  }
}

/**
 * Graceful termination (GracefulDeleteRS in graceful_termination.go): a
 * real server that leaves is deleted at once when nothing can be cut off —
 * UDP and SCTP (IsRsGracefulTerminationNeeded; #71514: expire_nodest_conn
 * drops their flows on the next packet). A TCP one is quiesced with weight
 * 0 first, whatever its connection count: a count read while it can still
 * be scheduled is stale by the time a delete lands (kube-proxy reads, then
 * deletes, and a connection opened in between is cut off by
 * expire_nodest_conn). At weight 0 it gets no new connections, so a count
 * read afterwards holds: the controller reads it right after quiescing
 * (gracefulRemovals) and deletes the idle ones (planDrainedDeletions); one
 * already at weight 0 with a count of 0 in `connections` goes now.
 */
function removeDestination(protocol: string, service: BatchOp['service'], present: CurrentDestination, connections: number | undefined, key: string): Operation | undefined {
  const destination: DestinationKey = { address: present.address, port: present.port };
  if (protocol !== 'tcp') return ipvs({ op: 'deleteDestination', service, destination }, key);
  if (present.weight !== 0) return ipvs({ op: 'updateDestination', service, destination: withWeight(destination, 0) }, key);
  if (connections === 0) return ipvs({ op: 'deleteDestination', service, destination }, key);
  return undefined; // draining
}

/**
 * The virtual servers with a real server these operations quiesce (weight
 * 0). Once the operations are applied, reading just these (one destination
 * dump each) and planDrainedDeletions() turns the idle ones into deletions.
 */
export function gracefulRemovals(ops: readonly Operation[]): Map<string, AddressServiceKey> {
  const out = new Map<string, AddressServiceKey>();
  for (const op of ops) {
    if (op.kind !== 'ipvs' || op.batch.op !== 'updateDestination' || op.batch.destination.weight !== 0) continue;
    const s = op.batch.service;
    if ('address' in s) out.set(op.key ?? virtualServerKey(s), { protocol: s.protocol, address: s.address, port: s.port });
  }
  return out;
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
    const wanted = desired.virtualServers.get(key)?.destinations ?? [];
    for (const d of have.destinations) {
      const idle = d.activeConns !== undefined && (d.activeConns ?? 0) + (d.inactiveConns ?? 0) === 0;
      if (d.weight === 0 && idle && findDestination(wanted, d) < 0) {
        ops.push(ipvs({ op: 'deleteDestination', service: keyOf(have), destination: { address: d.address, port: d.port } }, key));
      }
    }
  }
  return ops;
}

function ipvs(batch: BatchOp, key?: string): Operation {
  return key === undefined ? { kind: 'ipvs', batch } : { kind: 'ipvs', batch, key };
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
