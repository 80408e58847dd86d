/**
 * Turns what callers pass into the plain objects the addon encodes. Every
 * check happens here, before anything is sent: a bad value throws a
 * TypeError or RangeError naming the field (e.g. `destination.port`).
 */
import { checkInteger, checkPort, ipv4MaskFromPrefix, ipv4PrefixFromMask, parseAddress } from '../util/address.js';
import type { AddressFamily } from '../util/address.js';
import {
  AF_INET,
  AF_INET6,
  DAEMON_STATE,
  FORWARD,
  IFNAME_MAXLEN,
  IPPROTO,
  PENAME_MAXLEN,
  SCHEDNAME_MAXLEN,
  SVC_F,
  TUNNEL_FLAG,
  TUNNEL_TYPE,
} from './constants.js';
import type {
  DaemonConfig,
  DaemonState,
  DestinationKey,
  DestinationSpec,
  ServiceKey,
  ServiceSpec,
  Timeouts,
} from './types.js';

/** The service part of an addon op. */
export interface NativeService {
  af: number;
  protocol?: number;
  address?: string;
  port?: number;
  fwmark?: number;
  scheduler?: string;
  flags?: number;
  mask?: number;
  timeout?: number;
  netmask?: string | number;
  peName?: string;
}

export interface NativeDestination {
  af: number;
  address: string;
  port: number;
  forward?: number;
  weight?: number;
  upperThreshold?: number;
  lowerThreshold?: number;
  tunnel?: { type: number; port: number; flags: number };
}

export interface NativeOp {
  cmd: number;
  service?: NativeService;
  serviceKeyOnly?: boolean;
  destination?: NativeDestination;
  destinationKeyOnly?: boolean;
  daemon?: Record<string, unknown>;
  timeouts?: Timeouts;
  dump?: boolean;
}

const afOf = (f: AddressFamily) => (f === 'inet' ? AF_INET : AF_INET6);
// Kernel persistence timeouts are seconds multiplied by HZ in an unsigned int.
const MAX_TIMEOUT = 2147483;
const NAME_RE = /^[A-Za-z0-9_.-]+$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function checkBoolean(v: unknown, field: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new TypeError(`${field} must be a boolean`);
  return v;
}

function checkName(v: unknown, field: string, maxLen: number): string {
  if (typeof v !== 'string' || v.length === 0) throw new TypeError(`${field} must be a non-empty string`);
  if (v.length > maxLen) throw new RangeError(`${field} must be at most ${maxLen} characters, got '${v}'`);
  if (!NAME_RE.test(v)) throw new TypeError(`${field} has characters a kernel module name cannot have: '${v}'`);
  return v;
}

export function checkFamily(v: unknown, field: string): AddressFamily {
  if (v !== 'inet' && v !== 'inet6') throw new TypeError(`${field} must be 'inet' or 'inet6', got ${JSON.stringify(v)}`);
  return v;
}

/** The identity of a service, checked. */
export function serviceKey(key: unknown, field = 'service'): NativeService {
  if (!isObject(key)) throw new TypeError(`${field} must be an object`);
  if ('fwmark' in key && key.fwmark !== undefined) {
    const fwmark = checkInteger(key.fwmark, `${field}.fwmark`, 1, 0xffffffff);
    if ('address' in key && key.address !== undefined)
      throw new TypeError(`${field} has both fwmark and address: a service is one or the other`);
    return { af: afOf(checkFamily(key.family ?? 'inet', `${field}.family`)), fwmark };
  }
  const protocol = key.protocol;
  if (protocol !== 'tcp' && protocol !== 'udp' && protocol !== 'sctp')
    throw new TypeError(`${field}.protocol must be 'tcp', 'udp' or 'sctp', got ${JSON.stringify(protocol)}`);
  const addr = parseAddress(key.address, `${field}.address`);
  if (key.family !== undefined && checkFamily(key.family, `${field}.family`) !== addr.family)
    throw new TypeError(`${field}.family is ${key.family} but ${field}.address is ${addr.family}`);
  return { af: afOf(addr.family), protocol: IPPROTO[protocol], address: addr.text, port: checkPort(key.port, `${field}.port`) };
}

