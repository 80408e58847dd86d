/**
 * What the proxy needs from the kernel-facing controller, and nothing more.
 * The proxy is written against this port so it can be tested with a fake
 * and so the controller's own API can evolve behind one adapter
 * (kernel-controller.ts).
 */
import type { EndpointSlice, Node, NodeInfo, ProxyConfig, Service } from '../kubernetes/model.js';
import type { Logger } from 'pino';

export interface ControllerCounters {
  /** IPVS virtual servers currently programmed. */
  virtualServers: number;
  /** IPVS real servers currently programmed (all virtual servers). */
  realServers: number;
  /** ipset entries currently programmed (all sets). */
  ipsetEntries: number;
  /**
   * Operations carried out since start, by what they program and outcome
   * (monotonic): ipvs, ipset and address (rtnetlink) go over netlink;
   * iptables is iptables-restore.
   */
  operations: Record<'ipvs' | 'ipset' | 'address' | 'iptables', { ok: number; failed: number }>;
  /** ipset operations refused since start, by set and kernel code (from the sync results). */
  ipsetFailures?: Array<{ set: string; code: string; count: number }>;
  /** Netlink traffic since start, per socket: messages and system calls (monotonic). */
  netlink?: Partial<Record<NetlinkSocket, NetlinkCounters>>;
  /** Syncs since start, by kind: full (the first, or after a node change), incremental, resync, drain. */
  syncs?: Record<SyncKind, number>;
  /** The last sync, resync or drain pass: its kind and what it cost on each socket. */
  lastSync?: { kind: SyncKind; netlink: Record<NetlinkSocket, NetlinkCounters> };
}

export type NetlinkSocket = 'ipvs' | 'ipset' | 'rtnl';
export type SyncKind = 'full' | 'incremental' | 'resync' | 'drain';

/** One netlink socket's counters (the addon's own). */
export interface NetlinkCounters {
  messagesSent: number;
  messagesReceived: number;
  sendmsgCalls: number;
  recvCalls: number;
}

export interface SyncReport {
  /** Operations planned, carried out, refused (refused ones are retried by the next sync). */
  planned: number;
  applied: number;
  failed: number;
  /** What the sync cost on each netlink socket, when the controller counts it. */
  netlink?: Record<NetlinkSocket, NetlinkCounters>;
}

export interface ControllerPort {
  /**
   * Opens the kernel handles and adopts what a previous instance left
   * programmed (no flush: established connections keep flowing across a
   * restart). Rejects when IPVS is missing or privileges are lacking.
   */
  start(): Promise<void>;
  upsertService(svc: Service): void;
  deleteService(svc: Service): void;
  upsertEndpointSlice(slice: EndpointSlice): void;
  deleteEndpointSlice(slice: EndpointSlice): void;
  /** This node's addresses or labels changed (topology, NodePort addresses). */
  setNode(node: NodeInfo): void;
  /** Applies the pending changes (incremental). */
  sync(): Promise<SyncReport>;
  /** Reads the kernel back and repairs any drift (the periodic full sync). */
  resync(): Promise<SyncReport>;
  /** Deletes real servers left at weight 0 whose connections have drained. */
  drain(): Promise<SyncReport>;
  /** Removes everything the proxy programs (--cleanup). */
  cleanup(): Promise<void>;
  counters(): ControllerCounters;
  /** Closes handles; leaves the kernel state in place. */
  close(): Promise<void>;
}

export interface ControllerInit {
  node: NodeInfo;
  config: ProxyConfig;
  /** --netns: the namespace to program. */
  netns?: string;
  /** ipvsadm --set values in seconds; 0 leaves the kernel's. */
  timeouts: { tcp: number; tcpFin: number; udp: number };
  logger: Logger;
}

export type ControllerFactory = (init: ControllerInit) => ControllerPort;

/** Objects as the sources deliver them. */
export type K8sObject = Service | EndpointSlice | Node;
