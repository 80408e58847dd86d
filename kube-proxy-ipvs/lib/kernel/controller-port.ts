/**
 * The one port between the proxy and the kernel side: what the proxy asks
 * of a controller and what it gets back. The Controller (controller.ts)
 * implements it; so does the proxy tests' fake, which is what keeps the
 * proxy testable without a kernel.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { SocketCounters } from 'ipvs-netlink';
import type { StaleConntrackReport } from './stale-conntrack.js';
import type { Logger } from 'pino';
import type { ServiceChange } from '../desired/service-change.js';
import type { LocalEndpoints } from '../desired/local-endpoints.js';
import type { KnownCounts } from '../desired/known-objects.js';
import type { SchedulingReason } from '../desired/scheduling.js';
import type { EndpointSlice, NodeInfo, ProxyConfig, Service } from '../kubernetes/model.js';
import type { IpsetOp, Operation } from '../plan/kernel-state.js';
import type { IptablesTools } from './iptables-runner.js';
import type { INIT_ONLY, ProxierLines } from './ipvs-proxier-check.js';

export interface ControllerOptions {
  /** A network namespace path (/run/netns/NAME); default: the process's own. */
  netns?: string;
  config: ProxyConfig;
  node: NodeInfo;
  /** Default: silent. */
  logger?: Logger;
  /** Which iptables programs to run; default: the flavour in use here (iptables-flavour.ts), found at start. */
  iptables?: IptablesTools;
  /** Netlink request timeout (ms). */
  timeoutMs?: number;
  /**
   * IPVS connection timeouts in seconds (--ipvs-tcp-timeout,
   * --ipvs-tcpfin-timeout, --ipvs-udp-timeout), set at start; a 0 or a
   * missing one leaves the kernel's (ipvsadm --set semantics).
   */
  ipvsTimeouts?: { tcp?: number; tcpFin?: number; udp?: number };
  /**
   * What kube-proxy's NewProxier says of each family at start
   * (ipvs-proxier-check.ts): whether the configuration named no scheduler
   * (config.scheduler is then rr), and the sync periods; under --init-only,
   * INIT_ONLY, that it returns there. Absent: none of those lines.
   */
  proxierLines?: ProxierLines | typeof INIT_ONLY;
}

export type ControllerFactory = (options: ControllerOptions) => ControllerPort;

export interface ControllerPort {
  /**
   * Opens the kernel handles, writes the kernel settings (sysctls, IPVS
   * timeouts) and adopts what a previous instance left programmed (no
   * flush: established connections keep flowing across a restart). Rejects
   * when IPVS is missing or privileges are lacking.
   */
  start(): Promise<void>;
  /**
   * Returns what the proxy read of the Service before and after: no change
   * to sync when they are the same, or it proxies the Service in no family
   * (kube-proxy's ServiceChangeTracker drops such an event).
   */
  upsertService(svc: Service): ServiceChange;
  /** Only the Service's identity (metadata.namespace and name) is read. Returns what upsertService() does. */
  deleteService(svc: Service): ServiceChange;
  upsertEndpointSlice(slice: EndpointSlice): void;
  /** Only the slice's identity (its name, namespace and Service label) is read. */
  deleteEndpointSlice(slice: EndpointSlice): void;
  /** This node's addresses or labels changed (NodePort addresses, topology): everything is compared at the next sync. */
  setNode(node: NodeInfo): void;
  /** Programs the changes since the last sync (everything after start or a node change). */
  sync(): Promise<SyncResult>;
  /** Reads the kernel back, repairs any drift and writes the kernel settings again (the periodic full sync). */
  resync(): Promise<SyncResult>;
  /** Deletes the real servers left at weight 0 whose connections have ended (graceful termination's second half). */
  drain(): Promise<SyncResult>;
  /** Removes everything an IPVS proxy programs, read from the kernel (--cleanup). */
  cleanup(): Promise<void>;
  counters(): ControllerCounters;
  /** How many Services and EndpointSlices (by address type) the objects given so far make. */
  objectCounts(): KnownCounts;
  /** The Services with a Local traffic policy and their ready endpoints on this node, as the objects given so far say. */
  localEndpoints(): LocalEndpoints;
  /** Closes the handles; the kernel state stays (a restart adopts it). */
  close(): Promise<void>;
}

export type SyncKind = 'full' | 'incremental' | 'resync' | 'drain';

export interface SyncResult {
  kind: SyncKind;
  /** Operations planned, carried out, refused (an ipset op the kernel took in part counts in both); refused ones are retried by the next sync. */
  planned: number;
  applied: number;
  failed: number;
  durationSeconds: number;
  /** The ipset operations the kernel refused, in whole or in part; the other sets, IPVS and addresses went ahead. */
  ipsetFailures: IpsetFailure[];
  /** Whether the rules' restore was refused: an iptables-restore, or the nftables backend's transaction. */
  rulesFailed: boolean;
  /** What this sync cost on each netlink socket: messages sent and received, sendmsg and receive system calls. */
  netlink: NetlinkTraffic;
  /** The stale UDP conntrack entries it deleted, when it changed a UDP service (or was a start or resync). */
  staleConntrack?: StaleConntrackReport;
}

export type NetlinkSocket = 'ipvs' | 'ipset' | 'rtnl' | 'nftables';

/** Per socket: messages and system calls (the sockets' own counters). */
export type NetlinkTraffic = Record<NetlinkSocket, SocketCounters>;

export interface IpsetFailure {
  set: string;
  op: IpsetOp['op'];
  /** Why, as the kernel said it: IPSET_ERR_HASH_FULL (the set reached maxelem), ... */
  code: string;
  message: string;
  /**
   * The entries this operation did not settle: for an add, those not in
   * the kernel; for a del, those still in it. The next sync retries these
   * and only these. Empty for create/destroy.
   */
  entries: string[];
}

/** Operations carried out, by what they program and outcome: ipvs, ipset and address (rtnetlink) go over netlink; iptables is iptables-restore. */
export type OperationCounts = Record<Operation['kind'], { ok: number; failed: number }>;

export interface ControllerCounters {
  /** What is programmed, as the controller knows it. */
  virtualServers: number;
  realServers: number;
  ipsetEntries: number;
  boundAddresses: number;
  /** Operations carried out since start (monotonic). */
  operations: OperationCounts;
  /** iptables-restore runs refused since start, by family (absent with no kernel session yet). */
  iptablesFailedByFamily?: Record<AddressFamily, number>;
  /** ipset operations refused since start, by set and the kernel's code. */
  ipsetFailures: Array<{ set: string; code: string; count: number }>;
  /** Netlink traffic per socket since start (messages, system calls); undefined before the handles are open. */
  netlink: Partial<NetlinkTraffic>;
  /** Syncs since start by kind (full: the first, or after a node change), and the time they took. */
  syncs: Record<SyncKind, number> & { lastDurationSeconds: number; totalDurationSeconds: number };
  /** The last sync, resync or drain pass: its kind and netlink traffic; undefined before the first. */
  lastSync?: { kind: SyncKind; netlink: NetlinkTraffic };
  /** Reports about Services' scheduler annotations since start, by reason (desired/scheduling.ts). */
  schedulerAnnotationProblems?: Record<SchedulingReason, number>;
}
