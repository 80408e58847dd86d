/**
 * Header fields by where a rule loads them from, as nft names them (`ip
 * saddr`, `tcp dport`, `ether type`), each with how nft prints a value of
 * it; and a load nft made of neighbouring fields (it merges adjacent
 * matches, `tcp sport 1024 tcp dport 22`, into one comparison), split back
 * into them as nft lists it.
 */
import ipaddr from 'ipaddr.js';

import { type PayloadBase, l4protos } from './names.js';

/** What a register holds: the match's left side and how to print a value of it. */
export interface Load {
  text: string;
  value: (b: Buffer) => string;
  /** A load of neighbouring fields: each, with where its bytes sit in the value. */
  parts?: FieldPart[];
}

/** One field of a load of several. */
export interface FieldPart {
  load: Load;
  at: number;
  len: number;
}

/** The layers a protocol match can imply, by the payload base their fields are loaded from. */
export type HeaderBase = Exclude<PayloadBase, 'inner'>;

/** What a rule is known to match before a load: the network header's family and the transport protocol. */
export interface HeaderContext {
  family: 'ip' | 'ip6' | undefined;
  l4: string | undefined;
  /**
   * The rule's table family is known (and is neither ip nor ip6): with no
   * protocol match before it, a network-header load then has no family,
   * and nft lists it raw (`@nh,128,32`), as it does in an inet table. Left
   * out, the family is guessed from the load's length.
   */
  tableKnown?: boolean;
}

/** The transport protocols whose port fields nft names after them (`tcp dport`); others' are `th dport`. */
export const PORT_PROTOCOLS: ReadonlySet<string> = new Set(['tcp', 'udp', 'udplite', 'sctp', 'dccp']);

export const hex = (b: Buffer) => `0x${b.toString('hex')}`;
/** A number nft keeps in host order (marks, and what numgen and hash compute). */
export const hostOrder = (b: Buffer) => (b.length >= 4 ? b.readUInt32LE(0) : b.readUIntLE(0, b.length));
export const mark = (b: Buffer) => `0x${hostOrder(b).toString(16).padStart(8, '0')}`;
export const port = (b: Buffer) => String(b.readUInt16BE(0));
export const proto = (b: Buffer) => String(l4protos.name(b[0]));
export const integer = (b: Buffer) => String(hostOrder(b));
export const address = (b: Buffer) => (b.length === 4 ? ipaddr.fromByteArray([...b]).toString() : b.length === 16 ? (ipaddr.fromByteArray([...b]) as ipaddr.IPv6).toRFC5952String() : hex(b));
/** An interface name; compared without its NUL (fewer than 16 bytes), a prefix: nft's `"eth*"`. */
export const ifname = (b: Buffer) => {
  const end = b.indexOf(0);
  return JSON.stringify(end < 0 ? `${b.toString()}${b.length < 16 ? '*' : ''}` : b.subarray(0, end).toString());
};
const etherAddress = (b: Buffer) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(':');

/** nft's names for link-layer protocols (ether type, meta protocol), in network order. */
const ETHER_TYPES: Readonly<Record<number, string>> = { 0x0800: 'ip', 0x0806: 'arp', 0x86dd: 'ip6', 0x8100: '8021q', 0x88a8: '8021ad' };
export const etherType = (b: Buffer) => (b.length === 2 ? ETHER_TYPES[b.readUInt16BE(0)] : undefined) ?? hex(b);
/** nft's names for interface hardware types (meta iiftype, oiftype: ARPHRD_*, host order). */
const ARPHRD: Readonly<Record<number, string>> = { 1: 'ether', 512: 'ppp', 768: 'ipip', 769: 'ipip6', 772: 'loopback', 776: 'sit', 778: 'ipgre' };
export const hardwareType = (b: Buffer) => (b.length === 2 ? (ARPHRD[b.readUInt16LE(0)] ?? String(b.readUInt16LE(0))) : hex(b));

/** The Ethernet header's fields: nft's `ether` (its name wherever a rule loads the link layer). */
const LINK: ReadonlyArray<[offset: number, len: number, Load]> = [
  [0, 6, { text: 'ether daddr', value: etherAddress }],
  [6, 6, { text: 'ether saddr', value: etherAddress }],
  [12, 2, { text: 'ether type', value: etherType }],
];

/**
 * A network-header field by offset: ip/ip6 saddr/daddr, printed as an
 * address (or a prefix of one), and IPv4's protocol and ttl. `family` is
 * the header the rule is known to match (its table's, or that of a
 * protocol match before the load); without it, none where the table's
 * family is known (nft prints the load raw), else a load of 4 bytes or
 * fewer is taken for IPv4's.
 */
function networkField(offset: number, len: number, family: 'ip' | 'ip6' | undefined, tableKnown = false): Load | undefined {
  if (family === undefined && tableKnown) return undefined;
  if (family === 'ip' && len === 1 && offset === 9) return { text: 'ip protocol', value: proto };
  if (family === 'ip' && len === 1 && offset === 8) return { text: 'ip ttl', value: (b) => String(b[0]) };
  const v6 = family === 'ip6' || (family === undefined && len > 4);
  const text = v6 ? (offset === 8 ? 'ip6 saddr' : offset === 24 ? 'ip6 daddr' : undefined) : offset === 12 ? 'ip saddr' : offset === 16 ? 'ip daddr' : undefined;
  if (!text || len > (v6 ? 16 : 4)) return undefined;
  const full = v6 ? 16 : 4;
  return { text, value: (b) => (b.length < full ? `${address(Buffer.concat([b, Buffer.alloc(full - b.length)]))}/${b.length * 8}` : address(b)) };
}

/** The field nft names for a load of `len` bytes at `offset` of `base`, if it names one. */
export function headerField(base: PayloadBase | number, offset: number, len: number, ctx: HeaderContext): Load | undefined {
  if (base === 'network') return networkField(offset, len, ctx.family, ctx.tableKnown);
  if (base === 'transport' && len === 2 && (offset === 0 || offset === 2)) return { text: `${ctx.l4 ?? 'th'} ${offset === 0 ? 'sport' : 'dport'}`, value: port };
  if (base === 'll') return LINK.find(([o, l]) => o === offset && l === len)?.[2];
  return undefined;
}

/** Whole fields, in order, that one load of `base` may span when nft merges neighbouring matches. */
function mergeable(base: PayloadBase | number, ctx: HeaderContext): ReadonlyArray<[number, number]> {
  if (base === 'll') return LINK.map(([o, l]) => [o, l]);
  if (base === 'transport') return [[0, 2], [2, 2]];
  if (base === 'network') return ctx.family === 'ip6' ? [[8, 16], [24, 16]] : [[12, 4], [16, 4]];
  return [];
}

/** A load spanning two or more whole neighbouring fields, as those fields; undefined for any other load. */
export function mergedFields(base: PayloadBase | number, offset: number, len: number, ctx: HeaderContext): FieldPart[] | undefined {
  const parts: FieldPart[] = [];
  let at = offset;
  for (const [o, l] of mergeable(base, ctx)) {
    if (o !== at || at + l > offset + len) continue;
    const load = headerField(base, o, l, ctx);
    if (!load) return undefined;
    parts.push({ load, at: at - offset, len: l });
    at += l;
  }
  return parts.length >= 2 && at === offset + len ? parts : undefined;
}
