/**
 * Reads the reply records the addon returns (native/ipvs/records.h) into
 * the public Service, Destination, Daemon, Info and Timeouts shapes. Each
 * object is built once, field by field, straight from the buffer.
 */
import { ipv4Text } from '../util/address.js';
import { keepLayout } from '../util/keep-layout.js';
import { AF_INET6, DAEMON_STATE, FORWARD, IPPROTO, SVC_F, TUNNEL_FLAG, TUNNEL_TYPE, nameOf } from './constants.js';
import { FLAG, KIND, LITTLE_ENDIAN, REP } from './records.js';
import type { Daemon, Destination, Family, ForwardMethod, Info, Protocol, Service, Stats, Timeouts } from './types.js';

const LE = LITTLE_ENDIAN;
const SIZE = REP.size;
// Hot offsets, read once from the layout.
const REP_KIND = REP.Kind;
const REP_REQUEST = REP.Request;
const REP_AF = REP.Af;
const REP_PORT = REP.Port;
const REP_ADDR = REP.Addr;
const REP_ADDR_TEXT = REP.AddrText;
const REP_DEST_FWD = REP.DestFwd;
const REP_DEST_WEIGHT = REP.DestWeight;
const REP_DEST_UTHRESH = REP.DestUThresh;
const REP_DEST_LTHRESH = REP.DestLThresh;
const REP_DEST_ACTIVE = REP.DestActive;
const REP_DEST_INACTIVE = REP.DestInactive;
const REP_DEST_PERSIST = REP.DestPersist;
const REP_STATS = REP.Stats;
if (REP_STATS % 8 !== 0 || SIZE % 8 !== 0) throw new Error('ipvs-netlink: the addon\'s reply counters are not 8-byte aligned');

/** Forwarding method names by number (the kernel's values are small), from the constants table. */
const FORWARD_NAMES: ForwardMethod[] = [];
for (const [name, value] of Object.entries(FORWARD) as [ForwardMethod, number][]) FORWARD_NAMES[value] ??= name;
const forwardName = (n: number): ForwardMethod => FORWARD_NAMES[n] ?? 'masq';

/** What the addon hands back for a batch. */
export interface NativeReplies {
  /** The requests that failed, in order; every other one succeeded. */
  failures: NativeFailure[];
  /** Reply records, REP.size bytes each. */
  records: ArrayBuffer;
  /** Strings the records refer to (index + 1). */
  strings: string[];
}

export interface NativeFailure {
  index: number;
  errno: number;
  code: string;
  /** The kernel's extended-ack text (often empty); with `syscall`, our account of the broken conversation. */
  message: string;
  /** strerror() of errno. */
  text: string;
  /** Set when the conversation broke (timeout, ENOBUFS, a failed system call) instead of the kernel refusing. */
  syscall?: string;
}

/** Everything that came back for one request. */
export interface RequestReplies {
  services: Service[];
  destinations: Destination[];
  daemons: Daemon[];
  info?: Info;
  timeouts?: Timeouts;
}

/**
 * Reads the records of one reply buffer. Every field of a record is
 * naturally aligned and in host byte order, so the hot fields are read
 * through 16-, 32- and 64-bit views of the buffer; the rest through a
 * DataView.
 */
export class ReplyRecords {
  readonly view: DataView;
  readonly bytes: Uint8Array;
  readonly count: number;
  private readonly u16: Uint16Array;
  private readonly u32: Uint32Array;
  private readonly u64: BigUint64Array;

  constructor(
    records: ArrayBuffer,
    readonly strings: string[],
  ) {
    this.view = new DataView(records);
    this.bytes = new Uint8Array(records);
    this.u16 = new Uint16Array(records, 0, records.byteLength >> 1);
    this.u32 = new Uint32Array(records, 0, records.byteLength >> 2);
    this.u64 = new BigUint64Array(records, 0, records.byteLength >> 3);
    this.count = records.byteLength / SIZE;
  }

  kind(i: number): number {
    return this.bytes[i * SIZE + REP_KIND];
  }

  request(i: number): number {
    return this.u32[(i * SIZE + REP_REQUEST) >> 2];
  }

