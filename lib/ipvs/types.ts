/**
 * The public IPVS types. A service's identity (ServiceKey) and what the
 * caller asks for (ServiceSpec) are kept apart from what the kernel reports
 * about it (Service: counters and the values it settled on). What a read
 * returns is a valid argument to the matching write: a Service is a
 * ServiceSpec, a Destination a DestinationSpec, a Daemon a DaemonConfig.
 */
import type { NetlinkError } from '../netlink/errors.js';

/** A virtual service's transport protocol. */
export type Protocol = 'tcp' | 'udp' | 'sctp';
/** An address family by the names `ip` uses: IPv4 or IPv6. */
export type Family = 'inet' | 'inet6';
/**
 * How packets reach a destination, by ipvsadm's names: masquerading (NAT),
 * local node, IP tunnelling, direct routing, bypass.
 */
export type ForwardMethod = 'masq' | 'local' | 'tunnel' | 'route' | 'bypass';
/** The encapsulation of tunnel forwarding: IP-in-IP, GUE or GRE. */
export type TunnelType = 'ipip' | 'gue' | 'gre';
/** Tunnel checksum handling: none, checksum, or remote checksum offload. */
export type TunnelFlag = 'nocsum' | 'csum' | 'remcsum';

/** A virtual service by protocol, address and port. */
export interface AddressServiceKey {
  /** The transport protocol. */
  protocol: Protocol;
  /** The virtual address, IPv4 or IPv6. */
  address: string;
  /** The virtual port (0 for a service on every port, with persistence). */
  port: number;
}

/** A virtual service by firewall mark. */
export interface FwmarkServiceKey {
  /** The firewall mark (1 to 2^32 - 1) packets carry to reach the service. */
  fwmark: number;
  /** The family of the packets it takes. */
  family: Family;
}

/** A virtual service's identity: by address, or by firewall mark. */
export type ServiceKey = AddressServiceKey | FwmarkServiceKey;

/** A service's flags; one left out is off. */
export interface ServiceFlags {
  /** One-packet scheduling (`ipvsadm -o`): each UDP datagram is scheduled on its own. */
  onePacket?: boolean;
  /** Scheduler flag 1 (for `sh`: fallback). */
  sched1?: boolean;
  /** Scheduler flag 2 (for `sh`: hash the source port too). */
  sched2?: boolean;
  /** Scheduler flag 3 (no scheduler in the kernel reads it today). */
  sched3?: boolean;
}

/** Persistence (`ipvsadm -p`): a client's connections go to the same destination. */
export interface Persistence {
  /** Seconds. */
  timeout: number;
  /** IPv4: a mask ("255.255.255.0") or prefix length; IPv6: a prefix length. */
  netmask?: string | number;
}

/** What a service is asked to be, beyond its identity. */
export interface ServiceOptions {
  /** Scheduler module name; `wlc` when left out, as ipvsadm does. */
  scheduler?: string;
  /** Persistence; none when left out. */
  persistent?: Persistence;
  /** Flags; all off when left out. */
  flags?: ServiceFlags;
  /** Persistence engine, e.g. `sip`. */
  peName?: string;
}

/** A service to add or update: its identity and options. */
export type ServiceSpec = ServiceKey & ServiceOptions;

/** Counters as the kernel reports them (64-bit). */
export interface Stats {
  /** Connections scheduled. */
  conns: bigint;
  /** Packets in (client to server). */
  inPackets: bigint;
  /** Packets out (server to client). */
  outPackets: bigint;
  /** Bytes in. */
  inBytes: bigint;
  /** Bytes out. */
  outBytes: bigint;
  /** Connections per second (the kernel's estimate). */
  cps: bigint;
  /** Packets in per second. */
  inPps: bigint;
  /** Packets out per second. */
  outPps: bigint;
  /** Bytes in per second. */
  inBps: bigint;
  /** Bytes out per second. */
  outBps: bigint;
}

/** What the kernel reports about a service, beyond its identity. */
export interface ServiceState {
  /** The service's address family. */
  family: Family;
  /** The scheduler module. */
  scheduler: string;
  /** Every flag, on or off. */
  flags: Required<ServiceFlags>;
  /** Persistence, when on: the netmask as text for IPv4, a prefix length for IPv6. */
  persistent?: {
    /** Seconds a client keeps its destination (`ipvsadm -p`). */
    timeout: number;
    /** Clients within one network of this mask share a destination: text for IPv4 (`255.255.255.255`: each address alone), a prefix length for IPv6. */
    netmask: string | number;
  };
  /** The persistence engine, when one is set. */
  peName?: string;
  /** The service's counters (left out by `dump({ stats: false })`). */
  stats: Stats;
}

/** A service as the kernel reports it. */
export type Service = (AddressServiceKey & ServiceState) | (FwmarkServiceKey & ServiceState);

/** A destination (real server) of a service, by address and port. */
export interface DestinationKey {
  /** The real server's address; of the service's family unless forwarding is `tunnel`. */
  address: string;
  /** The real server's port. */
  port: number;
}

/** Tunnel forwarding's encapsulation. */
export interface TunnelSpec {
  /** The encapsulation. */
  type: TunnelType;
  /** UDP port for GUE (required there). */
  port?: number;
  /** Checksums; `nocsum` when left out. */
  flags?: TunnelFlag;
}

/** A destination to add or update: its identity and options. */
export interface DestinationSpec extends DestinationKey {
  /** 1 when left out. */
  weight?: number;
  /** `masq` when left out. */
  forward?: ForwardMethod;
  /** Connections above which the destination takes no new ones (0: no limit). */
  upperThreshold?: number;
  /** Connections below which an overloaded destination takes new ones again. */
  lowerThreshold?: number;
  /** Tunnel forwarding's encapsulation (with `forward: 'tunnel'` only). */
  tunnel?: TunnelSpec;
}

