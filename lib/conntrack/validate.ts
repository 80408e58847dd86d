/**
 * Checks conntrack filters and keys before anything is sent, with the
 * library's one checking module (lib/util/check.ts), and turns them into
 * the plain objects the addon reads (families and protocols as numbers).
 * Entries read from the kernel pass as keys, and their tuples as tuple
 * filters, as they are.
 */
import * as check from '../util/check.js';
import { parseAddress } from '../util/address.js';
import { CT, FAMILY, GROUP, ICMP_PROTOCOLS, PORT_PROTOCOLS } from './constants.js';
import type { ConntrackEventType, ConntrackFamily, TupleFilter } from './types.js';

/** A tuple as the addon reads it (addresses in canonical text). */
export type NativeTuple = TupleFilter;

export interface NativeFilter {
  family: number;
  protocol?: number;
  orig?: NativeTuple;
  reply?: NativeTuple;
  zone?: number;
  mark?: number;
  markMask?: number;
  statusMask?: number;
  statusValue?: number;
}

export interface NativeKey {
  family: number;
  protocol: number;
  direction: 'orig' | 'reply';
  tuple: NativeTuple;
  zone?: number;
  id?: number;
}

const FAMILIES = ['inet', 'inet6'] as const;
const TUPLE_FIELDS = new Set(['src', 'dst', 'srcPort', 'dstPort', 'icmpType', 'icmpCode', 'icmpId', 'zone']);
const FILTER_FIELDS = new Set(['family', 'protocol', 'orig', 'reply', 'zone', 'mark', 'status']);
// A key takes what an entry carries, so an entry read back is a key.
const KEY_FIELDS = new Set([
  'family', 'protocol', 'orig', 'reply', 'zone', 'id',
  'protonum', 'status', 'state', 'timeout', 'mark', 'use', 'counters', 'timestamp', 'labels', 'helper',
]);
const EVENT_TYPES = Object.keys(GROUP) as ConntrackEventType[];

/** A protocol by name or number, as its number. */
export function protocol(value: unknown, field: string): number {
  if (typeof value === 'number') return check.integer(value, field, 0, 255);
  return check.tableValue(CT.protocols, value, field);
}

function family(value: unknown, field: string): ConntrackFamily {
  return check.oneOf(value, FAMILIES, field);
}

/** The address's family; it must agree with `known` (a family given, or an earlier address). */
function address(value: unknown, field: string, known: Known): string {
  const text = check.string(value, field);
  let parsed;
  try {
    parsed = parseAddress(text, field);
  } catch {
    throw check.wrongValue(field, 'an IPv4 or IPv6 address', value);
  }
  if (known.family && known.family !== parsed.family) {
    const why = known.from ? `an ${known.family === 'inet' ? 'IPv4' : 'IPv6'} address, as ${known.from} is` : `an address of family ${known.family}`;
    throw check.wrongValue(field, why, value);
  }
  if (!known.family) {
    known.family = parsed.family;
    known.from = field;
  }
  return parsed.text;
}

function tuple(value: unknown, field: string, proto: number | undefined, known: Known): NativeTuple {
  const o = check.object(value, field);
  check.knownFields(o, TUPLE_FIELDS, field);
  const t: NativeTuple = {};
  if (o.src !== undefined) t.src = address(o.src, `${field}.src`, known);
  if (o.dst !== undefined) t.dst = address(o.dst, `${field}.dst`, known);
  const ports = o.srcPort !== undefined || o.dstPort !== undefined;
  if (ports && (proto === undefined || !PORT_PROTOCOLS.has(proto)))
    throw check.wrongValue(`${field}.${o.srcPort !== undefined ? 'srcPort' : 'dstPort'}`, 'given only with a protocol that has ports (tcp, udp, sctp, dccp, udplite)', o.srcPort ?? o.dstPort);
  if (o.srcPort !== undefined) t.srcPort = check.port(o.srcPort, field, 'srcPort');
  if (o.dstPort !== undefined) t.dstPort = check.port(o.dstPort, field, 'dstPort');
  for (const k of ['icmpType', 'icmpCode', 'icmpId'] as const) {
    if (o[k] === undefined) continue;
    if (proto === undefined || !ICMP_PROTOCOLS.has(proto))
      throw check.wrongValue(`${field}.${k}`, 'given only with protocol icmp or icmpv6', o[k]);
    t[k] = check.integer(o[k], field, 0, k === 'icmpId' ? 65535 : 255, k);
  }
  if (o.zone !== undefined) t.zone = check.integer(o.zone, field, 0, 65535, 'zone');
  return t;
}