/** A full service specification, checked. */
export function serviceSpec(spec: unknown, field = 'service'): NativeService {
  // serviceKey() returns a fresh object: fill it in rather than copying it
  // ({ ...s, more } takes a slow path in V8, microseconds per call).
  const out: NativeService = serviceKey(spec, field);
  const s = out;
  const o = spec as ServiceSpec;
  out.scheduler = checkName(o.scheduler ?? 'wlc', `${field}.scheduler`, SCHEDNAME_MAXLEN - 1);
  let flags = 0;
  if (o.flags !== undefined) {
    if (!isObject(o.flags)) throw new TypeError(`${field}.flags must be an object`);
    for (const k of Object.keys(o.flags))
      if (!['onePacket', 'sched1', 'sched2', 'sched3'].includes(k)) throw new TypeError(`${field}.flags.${k} is not a service flag`);
    if (checkBoolean(o.flags.onePacket, `${field}.flags.onePacket`)) flags |= SVC_F.ONEPACKET;
    if (checkBoolean(o.flags.sched1, `${field}.flags.sched1`)) flags |= SVC_F.SCHED1;
    if (checkBoolean(o.flags.sched2, `${field}.flags.sched2`)) flags |= SVC_F.SCHED2;
    if (checkBoolean(o.flags.sched3, `${field}.flags.sched3`)) flags |= SVC_F.SCHED3;
  }
  const v6 = s.af === AF_INET6;
  out.netmask = v6 ? 128 : '255.255.255.255';
  out.timeout = 0;
  if (o.persistent !== undefined) {
    if (!isObject(o.persistent)) throw new TypeError(`${field}.persistent must be an object`);
    flags |= SVC_F.PERSISTENT;
    out.timeout = checkInteger(o.persistent.timeout, `${field}.persistent.timeout`, 1, MAX_TIMEOUT);
    const nm = o.persistent.netmask;
    if (nm !== undefined) out.netmask = v6 ? checkInteger(nm, `${field}.persistent.netmask`, 1, 128) : ipv4Netmask(nm, `${field}.persistent.netmask`);
  }
  if (o.peName !== undefined) out.peName = checkName(o.peName, `${field}.peName`, PENAME_MAXLEN - 1);
  out.flags = flags;
  out.mask = 0xffffffff;
  return out;
}

function ipv4Netmask(nm: unknown, field: string): string {
  if (typeof nm === 'number') return ipv4MaskFromPrefix(checkInteger(nm, field, 0, 32));
  if (typeof nm === 'string' && ipv4PrefixFromMask(nm) !== null) return nm;
  throw new TypeError(`${field} must be an IPv4 netmask like '255.255.255.0' or a prefix length 0-32, got ${JSON.stringify(nm)}`);
}

export function destinationKey(dest: unknown, service: NativeService, field = 'destination'): NativeDestination {
  if (!isObject(dest)) throw new TypeError(`${field} must be an object`);
  const addr = parseAddress(dest.address, `${field}.address`);
  return { af: afOf(addr.family), address: addr.text, port: checkPort(dest.port, `${field}.port`) };
}

