/**
 * The shapes the planner compares and produces: a desired state, a current
 * state (the kernel as read back, or the mirror of what we programmed) and
 * the operations that turn one into the other. IPVS operations are the
 * client's own BatchOps, so the applier hands them to ipvs.apply() as-is.
 */
import type { AddressServiceKey, BatchOp, DestinationKey, ServiceSpec } from 'ipvs-netlink';
import { dottedQuadValue, naturalCompare, type AddressFamily } from 'ipvs-netlink/address';
import type { NftTableSpec } from '../desired/nftables-table.js';

/** The set types kube-proxy's IPVS mode uses. */
export type IpsetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

/** How `ipset create` is asked for a set. */
export interface SetCreateOptions {
  family: AddressFamily;
  hashSize?: number;
  maxElem?: number;
  range?: string;
}

/** The dummy device kube-proxy binds service addresses to. */
export const DUMMY_DEVICE = 'kube-ipvs0';

/** An address-keyed virtual service, always with its scheduler. */
export type VirtualServerSpec = AddressServiceKey & ServiceSpec & { scheduler: string };

export interface DesiredVirtualServer {
  /** virtualServerKey(service), made once: the planner and the mirror use this string rather than make their own. */
  key: string;
  service: VirtualServerSpec;
  /**
   * The real servers, in destination order (compareDestinations), no two
   * alike. A sorted list rather than a map: the planner walks it against
   * the current state's, and 100,000 real servers cost a pointer and one
   * small object each, which the operations that add them and the mirror
   * that records them share.
   */
  destinations: readonly DesiredDestination[];
  /**
   * UDP only: every serving endpoint of the service port (endpointKey(): address and port),
   * whatever the traffic policies and topology chose as destinations. The
   * conntrack entries that reach one of them are kept (stale-conntrack.ts).
   */
  serving?: readonly string[];
}

/**
 * A serving endpoint as the stale-conntrack cleanup knows it: address and
 * port. An entry whose reply comes from a serving endpoint's address but
 * another port (the Service's targetPort changed, the pod stayed) is
 * stale, as kube-proxy judges it since 1.34 (kubernetes#130542).
 */
export function endpointKey(address: string, port: number | undefined): string {
  return `${address}/${port ?? ''}`;
}

/** A wanted real server: every one is wanted with weight 1. Never changed once made (it is shared). */
export interface DesiredDestination extends DestinationKey {
  readonly weight: 1;
}

export interface IpsetState {
  type: IpsetType;
  options: SetCreateOptions;
  entries: ReadonlySet<string>;
}

export interface DesiredState {
  families: readonly AddressFamily[];
  /** virtualServerKey → virtual server */
  virtualServers: ReadonlyMap<string, DesiredVirtualServer>;
  /** set name → set; every kube-proxy set of every served family, empty or not. */
  ipsets: ReadonlyMap<string, IpsetState>;
  boundAddresses: ReadonlySet<string>;
  /** family → iptables-restore (ip6tables-restore) input; empty with the nftables backend. */
  iptables: ReadonlyMap<AddressFamily, string>;
  /**
   * With the nftables backend: family → its table. The sets' elements are
   * the entries of `ipsets` (which then also has the out-drop set).
   */
  nftables?: ReadonlyMap<AddressFamily, NftTableSpec & { fingerprint: string }>;
}

export interface CurrentDestination extends DestinationKey {
  weight: number;
  /** Known when read from the kernel; lets drained real servers be deleted. */
  activeConns?: number;
  inactiveConns?: number;
}

export interface CurrentVirtualServer {
  service: AddressServiceKey & Partial<ServiceSpec>;
  /** In destination order (compareDestinations), no two alike. */
  destinations: readonly CurrentDestination[];
}

