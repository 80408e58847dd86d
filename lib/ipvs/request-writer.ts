/**
 * Validates IPVS requests and writes them as fixed-size records into one
 * buffer, the form the addon takes a batch in (native/ipvs/records.h).
 *
 * Each value is checked as it is written, with the library's checking
 * module (util/check.ts): a bad one throws its TypeError or RangeError
 * naming the field (`service.port must be an integer from 0 to 65535, got
 * 70000`) and the buffer is dropped, so nothing is sent. No object is made
 * per operation: a 100,000-operation batch costs one buffer and a few
 * interned strings.
 */
import { type AddressFamily, writeAddress } from '../util/address.js';
import { integer, interfaceName, knownFields, object, optionalBoolean, outOfRange, port, tableValue, wrongValue } from '../util/check.js';
import { AF_INET, AF_INET6, FORWARD, IFNAME_MAXLEN, IPPROTO, PENAME_MAXLEN, SCHEDNAME_MAXLEN, SVC_F, TUNNEL_FLAG, TUNNEL_TYPE } from './constants.js';
import { FLAG, LITTLE_ENDIAN, REQ } from './records.js';
import type { DaemonConfig } from './types.js';
import { daemonState, family as checkFamily, ipv4NetmaskBytes, moduleName, timeoutSeconds } from './validate.js';

