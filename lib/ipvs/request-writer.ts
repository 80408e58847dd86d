/**
 * Validates IPVS requests and writes them as fixed-size records into one
 * buffer, the form the addon takes a batch in (native/ipvs/records.h).
 *
 * Each value is checked as it is written: a bad one throws a TypeError or
 * RangeError naming the field (`service.port must be from 0 to 65535, got
 * 70000`) and the buffer is dropped, so nothing is sent. No object is made
 * per operation: a 100,000-operation batch costs one buffer and a few
 * interned strings.
 */
import { type AddressFamily, checkInteger, checkIntegerIn, writeAddress } from '../util/address.js';
import { AF_INET, AF_INET6, FORWARD, IFNAME_MAXLEN, IPPROTO, PENAME_MAXLEN, SCHEDNAME_MAXLEN, SVC_F, TUNNEL_FLAG, TUNNEL_TYPE } from './constants.js';
import { FLAG, LITTLE_ENDIAN, REQ } from './records.js';
import type { DaemonConfig, Timeouts } from './types.js';
import { checkBoolean, checkFamily, checkKnownFields, checkName, daemonState, ipv4NetmaskBytes, isObject, MAX_TIMEOUT, oneOf } from './validate.js';

const LE = LITTLE_ENDIAN;
const SIZE = REQ.size;
const SERVICE_FLAG_NAMES = ['onePacket', 'sched1', 'sched2', 'sched3'] as const;
const SERVICE_FLAG_BITS = [SVC_F.ONEPACKET, SVC_F.SCHED1, SVC_F.SCHED2, SVC_F.SCHED3] as const;
const TIMEOUT_NAMES = ['tcp', 'tcpFin', 'udp'] as const;

const afOf = (f: AddressFamily) => (f === 'inet' ? AF_INET : AF_INET6);

// The fields each specification takes, plus those a read returns (so a
// Service or Destination read from the kernel can be written back).
const SERVICE_FIELDS = new Set(['protocol', 'address', 'port', 'fwmark', 'family', 'scheduler', 'flags', 'persistent', 'peName', 'stats', 'destinations']);
const PERSISTENT_FIELDS = new Set(['timeout', 'netmask']);
const DESTINATION_FIELDS = new Set(['address', 'port', 'weight', 'forward', 'upperThreshold', 'lowerThreshold', 'tunnel', 'family', 'activeConns', 'inactiveConns', 'persistentConns', 'stats']);
const TUNNEL_FIELDS = new Set(['type', 'port', 'flags']);
const DAEMON_FIELDS = new Set(['state', 'interface', 'syncId', 'maxLen', 'group', 'port', 'ttl']);

export class RequestWriter {
  private bytes: Uint8Array;
  private view: DataView;
  private n = 0;
  private at = 0; // offset of the record being written
  private readonly stringList: string[] = [];
  private readonly stringIds = new Map<string, number>();

