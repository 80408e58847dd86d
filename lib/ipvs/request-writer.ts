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
import { zeroedBytes } from '../netlink/large-buffer.js';
import { type AddressFamily, writeAddress } from '../util/address.js';
import { FieldNames, integer, interfaceName, knownFields, object, optionalBoolean, outOfRange, port, tableValue, wrongValue } from '../util/check.js';
import { keepLayout } from '../util/keep-layout.js';
import { AF_INET, AF_INET6, FORWARD, IFNAME_MAXLEN, IPPROTO, PENAME_MAXLEN, SCHEDNAME_MAXLEN, SVC_F, TUNNEL_FLAG, TUNNEL_TYPE } from './constants.js';
import { FLAG, REQ } from './records.js';
import type { DaemonConfig } from './types.js';
import { daemonState, family as checkFamily, ipv4NetmaskBytes, moduleName, timeoutSeconds } from './validate.js';

const SIZE = REQ.size;
// Hot offsets, read once from the layout.
const REQ_CMD = REQ.Cmd;
const REQ_FLAGS = REQ.Flags;
const REQ_SVC_AF = REQ.SvcAf;
const REQ_SVC_PROTOCOL = REQ.SvcProtocol;
const REQ_SVC_PORT = REQ.SvcPort;
const REQ_SVC_ADDR = REQ.SvcAddr;
const FLAG_HAS_SERVICE = FLAG.hasService;
const FLAG_SERVICE_KEY_ONLY = FLAG.serviceKeyOnly;
const REQ_DEST_AF = REQ.DestAf;
const REQ_DEST_PORT = REQ.DestPort;
const REQ_DEST_ADDR = REQ.DestAddr;
const REQ_DEST_FWD = REQ.DestFwd;
const REQ_DEST_WEIGHT = REQ.DestWeight;
const FLAG_DEST_KEY = FLAG.hasDest | FLAG.destKeyOnly | FLAG.destHasAf;
const FLAG_DEST_KEY_ONLY = FLAG.destKeyOnly;
const FORWARD_MASQ = FORWARD.masq;
const FORWARD_TUNNEL = FORWARD.tunnel;
// A service's identity (family, protocol, port, fwmark, address) is one
// run of 16-bit words in a record, which serviceKeyOnly() copies.
const KEY_FROM = Math.min(REQ.SvcAf, REQ.SvcProtocol, REQ.SvcPort, REQ.SvcFwmark, REQ.SvcAddr);
const KEY_TO = Math.max(REQ.SvcAf + 2, REQ.SvcProtocol + 2, REQ.SvcPort + 2, REQ.SvcFwmark + 4, REQ.SvcAddr + 16);
const KEY_WORDS = (KEY_TO - KEY_FROM) >> 1;
const SERVICE_FLAG_NAMES = ['onePacket', 'sched1', 'sched2', 'sched3'] as const;
const SERVICE_FLAG_BITS = [SVC_F.ONEPACKET, SVC_F.SCHED1, SVC_F.SCHED2, SVC_F.SCHED3] as const;
const SERVICE_FLAG_FIELDS = new Set<string>(SERVICE_FLAG_NAMES);
const TIMEOUT_FIELDS = new Set(['tcp', 'tcpFin', 'udp']);

const afOf = (f: AddressFamily) => (f === 'inet' ? AF_INET : AF_INET6);

// The fields each specification takes, plus those a read returns (so a
// Service or Destination read from the kernel can be written back).
const SERVICE_FIELDS = new FieldNames(new Set(['protocol', 'address', 'port', 'fwmark', 'family', 'scheduler', 'flags', 'persistent', 'peName', 'stats', 'destinations']));
const PERSISTENT_FIELDS = new Set(['timeout', 'netmask']);
const DESTINATION_FIELDS = new FieldNames(new Set(['address', 'port', 'weight', 'forward', 'upperThreshold', 'lowerThreshold', 'tunnel', 'family', 'activeConns', 'inactiveConns', 'persistentConns', 'stats']));
const TUNNEL_FIELDS = new Set(['type', 'port', 'flags']);
const DAEMON_FIELDS = new Set(['state', 'interface', 'syncId', 'maxLen', 'group', 'port', 'ttl']);