function statusBits(value: unknown, field: string): number {
  if (!Array.isArray(value)) throw check.wrongType(field, 'an array of status flags', value);
  let bits = 0;
  value.forEach((v, i) => {
    bits |= 1 << check.tableValue(CT.status, v, `${field}[${i}]`);
  });
  return bits >>> 0;
}

/** What fixes the family so far: the field that gave it, for messages. */
interface Known {
  family?: ConntrackFamily;
  from?: string;
}

/** The object's own `family`, when it gives one. */
function knownFamily(o: Record<string, unknown>, field: string): Known {
  return o.family === undefined ? {} : { family: family(o.family, `${field}.family`), from: `${field}.family` };
}

/** A filter (undefined: every entry) as the addon reads it. */
export function filter(value: unknown, field = 'filter'): NativeFilter {
  if (value === undefined) return { family: 0 };
  const o = check.object(value, field);
  check.knownFields(o, FILTER_FIELDS, field);
  const known = knownFamily(o, field);
  const f: NativeFilter = { family: 0 };
  const proto = o.protocol === undefined ? undefined : protocol(o.protocol, `${field}.protocol`);
  if (proto !== undefined) f.protocol = proto;
  if (o.orig !== undefined) f.orig = tuple(o.orig, `${field}.orig`, proto, known);
  if (o.reply !== undefined) f.reply = tuple(o.reply, `${field}.reply`, proto, known);
  if (known.family) f.family = FAMILY[known.family];
  if (o.zone !== undefined) f.zone = check.integer(o.zone, `${field}.zone`, 0, 65535);
  if (typeof o.mark === 'object' && o.mark !== null) {
    const m = check.object(o.mark, `${field}.mark`);
    check.knownFields(m, new Set(['value', 'mask']), `${field}.mark`);
    f.markMask = check.integer(m.mask, `${field}.mark`, 0, 0xffffffff, 'mask');
    f.mark = check.integer(m.value, `${field}.mark`, 0, 0xffffffff, 'value');
    if ((f.mark & f.markMask) >>> 0 !== f.mark)
      throw check.wrongValue(`${field}.mark.value`, `bits within mark.mask (0x${f.markMask.toString(16)})`, f.mark);
  } else if (o.mark !== undefined) {
    f.mark = check.integer(o.mark, `${field}.mark`, 0, 0xffffffff);
  }
  if (o.status !== undefined) {
    const bits = statusBits(o.status, `${field}.status`);
    if (bits) f.statusMask = f.statusValue = bits;
  }
  return f;
}

/** A key (an entry read back, or written by hand) as the addon reads it. */
export function key(value: unknown, field = 'key'): NativeKey {
  const o = check.object(value, field);
  check.knownFields(o, KEY_FIELDS, field);
  const known = knownFamily(o, field);
  const proto = protocol(o.protocol, `${field}.protocol`);
  const direction = o.orig !== undefined ? 'orig' : 'reply';
  if (o[direction] === undefined) throw check.wrongType(`${field}.orig`, 'a tuple (or reply: a tuple)', undefined);
  const t = tuple(o[direction], `${field}.${direction}`, proto, known);
  if (t.src === undefined) throw check.wrongType(`${field}.${direction}.src`, 'an IPv4 or IPv6 address', undefined);
  if (t.dst === undefined) throw check.wrongType(`${field}.${direction}.dst`, 'an IPv4 or IPv6 address', undefined);
  const k: NativeKey = { family: FAMILY[known.family!], protocol: proto, direction, tuple: t };
  if (o.zone !== undefined) k.zone = check.integer(o.zone, `${field}.zone`, 0, 65535);
  if (o.id !== undefined) k.id = check.integer(o.id, `${field}.id`, 0, 0xffffffff);
  return k;
}

/** A family for flush() (undefined: every family), as its number. */
export function flushFamily(value: unknown): number {
  return value === undefined ? 0 : FAMILY[family(value, 'family')];
}

/** The multicast groups to join, as a bit mask. */
export function eventGroups(value: unknown, field: string): number {
  const types = value === undefined ? EVENT_TYPES : value;
  if (!Array.isArray(types) || types.length === 0) throw check.wrongType(field, 'a non-empty array of event types', value);
  let groups = 0;
  types.forEach((t, i) => {
    groups |= 1 << GROUP[check.oneOf(t, EVENT_TYPES, `${field}[${i}]`)];
  });
  return groups;
}