  /** `spare`: a buffer of an earlier batch to write into when it is big enough (its pages are warm). */
  constructor(expected = 1, spare?: Uint8Array) {
    const need = Math.max(1, expected) * SIZE;
    this.bytes = spare && spare.length >= need ? spare : new Uint8Array(need);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  /** The whole buffer, for reuse by a later batch once this one is done. */
  buffer(): Uint8Array {
    return this.bytes;
  }

  /** How many requests have been written. */
  get count(): number {
    return this.n;
  }

  /** The records written so far (a view, not a copy). */
  records(): Uint8Array {
    return this.bytes.subarray(0, this.n * SIZE);
  }

  /** The strings the records refer to (index + 1; 0 means none). */
  strings(): string[] {
    return this.stringList;
  }

  /** Starts a record for `cmd`; returns its index. */
  begin(cmd: number, flags = 0): number {
    if ((this.n + 1) * SIZE > this.bytes.length) this.grow();
    this.at = this.n * SIZE;
    this.bytes.fill(0, this.at, this.at + SIZE); // a reused buffer holds an earlier batch
    this.bytes[this.at + REQ.Cmd] = cmd;
    this.bytes[this.at + REQ.Flags] = flags;
    return this.n++;
  }

  /** Drops the record begun last (its fields failed validation). */
  abandon(): void {
    this.n--;
    this.bytes.fill(0, this.n * SIZE, (this.n + 1) * SIZE);
  }

  /** The identity of a service; returns its family code (AF_INET / AF_INET6). */
  serviceKey(key: unknown, field: string): number {
    if (!isObject(key)) throw new TypeError(`${field} must be an object`);
    const at = this.at;
    this.flag(FLAG.hasService);
    let af: number;
    if (key.fwmark !== undefined) {
      const fwmark = checkIntegerIn(key.fwmark, 1, 0xffffffff, field, 'fwmark');
      if (key.address !== undefined) throw new TypeError(`${field} has both fwmark and address: a service is one or the other`);
      af = afOf(checkFamily(key.family ?? 'inet', `${field}.family`));
      this.view.setUint32(at + REQ.SvcFwmark, fwmark, LE);
    } else {
      const protocol = key.protocol;
      if (protocol !== 'tcp' && protocol !== 'udp' && protocol !== 'sctp')
        throw new TypeError(`${field}.protocol must be 'tcp', 'udp' or 'sctp', got ${JSON.stringify(protocol)}`);
      const family = writeAddress(key.address, this.bytes, at + REQ.SvcAddr, field, 'address');
      if (key.family !== undefined && checkFamily(key.family, `${field}.family`) !== family)
        throw new TypeError(`${field}.family is ${key.family} but ${field}.address is ${family}`);
      af = afOf(family);
      this.view.setUint16(at + REQ.SvcProtocol, IPPROTO[protocol], LE);
      this.view.setUint16(at + REQ.SvcPort, checkIntegerIn(key.port, 0, 65535, field, 'port'), LE);
    }
    this.view.setUint16(at + REQ.SvcAf, af, LE);
    return af;
  }

  /** A service's identity only (delete, get, zero, destination ops). */
  serviceKeyOnly(key: unknown, field: string): number {
    this.flag(FLAG.serviceKeyOnly);
    return this.serviceKey(key, field);
  }

  /** A full service specification. */
  serviceSpec(spec: unknown, field: string): number {
    const af = this.serviceKey(spec, field);
    const o = spec as Record<string, unknown>;
    checkKnownFields(o, SERVICE_FIELDS, field);
    const at = this.at;
    this.view.setUint16(at + REQ.SvcSched, this.moduleName(o.scheduler ?? 'wlc', field, 'scheduler', SCHEDNAME_MAXLEN - 1), LE);
    let flags = 0;
    if (o.flags !== undefined) {
      if (!isObject(o.flags)) throw new TypeError(`${field}.flags must be an object`);
      for (const k of Object.keys(o.flags))
        if (!(SERVICE_FLAG_NAMES as readonly string[]).includes(k)) throw new TypeError(`${field}.flags.${k} is not a service flag`);
      for (let i = 0; i < SERVICE_FLAG_NAMES.length; i++)
        if (checkBoolean(o.flags[SERVICE_FLAG_NAMES[i]], `${field}.flags.${SERVICE_FLAG_NAMES[i]}`)) flags |= SERVICE_FLAG_BITS[i];
    }
    // No persistence: the kernel's defaults, as ipvsadm sends them.
    let timeout = 0;
    let netmask: number | Uint8Array = af === AF_INET6 ? 128 : FULL_IPV4_MASK;
    if (o.persistent !== undefined) {
      const p = o.persistent;
      if (!isObject(p)) throw new TypeError(`${field}.persistent must be an object`);
      checkKnownFields(p, PERSISTENT_FIELDS, `${field}.persistent`);
      flags |= SVC_F.PERSISTENT;
      timeout = checkInteger(p.timeout, `${field}.persistent.timeout`, 1, MAX_TIMEOUT);
      if (p.netmask !== undefined) {
        if (af === AF_INET6 && typeof p.netmask !== 'number')
          throw new TypeError(`${field}.persistent.netmask must be a prefix length from 1 to 128 for an IPv6 service, got ${JSON.stringify(p.netmask)}`);
        netmask = af === AF_INET6 ? checkInteger(p.netmask, `${field}.persistent.netmask`, 1, 128) : ipv4NetmaskBytes(p.netmask, `${field}.persistent.netmask`);
      }
    }
    if (typeof netmask === 'number') this.view.setUint32(at + REQ.SvcNetmask, netmask, LE);
    else this.bytes.set(netmask, at + REQ.SvcNetmask); // network order, as the kernel keeps it
    if (o.peName !== undefined) this.view.setUint16(at + REQ.SvcPe, this.moduleName(o.peName, field, 'peName', PENAME_MAXLEN - 1), LE);
    this.view.setUint32(at + REQ.SvcFlags, flags, LE);
    this.view.setUint32(at + REQ.SvcMask, 0xffffffff, LE);
    this.view.setUint32(at + REQ.SvcTimeout, timeout, LE);
    return af;
  }

  /** A destination's address and port; returns its family code. */
  destinationKey(dest: unknown, field: string): number {
    if (!isObject(dest)) throw new TypeError(`${field} must be an object`);
    const at = this.at;
    this.flag(FLAG.hasDest | FLAG.destKeyOnly | FLAG.destHasAf);
    const af = afOf(writeAddress(dest.address, this.bytes, at + REQ.DestAddr, field, 'address'));
    this.view.setUint16(at + REQ.DestAf, af, LE);
    this.view.setUint16(at + REQ.DestPort, checkIntegerIn(dest.port, 0, 65535, field, 'port'), LE);
    return af;
  }

  /** A full destination specification. */
  destinationSpec(dest: unknown, serviceAf: number, field: string): void {
    const af = this.destinationKey(dest, field);
    this.bytes[this.at + REQ.Flags] &= ~FLAG.destKeyOnly;
    const o = dest as Record<string, unknown>;
    checkKnownFields(o, DESTINATION_FIELDS, field);
    const at = this.at;
    const forward = o.forward === undefined ? FORWARD.masq : oneOf(FORWARD, o.forward, field, 'forward');
    // The kernel takes a destination of the other family only for tunnels.
    if (af !== serviceAf && forward !== FORWARD.tunnel)
      throw new TypeError(
        `${field}.address is ${af === AF_INET ? 'IPv4' : 'IPv6'} but the service is ${serviceAf === AF_INET ? 'IPv4' : 'IPv6'}: the kernel mixes families only with forward 'tunnel'`,
      );
    this.view.setUint32(at + REQ.DestFwd, forward, LE);
    this.view.setUint32(at + REQ.DestWeight, o.weight === undefined ? 1 : checkIntegerIn(o.weight, 0, 0x7fffffff, field, 'weight'), LE);
    if (o.upperThreshold !== undefined) this.view.setUint32(at + REQ.DestUThresh, checkIntegerIn(o.upperThreshold, 0, 0xffffffff, field, 'upperThreshold'), LE);
    if (o.lowerThreshold !== undefined) this.view.setUint32(at + REQ.DestLThresh, checkIntegerIn(o.lowerThreshold, 0, 0xffffffff, field, 'lowerThreshold'), LE);
    // Tunnel attributes go with every destination, as ipvsadm sends them
    // (the kernel reads them only for tunnel forwarding): type 0 is IPIP.
    if (o.tunnel !== undefined) {
      const t = o.tunnel;
      if (!isObject(t)) throw new TypeError(`${field}.tunnel must be an object`);
      checkKnownFields(t, TUNNEL_FIELDS, `${field}.tunnel`);
      if (forward !== FORWARD.tunnel) throw new TypeError(`${field}.tunnel needs forward 'tunnel'`);
      const type = oneOf(TUNNEL_TYPE, t.type, field, 'tunnel.type');
      const flags = t.flags === undefined ? TUNNEL_FLAG.nocsum : oneOf(TUNNEL_FLAG, t.flags, field, 'tunnel.flags');
      const port = t.port === undefined ? 0 : checkIntegerIn(t.port, 0, 65535, field, 'tunnel.port');
      if (type === TUNNEL_TYPE.gue && port === 0) throw new RangeError(`${field}.tunnel.port is required for a GUE tunnel`);
      this.bytes[at + REQ.DestTunType] = type;
      this.view.setUint16(at + REQ.DestTunPort, port, LE);
      this.view.setUint16(at + REQ.DestTunFlags, flags, LE);
    }
  }

  /** Connection timeouts in seconds; one left out (0) stays as it is in the kernel. */
  timeouts(t: unknown): void {
    if (!isObject(t)) throw new TypeError('timeouts must be an object');
    for (const k of Object.keys(t)) if (!(TIMEOUT_NAMES as readonly string[]).includes(k)) throw new TypeError(`timeouts.${k} is not a timeout`);
    const one = (k: (typeof TIMEOUT_NAMES)[number]) => (t[k] === undefined ? 0 : checkInteger(t[k], `timeouts.${k}`, 1, MAX_TIMEOUT));
    const at = this.at;
    this.flag(FLAG.hasTimeouts);
    this.view.setUint32(at + REQ.TimeoutTcp, one('tcp'), LE);
    this.view.setUint32(at + REQ.TimeoutTcpFin, one('tcpFin'), LE);
    this.view.setUint32(at + REQ.TimeoutUdp, one('udp'), LE);
  }

  /** A sync daemon to start. */
  daemonConfig(cfg: unknown): void {
    if (!isObject(cfg)) throw new TypeError('daemon must be an object');
    checkKnownFields(cfg, DAEMON_FIELDS, 'daemon');
    const c = cfg as unknown as DaemonConfig;
    const at = this.at;
    this.flag(FLAG.hasDaemon);
    this.view.setUint32(at + REQ.DaemonState, daemonState(c.state, 'daemon.state'), LE);
    this.view.setUint16(at + REQ.DaemonIfn, this.string(interfaceName(c.interface)), LE);
    this.view.setUint32(at + REQ.DaemonSyncId, c.syncId === undefined ? 0 : checkInteger(c.syncId, 'daemon.syncId', 0, 255), LE);
    let has = 0;
    if (c.maxLen !== undefined) {
      this.view.setUint16(at + REQ.DaemonMaxlen, checkInteger(c.maxLen, 'daemon.maxLen', 1, 65535), LE);
      has |= FLAG.daemonHasMaxlen;
    }
    if (c.port !== undefined) {
      this.view.setUint16(at + REQ.DaemonPort, checkInteger(c.port, 'daemon.port', 1, 65535), LE);
      has |= FLAG.daemonHasPort;
    }
    if (c.ttl !== undefined) {
      this.bytes[at + REQ.DaemonTtl] = checkInteger(c.ttl, 'daemon.ttl', 1, 255);
      has |= FLAG.daemonHasTtl;
    }
    if (c.group !== undefined) {
      const family = writeAddress(c.group, this.bytes, at + REQ.DaemonGroup, 'daemon', 'group');
      this.view.setUint16(at + REQ.DaemonGroupAf, afOf(family), LE);
    }
    this.bytes[at + REQ.DaemonHas] = has;
  }

  /** A daemon to stop: only its state is read by the kernel. */
  daemonStop(state: unknown): void {
    this.flag(FLAG.hasDaemon);
    this.view.setUint32(this.at + REQ.DaemonState, daemonState(state, 'state'), LE);
  }

  private flag(bits: number): void {
    this.bytes[this.at + REQ.Flags] |= bits;
  }

  /**
   * A scheduler or persistence engine name, interned. A name already in the
   * table was checked when it went in: thousands of services naming "rr"
   * are checked once.
   */
  private moduleName(v: unknown, field: string, name: string, maxLen: number): number {
    const known = typeof v === 'string' ? this.stringIds.get(v) : undefined;
    return known ?? this.string(checkName(v, `${field}.${name}`, maxLen));
  }

  /** Interns a string; returns its index + 1 (0 means none). */
  private string(s: string): number {
    let id = this.stringIds.get(s);
    if (id === undefined) {
      this.stringList.push(s);
      id = this.stringList.length;
      if (id > 0xffff) throw new RangeError('a batch may name at most 65535 distinct schedulers, engines and interfaces');
      this.stringIds.set(s, id);
    }
    return id;
  }

  private grow(): void {
    const next = new Uint8Array(this.bytes.length * 2);
    next.set(this.bytes);
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }
}

const FULL_IPV4_MASK = new Uint8Array([255, 255, 255, 255]);

function interfaceName(v: unknown): string {
  if (typeof v !== 'string' || v.length === 0) throw new TypeError('daemon.interface must be a non-empty interface name');
  if (v.length > IFNAME_MAXLEN - 1) throw new RangeError(`daemon.interface must be at most ${IFNAME_MAXLEN - 1} characters`);
  return v;
}