export class RequestWriter {
  private bytes: Uint8Array;
  // The same buffer as 16- and 32-bit words: every field of a record is
  // naturally aligned and in host byte order, so a field is one store.
  private u16: Uint16Array;
  private u32: Uint32Array;
  private n = 0;
  private at = 0; // offset of the record being written
  // Bytes from here on may hold an earlier batch's records (a spare buffer
  // is zeroed only as far as the records expected; an op may write more
  // than one, as listDestinations does).
  private zeroedTo: number;
  private readonly stringList: string[] = [];
  private readonly stringIds = new Map<string, number>();
  // The service identity written last, for the ops that name the same
  // object again (a service's destinations, written one after another).
  private lastKey: object | undefined;
  private lastKeyAt = 0;
  private lastKeyAf = 0;

  /** `spare`: a buffer of an earlier batch to write into when it is big enough (its pages are warm). */
  constructor(expected = 1, spare?: Uint8Array) {
    const need = Math.max(1, expected) * SIZE;
    if (spare && spare.length >= need) {
      this.bytes = spare;
      spare.fill(0, 0, need); // it holds an earlier batch; a fresh buffer is zeroed already
    } else {
      this.bytes = zeroedBytes(need);
    }
    this.zeroedTo = need;
    this.u16 = new Uint16Array(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length >> 1);
    this.u32 = new Uint32Array(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length >> 2);
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

  /** Starts a record for `cmd`; returns its index. Records past those written are zero (see the constructor and grow()). */
  begin(cmd: number, flags = 0): number {
    if ((this.n + 1) * SIZE > this.bytes.length) this.grow();
    const at = this.n * SIZE;
    if (at >= this.zeroedTo) {
      this.bytes.fill(0, at, at + SIZE);
      this.zeroedTo = at + SIZE;
    }
    this.at = at;
    this.bytes[at + REQ_CMD] = cmd;
    this.bytes[at + REQ_FLAGS] = flags;
    return this.n++;
  }

  /** Drops the record begun last (its fields failed validation). */
  abandon(): void {
    this.n--;
    this.bytes.fill(0, this.n * SIZE, (this.n + 1) * SIZE);
    if (this.lastKeyAt === this.n * SIZE) this.lastKey = undefined;
  }

  /** The identity of a service; returns its family code (AF_INET / AF_INET6). */
  serviceKey(value: unknown, field: string): number {
    const key = object(value, field);
    const at = this.at;
    this.bytes[at + REQ_FLAGS] |= FLAG_HAS_SERVICE;
    let af: number;
    if (key.fwmark !== undefined) {
      const fwmark = integer(key.fwmark, field, 1, 0xffffffff, 'fwmark');
      if (key.address !== undefined) throw wrongValue(`${field}.address`, 'left out when fwmark is given (a service is one or the other)', key.address);
      af = afOf(key.family === undefined ? 'inet' : checkFamily(key.family, field, 'family'));
      this.u32[(at + REQ.SvcFwmark) >> 2] = fwmark;
    } else {
      const protocol = tableValue(IPPROTO, key.protocol, field, 'protocol');
      const family = writeAddress(key.address, this.bytes, at + REQ_SVC_ADDR, field, 'address');
      if (key.family !== undefined && checkFamily(key.family, field, 'family') !== family)
        throw wrongValue(`${field}.family`, `'${family}', the family of ${field}.address`, key.family);
      af = family === 'inet' ? AF_INET : AF_INET6;
      this.u16[(at + REQ_SVC_PROTOCOL) >> 1] = protocol;
      this.u16[(at + REQ_SVC_PORT) >> 1] = port(key.port, field, 'port');
    }
    this.u16[(at + REQ_SVC_AF) >> 1] = af;
    this.lastKey = key;
    this.lastKeyAt = at;
    this.lastKeyAf = af;
    return af;
  }

  /**
   * A service's identity only (delete, get, zero, destination ops). The
   * object written last, named again, is copied from its record: it was
   * checked field by field there, in this same pass, and cannot have
   * changed since (a batch is written without a turn of the event loop).
   */
  serviceKeyOnly(key: unknown, field: string): number {
    const at = this.at;
    this.bytes[at + REQ_FLAGS] |= FLAG_SERVICE_KEY_ONLY;
    if (key !== this.lastKey || key === undefined) return this.serviceKey(key, field);
    this.bytes[at + REQ_FLAGS] |= FLAG_HAS_SERVICE;
    const u16 = this.u16;
    const from = (this.lastKeyAt + KEY_FROM) >> 1;
    const to = (at + KEY_FROM) >> 1;
    for (let k = 0; k < KEY_WORDS; k++) u16[to + k] = u16[from + k];
    return this.lastKeyAf;
  }

  /** A full service specification. */
  serviceSpec(spec: unknown, field: string): number {
    const af = this.serviceKey(spec, field);
    const o = spec as Record<string, unknown>;
    SERVICE_FIELDS.check(o, field);
    const at = this.at;
    this.u16[(at + REQ.SvcSched) >> 1] = this.moduleName(o.scheduler ?? 'wlc', field, 'scheduler', SCHEDNAME_MAXLEN - 1);
    let flags = 0;
    if (o.flags !== undefined) {
      const f = object(o.flags, field, 'flags');
      knownFields(f, SERVICE_FLAG_FIELDS, `${field}.flags`);
      for (let i = 0; i < SERVICE_FLAG_NAMES.length; i++)
        if (optionalBoolean(f[SERVICE_FLAG_NAMES[i]], `${field}.flags`, false, SERVICE_FLAG_NAMES[i])) flags |= SERVICE_FLAG_BITS[i];
    }
    // No persistence: the kernel's defaults, as ipvsadm sends them.
    let timeout = 0;
    // (255.255.255.255 reads the same in either byte order.)
    let netmask: number | Uint8Array = af === AF_INET6 ? 128 : 0xffffffff;
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
    if (typeof netmask === 'number') this.u32[(at + REQ.SvcNetmask) >> 2] = netmask;
    else this.bytes.set(netmask, at + REQ.SvcNetmask); // network order, as the kernel keeps it
    if (o.peName !== undefined) this.u16[(at + REQ.SvcPe) >> 1] = this.moduleName(o.peName, field, 'peName', PENAME_MAXLEN - 1);
    this.u32[(at + REQ.SvcFlags) >> 2] = flags;
    this.u32[(at + REQ.SvcMask) >> 2] = 0xffffffff;
    this.u32[(at + REQ.SvcTimeout) >> 2] = timeout;
    return af;
  }

  /** A destination's address and port; returns its family code. */
  destinationKey(value: unknown, field: string): number {
    const dest = object(value, field);
    const at = this.at;
    this.bytes[at + REQ_FLAGS] |= FLAG_DEST_KEY;
    const af = writeAddress(dest.address, this.bytes, at + REQ_DEST_ADDR, field, 'address') === 'inet' ? AF_INET : AF_INET6;
    this.u16[(at + REQ_DEST_AF) >> 1] = af;
    this.u16[(at + REQ_DEST_PORT) >> 1] = port(dest.port, field, 'port');
    return af;
  }

  /** A full destination specification. */
  destinationSpec(dest: unknown, serviceAf: number, field: string): void {
    const af = this.destinationKey(dest, field);
    const at = this.at;
    this.bytes[at + REQ_FLAGS] &= ~FLAG_DEST_KEY_ONLY;
    const o = dest as Record<string, unknown>;
    DESTINATION_FIELDS.check(o, field);
    const forward = o.forward === undefined ? FORWARD_MASQ : tableValue(FORWARD, o.forward, field, 'forward');
    // The kernel takes a destination of the other family only for tunnels.
    if (af !== serviceAf && forward !== FORWARD_TUNNEL) {
      const service = serviceAf === AF_INET ? 'IPv4' : 'IPv6';
      throw wrongValue(`${field}.address`, `an ${service} address like the service's (the kernel mixes families only with forward 'tunnel')`, o.address);
    }
    this.u32[(at + REQ_DEST_FWD) >> 2] = forward;
    this.u32[(at + REQ_DEST_WEIGHT) >> 2] = o.weight === undefined ? 1 : integer(o.weight, field, 0, 0x7fffffff, 'weight');
    if (o.upperThreshold !== undefined) this.u32[(at + REQ.DestUThresh) >> 2] = integer(o.upperThreshold, field, 0, 0xffffffff, 'upperThreshold');
    if (o.lowerThreshold !== undefined) this.u32[(at + REQ.DestLThresh) >> 2] = integer(o.lowerThreshold, field, 0, 0xffffffff, 'lowerThreshold');
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
      this.u16[(at + REQ.DestTunPort) >> 1] = udpPort;
      this.u16[(at + REQ.DestTunFlags) >> 1] = flags;
    }
  }