export function destinationSpec(dest: unknown, service: NativeService, field = 'destination'): NativeDestination {
  const d = destinationKey(dest, service, field);
  const o = dest as DestinationSpec;
  const forwardName = o.forward ?? 'masq';
  if (typeof forwardName !== 'string' || !(forwardName in FORWARD))
    throw new TypeError(`${field}.forward must be one of ${Object.keys(FORWARD).join(', ')}, got ${JSON.stringify(o.forward)}`);
  const forward = FORWARD[forwardName as keyof typeof FORWARD];
  // The kernel takes a destination of the other family only for tunnels.
  if (d.af !== service.af && forward !== FORWARD.tunnel)
    throw new TypeError(
      `${field}.address is ${d.af === AF_INET ? 'IPv4' : 'IPv6'} but the service is ${service.af === AF_INET ? 'IPv4' : 'IPv6'}: the kernel mixes families only with forward 'tunnel'`,
    );
  // destinationKey() returns a fresh object: fill it in (no spread, see serviceSpec).
  const out: NativeDestination = d;
  out.forward = forward;
  out.weight = o.weight === undefined ? 1 : checkInteger(o.weight, `${field}.weight`, 0, 0x7fffffff);
  out.upperThreshold = o.upperThreshold === undefined ? 0 : checkInteger(o.upperThreshold, `${field}.upperThreshold`, 0, 0xffffffff);
  out.lowerThreshold = o.lowerThreshold === undefined ? 0 : checkInteger(o.lowerThreshold, `${field}.lowerThreshold`, 0, 0xffffffff);
  if (o.tunnel !== undefined) {
    if (!isObject(o.tunnel)) throw new TypeError(`${field}.tunnel must be an object`);
    if (forward !== FORWARD.tunnel) throw new TypeError(`${field}.tunnel needs forward 'tunnel'`);
    const type = o.tunnel.type;
    if (typeof type !== 'string' || !(type in TUNNEL_TYPE))
      throw new TypeError(`${field}.tunnel.type must be one of ${Object.keys(TUNNEL_TYPE).join(', ')}, got ${JSON.stringify(type)}`);
    const flagName = o.tunnel.flags ?? 'nocsum';
    if (typeof flagName !== 'string' || !(flagName in TUNNEL_FLAG))
      throw new TypeError(`${field}.tunnel.flags must be one of ${Object.keys(TUNNEL_FLAG).join(', ')}, got ${JSON.stringify(o.tunnel.flags)}`);
    const port = o.tunnel.port === undefined ? 0 : checkPort(o.tunnel.port, `${field}.tunnel.port`);
    if (type === 'gue' && port === 0) throw new RangeError(`${field}.tunnel.port is required for a GUE tunnel`);
    out.tunnel = { type: TUNNEL_TYPE[type as keyof typeof TUNNEL_TYPE], port, flags: TUNNEL_FLAG[flagName as keyof typeof TUNNEL_FLAG] };
  }
  return out;
}

export function timeouts(t: unknown): Timeouts {
  if (!isObject(t)) throw new TypeError('timeouts must be an object');
  for (const k of Object.keys(t)) if (!['tcp', 'tcpFin', 'udp'].includes(k)) throw new TypeError(`timeouts.${k} is not a timeout`);
  // 0 leaves a timeout unchanged in the kernel.
  const one = (k: 'tcp' | 'tcpFin' | 'udp') => (t[k] === undefined ? 0 : checkInteger(t[k], `timeouts.${k}`, 1, MAX_TIMEOUT));
  return { tcp: one('tcp'), tcpFin: one('tcpFin'), udp: one('udp') };
}

export function daemonState(v: unknown, field: string): number {
  if (v !== 'master' && v !== 'backup') throw new TypeError(`${field} must be 'master' or 'backup', got ${JSON.stringify(v)}`);
  return DAEMON_STATE[v as DaemonState];
}

export function daemonConfig(cfg: unknown): Record<string, unknown> {
  if (!isObject(cfg)) throw new TypeError('daemon must be an object');
  const c = cfg as unknown as DaemonConfig;
  if (typeof c.interface !== 'string' || c.interface.length === 0)
    throw new TypeError('daemon.interface must be a non-empty interface name');
  if (c.interface.length > IFNAME_MAXLEN - 1) throw new RangeError(`daemon.interface must be at most ${IFNAME_MAXLEN - 1} characters`);
  const out: Record<string, unknown> = {
    state: daemonState(c.state, 'daemon.state'),
    mcastIfn: c.interface,
    syncId: c.syncId === undefined ? 0 : checkInteger(c.syncId, 'daemon.syncId', 0, 255),
  };
  if (c.maxLen !== undefined) out.syncMaxlen = checkInteger(c.maxLen, 'daemon.maxLen', 1, 65535);
  if (c.group !== undefined) out.mcastGroup = parseAddress(c.group, 'daemon.group').text;
  if (c.port !== undefined) out.mcastPort = checkInteger(c.port, 'daemon.port', 1, 65535);
  if (c.ttl !== undefined) out.mcastTtl = checkInteger(c.ttl, 'daemon.ttl', 1, 255);
  return out;
}

export type { DestinationKey, ServiceKey };