  /** Service record i; `withStats` false leaves out the counters (no BigInt is made). */
  service(i: number, withStats = true): Service {
    const at = i * SIZE;
    const v = this.view;
    const af = v.getUint16(at + REP.Af, LE);
    const fwmark = v.getUint32(at + REP.SvcFwmark, LE);
    const s = (
      fwmark
        ? { fwmark }
        : {
            protocol: protocolName(v.getUint16(at + REP.SvcProtocol, LE)),
            address: this.address(at, af),
            port: v.getUint16(at + REP.Port, LE),
          }
    ) as Service;
    s.family = familyOf(af);
    s.scheduler = this.string(v.getUint16(at + REP.SvcSched, LE));
    const flags = v.getUint32(at + REP.SvcFlags, LE);
    s.flags = {
      onePacket: (flags & SVC_F.ONEPACKET) !== 0,
      sched1: (flags & SVC_F.SCHED1) !== 0,
      sched2: (flags & SVC_F.SCHED2) !== 0,
      sched3: (flags & SVC_F.SCHED3) !== 0,
    };
    if ((flags & SVC_F.PERSISTENT) !== 0) {
      const netmask = af === AF_INET6 ? v.getUint32(at + REP.SvcNetmask, LE) : ipv4Text(this.bytes, at + REP.SvcNetmask);
      s.persistent = { timeout: v.getUint32(at + REP.SvcTimeout, LE), netmask };
    }
    const pe = v.getUint16(at + REP.SvcPe, LE);
    if (pe) s.peName = this.string(pe);
    if (withStats) s.stats = this.stats(at);
    return s;
  }

  /**
   * Destination record i; `withStats` false leaves out the counters. Each
   * shape is one literal, so `stats` lives inside the object: added
   * afterwards it went to a separate property store (measured: 32 more
   * bytes per destination, 3 MiB in a dump of 100,000, and the decode
   * slower for the change of shape).
   */
  destination(i: number, withStats = true): Destination {
    const at = i * SIZE;
    const u16 = this.u16;
    const u32 = this.u32;
    const af = u16[(at + REP_AF) >> 1];
    const forward = forwardName(u32[(at + REP_DEST_FWD) >> 2]);
    const address = af === AF_INET6 ? this.string(u32[(at + REP_ADDR_TEXT) >> 2]) : ipv4Text(this.bytes, at + REP_ADDR);
    const port = u16[(at + REP_PORT) >> 1];
    const family = af === AF_INET6 ? 'inet6' : 'inet';
    const weight = u32[(at + REP_DEST_WEIGHT) >> 2];
    const upperThreshold = u32[(at + REP_DEST_UTHRESH) >> 2];
    const lowerThreshold = u32[(at + REP_DEST_LTHRESH) >> 2];
    const activeConns = u32[(at + REP_DEST_ACTIVE) >> 2];
    const inactiveConns = u32[(at + REP_DEST_INACTIVE) >> 2];
    const persistentConns = u32[(at + REP_DEST_PERSIST) >> 2];
    const d: Destination = withStats
      ? { address, port, family, weight, forward, upperThreshold, lowerThreshold, activeConns, inactiveConns, persistentConns, stats: this.stats(at) }
      : ({ address, port, family, weight, forward, upperThreshold, lowerThreshold, activeConns, inactiveConns, persistentConns } as Destination);
    // The kernel reports tunnel attributes for every destination; they only
    // mean something for tunnel forwarding.
    if (forward === 'tunnel' && this.bytes[at + REP.HasTunnel]) {
      const v = this.view;
      d.tunnel = {
        type: nameOf(TUNNEL_TYPE, this.bytes[at + REP.DestTunType]) ?? 'ipip',
        port: v.getUint16(at + REP.DestTunPort, LE),
        flags: nameOf(TUNNEL_FLAG, v.getUint16(at + REP.DestTunFlags, LE)) ?? 'nocsum',
      };
    }
    return d;
  }