/** A destination (real server) as the kernel reports it. */
export interface Destination extends DestinationKey {
  /** The destination's address family. */
  family: Family;
  /** Its weight. */
  weight: number;
  /** How packets reach it. */
  forward: ForwardMethod;
  /** Connections above which it takes no new ones (0: no limit). */
  upperThreshold: number;
  /** Connections below which it takes new ones again. */
  lowerThreshold: number;
  /** Tunnel encapsulation, for tunnel forwarding. */
  tunnel?: Required<TunnelSpec>;
  /** Active connections (ipvsadm's ActiveConn). */
  activeConns: number;
  /** Inactive connections (ipvsadm's InActConn). */
  inactiveConns: number;
  /** Persistence templates pointing at it. */
  persistentConns: number;
  /** Its counters (left out by `dump({ stats: false })`). */
  stats: Stats;
}

/** The destinations dump() returns with each service. */
export interface WithDestinations<D> {
  /** The service's destinations, as the kernel holds them. */
  destinations: D[];
}

/** A service with its destinations: what dump() returns. */
export type ServiceWithDestinations = Service & WithDestinations<Destination>;

/** T without its counters (what `dump({ stats: false })` returns). */
export type WithoutStats<T> = T extends unknown ? Omit<T, 'stats'> : never;

/** A service and its destinations without counters: the rules and the connection counts. */
export type ServiceRules = WithoutStats<Service> & WithDestinations<WithoutStats<Destination>>;

/** What dump() reads. */
export interface DumpOptions {
  /**
   * Read the counters (64-bit, as BigInts). `false` leaves them out, for
   * callers that need the rules and connection counts only (a proxy's
   * resync): ten BigInts fewer per service and destination. Default true.
   */
  stats?: boolean;
}

/** The IPVS module as the kernel reports it. */
export interface Info {
  /** "1.2.1" */
  version: string;
  /** The size of the connection hash table (ip_vs_conn_tab_bits). */
  connTableSize: number;
}

/** Connection timeouts, in seconds (`ipvsadm --set tcp tcpfin udp`). */
export interface Timeouts {
  /** Established TCP connections. */
  tcp: number;
  /** TCP connections after a FIN. */
  tcpFin: number;
  /** UDP. */
  udp: number;
}

/** The role of a connection synchronisation daemon. */
export type DaemonState = 'master' | 'backup';

/** A connection synchronisation daemon to start (`ipvsadm --start-daemon`). */
export interface DaemonConfig {
  /** Its role. */
  state: DaemonState;
  /** Multicast interface. */
  interface: string;
  /** The sync id (0 to 255) that tells clusters apart; 0 when left out. */
  syncId?: number;
  /** The largest sync message, in bytes; the kernel's default when left out. */
  maxLen?: number;
  /** The multicast group; the kernel's default when left out. */
  group?: string;
  /** The UDP port; the kernel's default when left out. */
  port?: number;
  /** The multicast TTL; the kernel's default when left out. */
  ttl?: number;
}

/** A running sync daemon as the kernel reports it. */
export interface Daemon {
  /** Its role. */
  state: DaemonState;
  /** Multicast interface. */
  interface: string;
  /** The sync id. */
  syncId: number;
  /** The largest sync message, in bytes. */
  maxLen?: number;
  /** The multicast group. */
  group?: string;
  /** The UDP port. */
  port?: number;
  /** The multicast TTL. */
  ttl?: number;
}

/** Adds or updates a service (as addService / updateService). */
export interface ServiceOp {
  /** What to do. */
  op: 'addService' | 'updateService';
  /** The service. */
  service: ServiceSpec;
}

/** Deletes a service (as deleteService). */
export interface DeleteServiceOp {
  /** What to do. */
  op: 'deleteService';
  /** The service. */
  service: ServiceKey;
}

/** Adds or updates a destination (as addDestination / updateDestination). */
export interface DestinationOp {
  /** What to do. */
  op: 'addDestination' | 'updateDestination';
  /** The service it belongs to. */
  service: ServiceKey;
  /** The destination. */
  destination: DestinationSpec;
}

/** Removes a destination (as deleteDestination). */
export interface DeleteDestinationOp {
  /** What to do. */
  op: 'deleteDestination';
  /** The service it belongs to. */
  service: ServiceKey;
  /** The destination. */
  destination: DestinationKey;
}

/**
 * A read in the middle of changes: the service's destinations as the
 * kernel holds them once the ops before it are applied (the same
 * conversation, no extra round trip). A missing service fails with ESRCH,
 * as listDestinations() does.
 */
export interface ListDestinationsOp {
  /** What to do. */
  op: 'listDestinations';
  /** The service whose destinations to read. */
  service: ServiceKey;
}

/** One op of an apply() batch. */
export type BatchOp = ServiceOp | DeleteServiceOp | DestinationOp | DeleteDestinationOp | ListDestinationsOp;

/** An op that succeeded. */
export interface BatchSuccess {
  /** It succeeded. */
  ok: true;
  /** For a `listDestinations` op: what it read. */
  destinations?: Destination[];
}

/** An op the kernel refused, or whose answer the conversation lost. */
export interface BatchFailure {
  /** It failed. */
  ok: false;
  /** Why: the errno, the op's name as `operation`, and the op's service (and destination) as `subject`. */
  error: NetlinkError;
}

/** One op's outcome, in the order of the ops. */
export type BatchResult = BatchSuccess | BatchFailure;

export type { OpenOptions } from '../netlink/client.js';
