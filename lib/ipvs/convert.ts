/** Turns the addon's plain objects into the public Service/Destination shapes. */
import { AF_INET6, DAEMON_STATE, FORWARD, IPPROTO, SVC_F, TUNNEL_FLAG, TUNNEL_TYPE, nameOf } from './constants.js';
import type { Daemon, Destination, Family, Protocol, Service, Stats } from './types.js';

export interface NativeServiceOut {
  af: number;
  protocol?: number;
  address?: string;
  port?: number;
  fwmark?: number;
  scheduler: string;
  flags: number;
  timeout: number;
  netmask: string | number;
  peName?: string;
  stats?: Stats;
}

export interface NativeDestinationOut {
  af: number;
  address: string;
  port: number;
  forward: number;
  weight: number;
  upperThreshold: number;
  lowerThreshold: number;
  activeConns: number;
  inactiveConns: number;
  persistentConns: number;
  tunnel?: { type: number; port: number; flags: number };
  stats?: Stats;
}

const ZERO_STATS: Stats = Object.freeze({
  conns: 0n, inPackets: 0n, outPackets: 0n, inBytes: 0n, outBytes: 0n,
  cps: 0n, inPps: 0n, outPps: 0n, inBps: 0n, outBps: 0n,
});

const familyOf = (af: number): Family => (af === AF_INET6 ? 'inet6' : 'inet');

export function toService(n: NativeServiceOut): Service {
  // Built field by field, key first: object spread is a slow path in V8.
  const s = (
    n.fwmark
      ? { fwmark: n.fwmark }
      : { protocol: (nameOf(IPPROTO, n.protocol ?? -1) ?? String(n.protocol)) as Protocol, address: n.address as string, port: n.port as number }
  ) as Service;
  s.family = familyOf(n.af);
  s.scheduler = n.scheduler;
  s.flags = {
    onePacket: (n.flags & SVC_F.ONEPACKET) !== 0,
    sched1: (n.flags & SVC_F.SCHED1) !== 0,
    sched2: (n.flags & SVC_F.SCHED2) !== 0,
    sched3: (n.flags & SVC_F.SCHED3) !== 0,
  };
  if ((n.flags & SVC_F.PERSISTENT) !== 0) s.persistent = { timeout: n.timeout, netmask: n.netmask };
  if (n.peName) s.peName = n.peName;
  s.stats = n.stats ?? { ...ZERO_STATS };
  return s;
}

export function toDestination(n: NativeDestinationOut): Destination {
  const d: Destination = {
    address: n.address,
    port: n.port,
    family: familyOf(n.af),
    weight: n.weight,
    forward: nameOf(FORWARD, n.forward) ?? 'masq',
    upperThreshold: n.upperThreshold,
    lowerThreshold: n.lowerThreshold,
    activeConns: n.activeConns,
    inactiveConns: n.inactiveConns,
    persistentConns: n.persistentConns,
    stats: n.stats ?? { ...ZERO_STATS },
  };
  // The kernel reports tunnel attributes for every destination; they only
  // mean something for tunnel forwarding.
  if (n.tunnel && d.forward === 'tunnel') {
    d.tunnel = {
      type: nameOf(TUNNEL_TYPE, n.tunnel.type) ?? 'ipip',
      port: n.tunnel.port,
      flags: nameOf(TUNNEL_FLAG, n.tunnel.flags) ?? 'nocsum',
    };
  }
  return d;
}

export function toDaemon(n: Record<string, unknown>): Daemon {
  const d: Daemon = {
    state: nameOf(DAEMON_STATE, n.state as number) ?? 'master',
    interface: n.mcastIfn as string,
    syncId: n.syncId as number,
  };
  if (n.syncMaxlen !== undefined) d.maxLen = n.syncMaxlen as number;
  if (n.mcastGroup !== undefined) d.group = n.mcastGroup as string;
  if (n.mcastPort !== undefined) d.port = n.mcastPort as number;
  if (n.mcastTtl !== undefined) d.ttl = n.mcastTtl as number;
  return d;
}
