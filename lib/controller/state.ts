/**
 * The shapes the planner compares and produces: a desired state, a current
 * state (the kernel as read back, or the mirror of what we programmed) and
 * the operations that turn one into the other. IPVS operations are the
 * client's own BatchOps, so the applier hands them to ipvs.apply() as-is.
 */
import type { AddressServiceKey, BatchOp, DestinationKey, ServiceSpec } from '../ipvs/types.js';
import type { IpsetType, SetCreateOptions } from './ipsets.js';
import type { AddressFamily } from './net.js';

/** The dummy device kube-proxy binds service addresses to. */
export const DUMMY_DEVICE = 'kube-ipvs0';

/** An address-keyed virtual service, always with its scheduler. */
export type VirtualServerSpec = AddressServiceKey & ServiceSpec & { scheduler: string };

export interface DesiredVirtualServer {
  service: VirtualServerSpec;
  /** destinationKey → real server; every one is wanted with weight 1. */
  destinations: ReadonlyMap<string, DestinationKey>;
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
  /** family → iptables-restore (ip6tables-restore) input. */
  iptables: ReadonlyMap<AddressFamily, string>;
}

export interface CurrentDestination extends DestinationKey {
  weight: number;
  /** Known when read from the kernel; lets drained real servers be deleted. */
  activeConns?: number;
  inactiveConns?: number;
}

export interface CurrentVirtualServer {
  service: AddressServiceKey & Partial<ServiceSpec>;
  destinations: ReadonlyMap<string, CurrentDestination>;
}

export interface CurrentState {
  virtualServers: ReadonlyMap<string, CurrentVirtualServer>;
  ipsets: ReadonlyMap<string, { type: IpsetType; entries: ReadonlySet<string> }>;
  boundAddresses: ReadonlySet<string>;
  /** The last payload written per family; missing when unknown (after a restart). */
  iptables: ReadonlyMap<AddressFamily, string>;
}

export type IpsetOp =
  | { kind: 'ipset'; op: 'create'; set: string; type: IpsetType; options: SetCreateOptions }
  | { kind: 'ipset'; op: 'add' | 'del'; set: string; entries: string[] }
  | { kind: 'ipset'; op: 'destroy'; set: string };

export interface IpvsOp {
  kind: 'ipvs';
  batch: BatchOp;
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

export type Operation = IpsetOp | IpvsOp | AddressOp | IptablesOp;

export function virtualServerKey(s: AddressServiceKey): string {
  return `${s.protocol}/${s.address}/${s.port}`;
}

export function destinationKey(d: DestinationKey): string {
  return `${d.address}/${d.port}`;
}

export function emptyCurrentState(): CurrentState {
  return { virtualServers: new Map(), ipsets: new Map(), boundAddresses: new Set(), iptables: new Map() };
}