export interface CurrentState {
  virtualServers: ReadonlyMap<string, CurrentVirtualServer>;
  ipsets: ReadonlyMap<string, { type: IpsetType; entries: ReadonlySet<string> }>;
  boundAddresses: ReadonlySet<string>;
  /** The last payload written per family; missing when unknown (after a restart). */
  iptables: ReadonlyMap<AddressFamily, string>;
  /** The nftables backend's tables, by family, as their fingerprints; a table missing or unknown is absent. */
  nftables?: ReadonlyMap<AddressFamily, string>;
}

export type IpsetOp =
  | { kind: 'ipset'; op: 'create'; set: string; type: IpsetType; options: SetCreateOptions }
  | { kind: 'ipset'; op: 'add' | 'del'; set: string; entries: string[] }
  | { kind: 'ipset'; op: 'destroy'; set: string };

export interface IpvsOp {
  kind: 'ipvs';
  batch: BatchOp;
  /** virtualServerKey(batch.service) when the planner has it: the mirror records under this very string. */
  key?: string;
}

export interface AddressOp {
  kind: 'address';
  op: 'bind' | 'unbind';
  device: typeof DUMMY_DEVICE;
  address: string;
}

export interface IptablesOp {
  kind: 'iptables';
  family: AddressFamily;
  /** Input for `iptables-restore --noflush --counters` (ip6tables-restore for inet6). */
  restore: string;
}

/**
 * The nftables backend's changes; the applier makes one transaction of
 * every one of them in a sync. Entries are in ipset form under the ipset
 * names, as in IpsetOp.
 */
export type NftablesOp =
  /** Creates the family's table (replacing one that differs) with these entries, in one go. */
  | { kind: 'nftables'; op: 'table'; family: AddressFamily; table: NftTableSpec & { fingerprint: string }; entries: ReadonlyMap<string, readonly string[]> }
  | { kind: 'nftables'; op: 'add' | 'del'; family: AddressFamily; set: string; entries: string[] }
  | { kind: 'nftables'; op: 'deleteTable'; family: AddressFamily };

export type Operation = IpsetOp | IpvsOp | AddressOp | IptablesOp | NftablesOp;

// Keys are built with join(), which makes one flat string: a template literal makes a tree of
// string pieces (a "cons string", twice the memory) that stays that way as a long-lived map key.

export function virtualServerKey(s: AddressServiceKey): string {
  return [s.protocol, s.address, s.port].join('/');
}

export function destinationKey(d: DestinationKey): string {
  return [d.address, d.port].join('/');
}

/**
 * The order of real servers everywhere: destinationKey's natural order
 * (10.0.0.2/80 before 10.0.0.10/80), computed without building keys for
 * dotted quads, where it is the order of the address's value, then port.
 */
export function compareDestinations(a: DestinationKey, b: DestinationKey): number {
  const x = dottedQuadValue(a.address);
  const y = dottedQuadValue(b.address);
  if (x >= 0 && y >= 0) return x - y || a.port - b.port;
  return a.address === b.address ? a.port - b.port : naturalCompare(destinationKey(a), destinationKey(b));
}

/** Where `d` is in a list in destination order: its index, or -(insertion point) - 1 when absent. */
export function findDestination(list: readonly DestinationKey[], d: DestinationKey): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareDestinations(list[mid], d);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

export function emptyCurrentState(): CurrentState {
  return { virtualServers: new Map(), ipsets: new Map(), boundAddresses: new Set(), iptables: new Map() };
}

/** Whether two virtual servers differ in what the proxy sets besides their key: scheduler, persistence timeout, flags. */
export function serviceOptionsDiffer(w: Partial<ServiceSpec>, h: Partial<ServiceSpec>): boolean {
  return (
    w.scheduler !== h.scheduler ||
    (w.persistent?.timeout ?? 0) !== (h.persistent?.timeout ?? 0) ||
    Boolean(w.flags?.sched1) !== Boolean(h.flags?.sched1) ||
    Boolean(w.flags?.sched2) !== Boolean(h.flags?.sched2) ||
    Boolean(w.flags?.sched3) !== Boolean(h.flags?.sched3) ||
    Boolean(w.flags?.onePacket) !== Boolean(h.flags?.onePacket)
  );
}
