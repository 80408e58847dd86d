/**
 * Reads the entry records the addon returns (native/conntrack/records.h)
 * into ConntrackEntry objects, each built once, field by field, straight
 * from the buffer. The offsets come from the addon, never retyped here.
 */
import { ipv4Text } from '../util/address.js';
import { keepLayout } from '../util/keep-layout.js';
import { CT, PROTOCOL_NAME, STATE_NAME, STATUS_NAME } from './constants.js';
import type { ConntrackEntry, ConntrackFamily, ConntrackProtocol, Counters, StatusFlag, Tuple } from './types.js';

const L = CT.layout;
const LE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// Which optional parts a record holds (native/conntrack/types.h, present::*).
const P = CT.present;

/** What the addon hands back: records and the strings they refer to (index + 1). */
export interface NativeRecords {
  records: ArrayBuffer;
  strings: string[];
}

export class EntryRecords {
  readonly view: DataView;
  readonly bytes: Uint8Array;
  readonly count: number;

  constructor(private readonly r: NativeRecords) {
    this.view = new DataView(r.records);
    this.bytes = new Uint8Array(r.records);
    this.count = r.records.byteLength / L.Size;
  }

  /** The record's kind: an Event value (0 for a dump), or the overrun marker. */
  kind(i: number): number {
    return this.bytes[i * L.Size + L.Event];
  }

  /** Which request or key record i answers. */
  index(i: number): number {
    return this.view.getUint32(i * L.Size + L.Index, LE);
  }

  private tuple(at: number, family: ConntrackFamily): Tuple {
    const v = this.view;
    const src = family === 'inet' ? ipv4Text(this.bytes, at + L.Src) : this.r.strings[v.getUint32(at + L.SrcText, LE) - 1];
    const dst = family === 'inet' ? ipv4Text(this.bytes, at + L.Dst) : this.r.strings[v.getUint32(at + L.DstText, LE) - 1];
    const flags = this.bytes[at + L.TupleFlags];
    const t: Tuple = { src, dst };
    if (flags & L.HasPorts) {
      t.srcPort = v.getUint16(at + L.Sport, LE);
      t.dstPort = v.getUint16(at + L.Dport, LE);
    }
    if (flags & L.HasIcmp) {
      t.icmpType = this.bytes[at + L.IcmpType];
      t.icmpCode = this.bytes[at + L.IcmpCode];
      t.icmpId = v.getUint16(at + L.Sport, LE);
    }
    if (flags & L.HasZone) t.zone = v.getUint16(at + L.TupleZone, LE);
    return t;
  }

  private counters(at: number): Counters {
    return { packets: this.view.getBigUint64(at, LE), bytes: this.view.getBigUint64(at + 8, LE) };
  }

  entry(i: number): ConntrackEntry {
    const at = i * L.Size;
    const v = this.view;
    const b = this.bytes;
    const present = v.getUint32(at + L.Present, LE);
    const family: ConntrackFamily = b[at + L.Family] === CT.NFPROTO_IPV6 ? 'inet6' : 'inet';
    const protonum = b[at + L.Orig + L.Proto];
    const statusBits = v.getUint32(at + L.Status, LE);
    const status: StatusFlag[] = [];
    for (let bit = 0; bit < STATUS_NAME.length; bit++)
      if (statusBits & (1 << bit) && STATUS_NAME[bit]) status.push(STATUS_NAME[bit] as StatusFlag);
    const e: ConntrackEntry = {
      family,
      protocol: (PROTOCOL_NAME.get(protonum) as ConntrackProtocol | undefined) ?? protonum,
      protonum,
      orig: this.tuple(at + L.Orig, family),
      reply: this.tuple(at + L.Reply, family),
      status,
      mark: v.getUint32(at + L.Mark, LE),
      zone: v.getUint16(at + L.Zone, LE),
    };
    if (present & P.state) {
      const s = b[at + L.State];
      e.state = STATE_NAME.get(protonum)?.[s] ?? String(s);
    }
    if (present & P.timeout) e.timeout = v.getUint32(at + L.Timeout, LE);
    if (present & P.id) e.id = v.getUint32(at + L.Id, LE);
    if (present & P.use) e.use = v.getUint32(at + L.Use, LE);
    if (present & (P.countersOrig | P.countersReply))
      e.counters = { orig: this.counters(at + L.PacketsOrig), reply: this.counters(at + L.PacketsReply) };
    if (present & P.timestamp) {
      e.timestamp = { start: v.getBigUint64(at + L.Start, LE) };
      if (present & P.timestampStop) e.timestamp.stop = v.getBigUint64(at + L.Stop, LE);
    }
    if (present & P.labels) {
      const labels: number[] = [];
      for (let k = 0; k < 128; k++) if (b[at + L.Labels + (k >> 3)] & (1 << (k & 7))) labels.push(k);
      e.labels = labels;
    }
    if (present & P.helper) e.helper = this.r.strings[v.getUint32(at + L.Helper, LE) - 1];
    return e;
  }

  /** Every record as an entry. */
  entries(): ConntrackEntry[] {
    const out = new Array<ConntrackEntry>(this.count);
    for (let i = 0; i < this.count; i++) out[i] = this.entry(i);
    return out;
  }
}

// Each reply's reader is dropped once its entries are read (util/keep-layout.ts says why one is kept).
keepLayout(new EntryRecords({ records: new ArrayBuffer(0), strings: [] }));
