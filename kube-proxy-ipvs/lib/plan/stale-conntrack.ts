/**
 * Which UDP conntrack entries a sync left pointing at the wrong place, as
 * kube-proxy's conntrack cleanup (pkg/proxy/conntrack/cleanup.go) decides:
 * an entry whose original destination is a UDP service's address and port
 * and whose reply source (where IPVS sent it, address and port) is not one
 * of that service's serving endpoints. UDP has no end of connection, so
 * without this a client that keeps sending from the same port keeps
 * reaching a removed endpoint, or, if it sent while the service had none,
 * the service address itself, until the entry times out.
 *
 * Here the services are the desired UDP virtual servers (ClusterIP,
 * external and load-balancer addresses, and each NodePort on each node
 * address it is served on), and only those a sync changed are looked at:
 * kube-proxy walks every service on every sync. As upstream, an entry that
 * reaches any serving endpoint of the port is kept, whatever the traffic
 * policies and topology chose as real servers (a change to the service
 * does not break a flow), a service with no serving endpoint, or deleted,
 * has every entry deleted (its flows reach pods that are gone: kube-proxy
 * does the same since kubernetes/kubernetes#139629 and #141371; a virtual
 * server dropped for another reason, an address or port, is treated as a
 * deleted one here), and TCP and SCTP are
 * not touched (their connections end, and IPVS's own conntrack handling
 * covers them). Unlike upstream, which matches a service address whatever
 * the port and a NodePort whatever the address (so a flow from the node to
 * a remote host's port of that number went too), an entry is matched by
 * the virtual server's address and port.
 */
import type { ConntrackEntry, ConntrackFamily, ConntrackKey } from 'ipvs-netlink';
import { familyOf } from 'ipvs-netlink/address';
import { endpointKey, virtualServerKey, type DesiredState, type Operation } from './kernel-state.js';

/** A UDP service address whose conntrack entries are checked, with its serving endpoints. */
export interface UdpTarget {
  address: string;
  port: number;
  /** endpointKey() of each serving endpoint */
  endpoints: ReadonlySet<string>;
}

/**
 * Every UDP virtual server, by family, each with its serving endpoints,
 * and those the applied operations deleted, with none: after a start, a
 * full sync or a resync.
 */
export function allUdpTargets(desired: DesiredState, applied: readonly Operation[] = []): Map<ConntrackFamily, UdpTarget[]> {
  const out = targetsOf(desired, desired.virtualServers.keys());
  addDeleted(out, desired, applied);
  return out;
}

/**
 * The UDP virtual servers the applied operations changed, and those of the
 * Services the sync's object changes touched (`touched`: a terminating
 * endpoint that leaves its slice changes no real server, but its entries
 * are stale now), by family, each with its serving endpoints. A UDP
 * virtual server the sync deleted (its Service, port or address gone) is
 * one with no endpoint left: every entry to it is stale, as kube-proxy
 * cleans a deleted UDP Service's entries (a one-way sender would otherwise
 * keep its flow to a pod address that may be someone else's by now).
 */
export function changedUdpTargets(desired: DesiredState, applied: readonly Operation[], touched: Iterable<string> = []): Map<ConntrackFamily, UdpTarget[]> {
  const keys = new Set<string>(touched);
  for (const op of applied) {
    if (op.kind !== 'ipvs' || op.batch.op === 'deleteService' || op.batch.op === 'listDestinations') continue;
    const service = op.batch.service;
    if ('address' in service && service.protocol === 'udp') keys.add(op.key ?? virtualServerKey(service));
  }
  const out = targetsOf(desired, keys);
  addDeleted(out, desired, applied);
  return out;
}

/**
 * The UDP virtual servers the applied operations deleted and the desired
 * state no longer has, each with no endpoint to keep. (One deleted and
 * made again in the same sync keeps its key, and is looked at with its
 * serving endpoints instead: a deleted target never shares its address and
 * port with a live one.)
 */
function addDeleted(into: Map<ConntrackFamily, UdpTarget[]>, desired: DesiredState, applied: readonly Operation[]): void {
  for (const op of applied) {
    if (op.kind !== 'ipvs' || op.batch.op !== 'deleteService') continue;
    const service = op.batch.service;
    if (!('address' in service) || service.protocol !== 'udp') continue;
    if (!desired.virtualServers.has(op.key ?? virtualServerKey(service))) addTarget(into, { address: service.address, port: service.port, endpoints: new Set() });
  }
}

function targetsOf(desired: DesiredState, keys: Iterable<string>): Map<ConntrackFamily, UdpTarget[]> {
  const out = new Map<ConntrackFamily, UdpTarget[]>();
  for (const key of keys) {
    const vs = desired.virtualServers.get(key);
    if (!vs || vs.service.protocol !== 'udp') continue;
    addTarget(out, { address: vs.service.address, port: vs.service.port, endpoints: new Set(vs.serving ?? vs.destinations.map((d) => endpointKey(d.address, d.port))) });
  }
  return out;
}

function addTarget(into: Map<ConntrackFamily, UdpTarget[]>, target: UdpTarget): void {
  const family = familyOf(target.address);
  let list = into.get(family);
  if (!list) into.set(family, (list = []));
  list.push(target);
}

/** The keys of the entries among `entries` (one family's UDP entries) that `targets` say are stale. */
export function staleEntries(entries: readonly ConntrackEntry[], targets: readonly UdpTarget[]): ConntrackKey[] {
  const byAddressPort = new Map<string, ReadonlySet<string>>();
  for (const t of targets) byAddressPort.set(`${t.address}/${t.port}`, t.endpoints);
  const out: ConntrackKey[] = [];
  for (const e of entries) {
    if (e.protonum !== 17 || e.orig.dstPort === undefined) continue;
    const endpoints = byAddressPort.get(`${e.orig.dst}/${e.orig.dstPort}`);
    if (!endpoints || endpoints.has(endpointKey(e.reply.src, e.reply.srcPort))) continue;
    // By the original tuple, zone and id: an entry made anew meanwhile is left alone.
    out.push({ family: e.family, protocol: 'udp', orig: e.orig, zone: e.zone, ...(e.id === undefined ? {} : { id: e.id }) });
  }
  return out;
}