  /** Connection timeouts in seconds; one left out (0) stays as it is in the kernel. */
  timeouts(value: unknown): void {
    const t = object(value, 'timeouts');
    knownFields(t, TIMEOUT_FIELDS, 'timeouts');
    const one = (k: string) => (t[k] === undefined ? 0 : timeoutSeconds(t[k], 'timeouts', k));
    const at = this.at;
    this.flag(FLAG.hasTimeouts);
    this.u32[(at + REQ.TimeoutTcp) >> 2] = one('tcp');
    this.u32[(at + REQ.TimeoutTcpFin) >> 2] = one('tcpFin');
    this.u32[(at + REQ.TimeoutUdp) >> 2] = one('udp');
  }

  /** A sync daemon to start. */
  daemonConfig(value: unknown): void {
    const cfg = object(value, 'daemon');
    knownFields(cfg, DAEMON_FIELDS, 'daemon');
    const c = cfg as unknown as DaemonConfig;
    const at = this.at;
    this.flag(FLAG.hasDaemon);
    this.u32[(at + REQ.DaemonState) >> 2] = daemonState(c.state, 'daemon.state');
    const ifname = interfaceName(c.interface, 'daemon.interface', IFNAME_MAXLEN - 1);
    this.u16[(at + REQ.DaemonIfn) >> 1] = this.string(ifname, 'daemon', 'interface');
    this.u32[(at + REQ.DaemonSyncId) >> 2] = c.syncId === undefined ? 0 : integer(c.syncId, 'daemon', 0, 255, 'syncId');
    let has = 0;
    if (c.maxLen !== undefined) {
      this.u16[(at + REQ.DaemonMaxlen) >> 1] = integer(c.maxLen, 'daemon', 1, 65535, 'maxLen');
      has |= FLAG.daemonHasMaxlen;
    }
    if (c.port !== undefined) {
      this.u16[(at + REQ.DaemonPort) >> 1] = integer(c.port, 'daemon', 1, 65535, 'port');
      has |= FLAG.daemonHasPort;
    }
    if (c.ttl !== undefined) {
      this.bytes[at + REQ.DaemonTtl] = integer(c.ttl, 'daemon', 1, 255, 'ttl');
      has |= FLAG.daemonHasTtl;
    }
    if (c.group !== undefined) {
      const family = writeAddress(c.group, this.bytes, at + REQ.DaemonGroup, 'daemon', 'group');
      this.u16[(at + REQ.DaemonGroupAf) >> 1] = afOf(family);
    }
    this.bytes[at + REQ.DaemonHas] = has;
  }

  /** A daemon to stop: only its state is read by the kernel. */
  daemonStop(state: unknown): void {
    this.flag(FLAG.hasDaemon);
    this.u32[(this.at + REQ.DaemonState) >> 2] = daemonState(state, 'state');
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
    const next = zeroedBytes(this.bytes.length * 2);
    next.set(this.bytes);
    this.bytes = next;
    this.u16 = new Uint16Array(next.buffer);
    this.u32 = new Uint32Array(next.buffer);
  }
}

// Every batch's writer is dropped when its call ends (util/keep-layout.ts says why one is kept).
keepLayout(new RequestWriter());