const LE = LITTLE_ENDIAN;
const SIZE = REQ.size;
const SERVICE_FLAG_NAMES = ['onePacket', 'sched1', 'sched2', 'sched3'] as const;
const SERVICE_FLAG_BITS = [SVC_F.ONEPACKET, SVC_F.SCHED1, SVC_F.SCHED2, SVC_F.SCHED3] as const;
const SERVICE_FLAG_FIELDS = new Set<string>(SERVICE_FLAG_NAMES);
const TIMEOUT_FIELDS = new Set(['tcp', 'tcpFin', 'udp']);

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
  serviceKey(value: unknown, field: string): number {
    const key = object(value, field);
    const at = this.at;
    this.flag(FLAG.hasService);
    let af: number;
    if (key.fwmark !== undefined) {
      const fwmark = integer(key.fwmark, field, 1, 0xffffffff, 'fwmark');
      if (key.address !== undefined) throw wrongValue(`${field}.address`, 'left out when fwmark is given (a service is one or the other)', key.address);
      af = afOf(key.family === undefined ? 'inet' : checkFamily(key.family, field, 'family'));
      this.view.setUint32(at + REQ.SvcFwmark, fwmark, LE);
    } else {
      const protocol = tableValue(IPPROTO, key.protocol, field, 'protocol');
      const family = writeAddress(key.address, this.bytes, at + REQ.SvcAddr, field, 'address');
      if (key.family !== undefined && checkFamily(key.family, field, 'family') !== family)
        throw wrongValue(`${field}.family`, `'${family}', the family of ${field}.address`, key.family);
      af = afOf(family);
      this.view.setUint16(at + REQ.SvcProtocol, protocol, LE);
      this.view.setUint16(at + REQ.SvcPort, port(key.port, field, 'port'), LE);
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
    knownFields(o, SERVICE_FIELDS, field);
    const at = this.at;
    this.view.setUint16(at + REQ.SvcSched, this.moduleName(o.scheduler ?? 'wlc', field, 'scheduler', SCHEDNAME_MAXLEN - 1), LE);
    let flags = 0;
    if (o.flags !== undefined) {
      const f = object(o.flags, field, 'flags');
      knownFields(f, SERVICE_FLAG_FIELDS, `${field}.flags`);
      for (let i = 0; i < SERVICE_FLAG_NAMES.length; i++)
        if (optionalBoolean(f[SERVICE_FLAG_NAMES[i]], `${field}.flags`, false, SERVICE_FLAG_NAMES[i])) flags |= SERVICE_FLAG_BITS[i];
    }
    // No persistence: the kernel's defaults, as ipvsadm sends them.
    let timeout = 0;
    let netmask: number | Uint8Array = af === AF_INET6 ? 128 : FULL_IPV4_MASK;
    if (o.persistent !== undefined) {
      const p = object(o.persistent, field, 'persistent');
      knownFields(p, PERSISTENT_FIELDS, `${field}.persistent`);
      flags |= SVC_F.PERSISTENT;
      timeout = timeoutSeconds(p.timeout, `${field}.persistent`, 'timeout');
      if (p.netmask !== undefined) {
        // An IPv6 service's netmask is a prefix length only.
        netmask = af === AF_INET6 ? integer(p.netmask, `${field}.persistent`, 1, 128, 'netmask') : ipv4NetmaskBytes(p.netmask, `${field}.persistent.netmask`);
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
  destinationKey(value: unknown, field: string): number {
    const dest = object(value, field);
    const at = this.at;
    this.flag(FLAG.hasDest | FLAG.destKeyOnly | FLAG.destHasAf);
    const af = afOf(writeAddress(dest.address, this.bytes, at + REQ.DestAddr, field, 'address'));
    this.view.setUint16(at + REQ.DestAf, af, LE);
    this.view.setUint16(at + REQ.DestPort, port(dest.port, field, 'port'), LE);
    return af;
  }

  /** A full destination specification. */
  destinationSpec(dest: unknown, serviceAf: number, field: string): void {
    const af = this.destinationKey(dest, field);
    this.bytes[this.at + REQ.Flags] &= ~FLAG.destKeyOnly;
    const o = dest as Record<string, unknown>;
    knownFields(o, DESTINATION_FIELDS, field);
    const at = this.at;
    const forward = o.forward === undefined ? FORWARD.masq : tableValue(FORWARD, o.forward, field, 'forward');
    // The kernel takes a destination of the other family only for tunnels.
    if (af !== serviceAf && forward !== FORWARD.tunnel) {
      const service = serviceAf === AF_INET ? 'IPv4' : 'IPv6';
      throw wrongValue(`${field}.address`, `an ${service} address like the service's (the kernel mixes families only with forward 'tunnel')`, o.address);
    }
    this.view.setUint32(at + REQ.DestFwd, forward, LE);
    this.view.setUint32(at + REQ.DestWeight, o.weight === undefined ? 1 : integer(o.weight, field, 0, 0x7fffffff, 'weight'), LE);
    if (o.upperThreshold !== undefined) this.view.setUint32(at + REQ.DestUThresh, integer(o.upperThreshold, field, 0, 0xffffffff, 'upperThreshold'), LE);
    if (o.lowerThreshold !== undefined) this.view.setUint32(at + REQ.DestLThresh, integer(o.lowerThreshold, field, 0, 0xffffffff, 'lowerThreshold'), LE);
    // Tunnel attributes go with every destination, as ipvsadm sends them
    // (the kernel reads them only for tunnel forwarding): type 0 is IPIP.
    if (o.tunnel !== undefined) {
      const t = object(o.tunnel, field, 'tunnel');
      knownFields(t, TUNNEL_FIELDS, `${field}.tunnel`);
      if (forward !== FORWARD.tunnel) throw wrongValue(`${field}.tunnel`, "left out unless forward is 'tunnel'", t);
      const type = tableValue(TUNNEL_TYPE, t.type, field, 'tunnel.type');
      const flags = t.flags === undefined ? TUNNEL_FLAG.nocsum : tableValue(TUNNEL_FLAG, t.flags, field, 'tunnel.flags');
      // GUE needs its UDP port (left out: a TypeError, 0: a RangeError).
      const udpPort = type === TUNNEL_TYPE.gue ? integer(t.port, field, 1, 65535, 'tunnel.port') : t.port === undefined ? 0 : port(t.port, field, 'tunnel.port');
      this.bytes[at + REQ.DestTunType] = type;
      this.view.setUint16(at + REQ.DestTunPort, udpPort, LE);
      this.view.setUint16(at + REQ.DestTunFlags, flags, LE);
    }
  }

  /** Connection timeouts in seconds; one left out (0) stays as it is in the kernel. */
  timeouts(value: unknown): void {
    const t = object(value, 'timeouts');
    knownFields(t, TIMEOUT_FIELDS, 'timeouts');
    const one = (k: string) => (t[k] === undefined ? 0 : timeoutSeconds(t[k], 'timeouts', k));
    const at = this.at;
    this.flag(FLAG.hasTimeouts);
    this.view.setUint32(at + REQ.TimeoutTcp, one('tcp'), LE);
    this.view.setUint32(at + REQ.TimeoutTcpFin, one('tcpFin'), LE);
    this.view.setUint32(at + REQ.TimeoutUdp, one('udp'), LE);
  }

  /** A sync daemon to start. */
  daemonConfig(value: unknown): void {
    const cfg = object(value, 'daemon');
    knownFields(cfg, DAEMON_FIELDS, 'daemon');
    const c = cfg as unknown as DaemonConfig;
    const at = this.at;
    this.flag(FLAG.hasDaemon);
    this.view.setUint32(at + REQ.DaemonState, daemonState(c.state, 'daemon.state'), LE);
    const ifname = interfaceName(c.interface, 'daemon.interface', IFNAME_MAXLEN - 1);
    this.view.setUint16(at + REQ.DaemonIfn, this.string(ifname, 'daemon', 'interface'), LE);
    this.view.setUint32(at + REQ.DaemonSyncId, c.syncId === undefined ? 0 : integer(c.syncId, 'daemon', 0, 255, 'syncId'), LE);
    let has = 0;
    if (c.maxLen !== undefined) {
      this.view.setUint16(at + REQ.DaemonMaxlen, integer(c.maxLen, 'daemon', 1, 65535, 'maxLen'), LE);
      has |= FLAG.daemonHasMaxlen;
    }
    if (c.port !== undefined) {
      this.view.setUint16(at + REQ.DaemonPort, integer(c.port, 'daemon', 1, 65535, 'port'), LE);
      has |= FLAG.daemonHasPort;
    }
    if (c.ttl !== undefined) {
      this.bytes[at + REQ.DaemonTtl] = integer(c.ttl, 'daemon', 1, 255, 'ttl');
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
    return known ?? this.string(moduleName(v, `${field}.${name}`, maxLen), field, name);
  }

  /** Interns a string (the value of `field.name`); returns its index + 1 (0 means none). */
  private string(s: string, field: string, name: string): number {
    let id = this.stringIds.get(s);
    if (id === undefined) {
      // The records keep a string's index in 16 bits.
      if (this.stringList.length === 0xffff) throw outOfRange(`${field}.${name}`, 'one of at most 65535 distinct names (schedulers, engines, interfaces) in a batch', s);
      this.stringList.push(s);
      id = this.stringList.length;
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
