/**
 * The public IPVS types. A service's identity (ServiceKey) and what the
 * caller asks for (ServiceSpec) are kept apart from what the kernel reports
 * about it (Service: counters and the values it settled on).
 */

export type Protocol = 'tcp' | 'udp' | 'sctp';
export type Family = 'inet' | 'inet6';
export type ForwardMethod = 'masq' | 'local' | 'tunnel' | 'route' | 'bypass';
export type TunnelType = 'ipip' | 'gue' | 'gre';
export type TunnelFlag = 'nocsum' | 'csum' | 'remcsum';

/** A virtual service by protocol, address and port. */
export interface AddressServiceKey {
  protocol: Protocol;
  address: string;
  port: number;
}

/** A virtual service by firewall mark. */
export interface FwmarkServiceKey {
  fwmark: number;
  family: Family;
}

export type ServiceKey = AddressServiceKey | FwmarkServiceKey;

export interface ServiceFlags {
  onePacket?: boolean;
  /** Scheduler flag 1 (for `sh`: fallback). */
  sched1?: boolean;
  /** Scheduler flag 2 (for `sh`: hash the source port too). */
  sched2?: boolean;
  sched3?: boolean;
}

export interface Persistence {
  /** Seconds. */
  timeout: number;
  /** IPv4: a mask ("255.255.255.0") or prefix length; IPv6: a prefix length. */
  netmask?: string | number;
}

export interface ServiceOptions {
  /** Scheduler module name; `wlc` when left out, as ipvsadm does. */
  scheduler?: string;
  persistent?: Persistence;
  flags?: ServiceFlags;
  /** Persistence engine, e.g. `sip`. */
  peName?: string;
}

export type ServiceSpec = ServiceKey & ServiceOptions;

/** Counters as the kernel reports them (64-bit). */
export interface Stats {
  conns: bigint;
  inPackets: bigint;
  outPackets: bigint;
  inBytes: bigint;
  outBytes: bigint;
  cps: bigint;
  inPps: bigint;
  outPps: bigint;
  inBps: bigint;
  outBps: bigint;
}

interface ServiceState {
  family: Family;
  scheduler: string;
  flags: Required<ServiceFlags>;
  persistent?: { timeout: number; netmask: string | number };
  peName?: string;
  stats: Stats;
}

/** A service as the kernel reports it. */
export type Service = (AddressServiceKey & ServiceState) | (FwmarkServiceKey & ServiceState);

export interface DestinationKey {
  address: string;
  port: number;
}

export interface TunnelSpec {
  type: TunnelType;
  /** UDP port for GUE (required there). */
  port?: number;
  flags?: TunnelFlag;
}

export interface DestinationSpec extends DestinationKey {
  /** 1 when left out. */
  weight?: number;
  /** `masq` when left out. */
  forward?: ForwardMethod;
  upperThreshold?: number;
  lowerThreshold?: number;
  tunnel?: TunnelSpec;
}

/** A destination (real server) as the kernel reports it. */
export interface Destination extends DestinationKey {
  family: Family;
  weight: number;
  forward: ForwardMethod;
  upperThreshold: number;
  lowerThreshold: number;
  tunnel?: Required<TunnelSpec>;
  activeConns: number;
  inactiveConns: number;
  persistentConns: number;
  stats: Stats;
}

export type ServiceWithDestinations = Service & { destinations: Destination[] };

/** T without its counters (what `dump({ stats: false })` returns). */
export type WithoutStats<T> = T extends unknown ? Omit<T, 'stats'> : never;

/** A service and its destinations without counters: the rules and the connection counts. */
export type ServiceRules = WithoutStats<Service> & { destinations: Array<WithoutStats<Destination>> };

export interface DumpOptions {
  /**
   * Read the counters (64-bit, as BigInts). `false` leaves them out, for
   * callers that need the rules and connection counts only (a proxy's
   * resync): ten BigInts fewer per service and destination. Default true.
   */
  stats?: boolean;
}

export interface Info {
  /** "1.2.1" */
  version: string;
  connTableSize: number;
}

export interface Timeouts {
  tcp: number;
  tcpFin: number;
  udp: number;
}

export type DaemonState = 'master' | 'backup';

export interface DaemonConfig {
  state: DaemonState;
  /** Multicast interface. */
  interface: string;
  syncId?: number;
  maxLen?: number;
  group?: string;
  port?: number;
  ttl?: number;
}

export interface Daemon {
  state: DaemonState;
  interface: string;
  syncId: number;
  maxLen?: number;
  group?: string;
  port?: number;
  ttl?: number;
}

export type BatchOp =
  | { op: 'addService' | 'updateService'; service: ServiceSpec }
  | { op: 'deleteService'; service: ServiceKey }
  | { op: 'addDestination' | 'updateDestination'; service: ServiceKey; destination: DestinationSpec }
  | { op: 'deleteDestination'; service: ServiceKey; destination: DestinationKey };

export type BatchResult = { ok: true } | { ok: false; error: import('../netlink/errors.js').NetlinkError };

export type { OpenOptions } from '../netlink/client.js';