  daemon(i: number): Daemon {
    const at = i * SIZE;
    const v = this.view;
    const has = this.bytes[at + REP.DaemonHas];
    const d: Daemon = {
      state: nameOf(DAEMON_STATE, v.getUint32(at + REP.DaemonState, LE)) ?? 'master',
      interface: this.string(v.getUint16(at + REP.DaemonIfn, LE)),
      syncId: v.getUint32(at + REP.DaemonSyncId, LE),
    };
    if (has & FLAG.daemonHasMaxlen) d.maxLen = v.getUint16(at + REP.DaemonMaxlen, LE);
    if (v.getUint16(at + REP.DaemonGroupAf, LE)) d.group = this.string(v.getUint32(at + REP.DaemonGroup, LE));
    if (has & FLAG.daemonHasPort) d.port = v.getUint16(at + REP.DaemonPort, LE);
    if (has & FLAG.daemonHasTtl) d.ttl = this.bytes[at + REP.DaemonTtl];
    return d;
  }

  info(i: number): Info {
    const at = i * SIZE;
    const code = this.view.getUint32(at + REP.InfoVersion, LE);
    return {
      version: `${(code >> 16) & 0xff}.${(code >> 8) & 0xff}.${code & 0xff}`,
      connTableSize: this.view.getUint32(at + REP.InfoConnTab, LE),
    };
  }

  timeouts(i: number): Timeouts {
    const at = i * SIZE;
    const v = this.view;
    return { tcp: v.getUint32(at + REP.TimeoutTcp, LE), tcpFin: v.getUint32(at + REP.TimeoutTcpFin, LE), udp: v.getUint32(at + REP.TimeoutUdp, LE) };
  }

  /** The destinations that answer one request. */
  destinationsOf(request: number): Destination[] {
    const out: Destination[] = [];
    for (let i = 0; i < this.count; i++) if (this.request(i) === request && this.kind(i) === KIND.destination) out.push(this.destination(i));
    return out;
  }

  /** Every record grouped by the request it answers. */
  byRequest(requests: number): RequestReplies[] {
    const out: RequestReplies[] = [];
    for (let r = 0; r < requests; r++) out.push({ services: [], destinations: [], daemons: [] });
    for (let i = 0; i < this.count; i++) {
      const into = out[this.request(i)];
      switch (this.kind(i)) {
        case KIND.service: into.services.push(this.service(i)); break;
        case KIND.destination: into.destinations.push(this.destination(i)); break;
        case KIND.daemon: into.daemons.push(this.daemon(i)); break;
        case KIND.info: into.info = this.info(i); break;
        case KIND.timeouts: into.timeouts = this.timeouts(i); break;
      }
    }
    return out;
  }

  /** IPv4 is formatted here; IPv6 comes as inet_ntop's text (what ipvsadm -n prints). */
  private address(at: number, af: number): string {
    return af === AF_INET6 ? this.string(this.view.getUint32(at + REP.AddrText, LE)) : ipv4Text(this.bytes, at + REP.Addr);
  }

  private string(id: number): string {
    return id ? this.strings[id - 1] : '';
  }

  private stats(at: number): Stats {
    const s = (at + REP_STATS) >> 3;
    // Absent counters (a kernel that sent none) read as zeros.
    return {
      conns: this.counter(s),
      inPackets: this.counter(s + 1),
      outPackets: this.counter(s + 2),
      inBytes: this.counter(s + 3),
      outBytes: this.counter(s + 4),
      cps: this.counter(s + 5),
      inPps: this.counter(s + 6),
      outPps: this.counter(s + 7),
      inBps: this.counter(s + 8),
      outBps: this.counter(s + 9),
    };
  }

  /**
   * 64-bit word `k` as a BigInt. Zero, the commonest value (idle rates), is
   * one shared 0n, seen in the two 32-bit halves without making a BigInt.
   */
  private counter(k: number): bigint {
    return this.u32[k << 1] === 0 && this.u32[(k << 1) + 1] === 0 ? 0n : this.u64[k];
  }
}

const familyOf = (af: number): Family => (af === AF_INET6 ? 'inet6' : 'inet');

function protocolName(n: number): Protocol {
  return (nameOf(IPPROTO, n) ?? String(n)) as Protocol;
}

// Each reply's reader is dropped once its records are read (util/keep-layout.ts says why one is kept).
keepLayout(new ReplyRecords(new ArrayBuffer(0), []));
