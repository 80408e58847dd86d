/**
 * The steps of the proxy's nftables rules, written as nft itself compiles
 * the statements they stand for (`ip daddr . meta l4proto . th dport
 * @set`, `ip saddr != 10.0.0.0/8`, `meta mark set meta mark | 0x4000`...),
 * register for register, so `nft list` prints our rules as its own and a
 * rule read back compares equal to the one written.
 */
import type { Expression } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import { parseCidr } from 'ipvs-netlink/address';

/** The parts a rule concatenates into a set key. */
export type KeyPart = 'saddr' | 'daddr' | 'l4proto' | 'dport';

/** NFT_REG_1, the first 16-byte register; the 4-byte ones (NFT_REG32_00 on) overlap it. */
const NFT_REG_1 = 1;
const NFT_REG32_00 = 8;

/** Byte offsets of the addresses in the IPv4 and IPv6 headers. */
const ADDRESS = {
  inet: { saddr: 12, daddr: 16, len: 4 },
  inet6: { saddr: 8, daddr: 24, len: 16 },
} as const;

/** From <linux/in.h>. */
export const IPPROTO = { tcp: 6, udp: 17, sctp: 132 } as const;

/** RTN_LOCAL, from <linux/rtnetlink.h>: what `fib ... type local` compares with (host order). */
const RTN_LOCAL = 2;

const bytes = (...x: number[]): Uint8Array => Uint8Array.from(x);

/**
 * nft's register for a key part starting `offset` 4-byte words into the
 * key: the 16-byte register when the part starts on one, else the 4-byte
 * register.
 */
function register(offset: number): number {
  return offset % 4 === 0 ? NFT_REG_1 + offset / 4 : NFT_REG32_00 + offset;
}

function load(part: KeyPart, family: AddressFamily, dreg: number): Expression {
  switch (part) {
    case 'saddr':
    case 'daddr':
      return { type: 'payload', base: 'network', offset: ADDRESS[family][part], len: ADDRESS[family].len, dreg };
    case 'l4proto':
      return { type: 'meta', key: 'l4proto', dreg };
    case 'dport':
      return { type: 'payload', base: 'transport', offset: 2, len: 2, dreg };
  }
}

/** Each part's size in 4-byte words, as it sits in a concatenation. */
function words(part: KeyPart, family: AddressFamily): number {
  return part === 'saddr' || part === 'daddr' ? ADDRESS[family].len / 4 : 1;
}

/**
 * `a . b . c @set`: the parts loaded into consecutive registers, then the
 * lookup. In an interval set nft stores the protocol in network order
 * (2 bytes), hence its byteorder step there.
 */
export function inSet(family: AddressFamily, parts: readonly KeyPart[], set: string, options: { interval?: boolean } = {}): Expression[] {
  const out: Expression[] = [];
  let offset = 0;
  for (const part of parts) {
    const dreg = register(offset);
    out.push(load(part, family, dreg));
    if (part === 'l4proto' && options.interval && parts.length > 1) out.push({ type: 'byteorder', sreg: dreg, dreg, op: 'hton', len: 1, size: 2 });
    offset += words(part, family);
  }
  out.push({ type: 'lookup', set, sreg: NFT_REG_1 });
  return out;
}

/** `tcp dport @set`: a protocol, then the port looked up alone. */
export function portInSet(protocol: keyof typeof IPPROTO, set: string): Expression[] {
  return [
    { type: 'meta', key: 'l4proto', dreg: NFT_REG_1 },
    { type: 'cmp', op: 'eq', sreg: NFT_REG_1, data: bytes(IPPROTO[protocol]) },
    { type: 'payload', base: 'transport', offset: 2, len: 2, dreg: NFT_REG_1 },
    { type: 'lookup', set, sreg: NFT_REG_1 },
  ];
}

/**
 * `ip saddr 10.0.0.0/8` (or `!=`): a whole-byte prefix loads only its
 * bytes; any other is masked first, as nft does.
 */
export function sourceIn(family: AddressFamily, cidrText: string, op: 'eq' | 'neq'): Expression[] {
  const cidr = parseCidr(cidrText, 'cidr');
  const full = ADDRESS[family].len;
  const network = Uint8Array.from(addressBytes(cidr.network, family));
  if (cidr.prefix % 8 === 0) {
    const len = cidr.prefix / 8;
    return [
      { type: 'payload', base: 'network', offset: ADDRESS[family].saddr, len, dreg: NFT_REG_1 },
      { type: 'cmp', op, sreg: NFT_REG_1, data: network.subarray(0, len) },
    ];
  }
  const mask = new Uint8Array(full);
  for (let i = 0; i < cidr.prefix; i++) mask[i >> 3] |= 0x80 >> (i & 7);
  return [
    { type: 'payload', base: 'network', offset: ADDRESS[family].saddr, len: full, dreg: NFT_REG_1 },
    { type: 'bitwise', sreg: NFT_REG_1, dreg: NFT_REG_1, len: full, op: 'bool', mask, xor: new Uint8Array(full) },
    { type: 'cmp', op, sreg: NFT_REG_1, data: network },
  ];
}

/** IFNAMSIZ, from <linux/if.h>: an interface name's bytes with its terminating NUL. */
const IFNAMSIZ = 16;

/**
 * `iifname "cbr0"` / `iifname "veth*"` (or `!=`), which is iptables'
 * `-i cbr0` / `-i veth+`: the input interface by name, so it need not
 * exist yet. nft compares a whole name NUL-padded to IFNAMSIZ, and a
 * wildcard's prefix alone. A name too long for an interface is left as it
 * is, for the kernel to refuse (as iptables-restore refuses `-i` with it).
 */
export function inputInterfaceName(name: string, prefix: boolean, op: 'eq' | 'neq'): Expression[] {
  const text = new TextEncoder().encode(name);
  let data = text;
  if (!prefix && text.length < IFNAMSIZ) {
    data = new Uint8Array(IFNAMSIZ);
    data.set(text);
  }
  return [
    { type: 'meta', key: 'iifname', dreg: NFT_REG_1 },
    { type: 'cmp', op, sreg: NFT_REG_1, data },
  ];
}

/** `fib saddr type local` / `fib daddr type local` (or `!=`). */
export function addressTypeLocal(which: 'saddr' | 'daddr', op: 'eq' | 'neq'): Expression[] {
  return [
    { type: 'fib', flags: [which], result: 'type', dreg: NFT_REG_1 },
    { type: 'cmp', op, sreg: NFT_REG_1, data: hostOrder32(RTN_LOCAL) },
  ];
}

/** `meta mark set meta mark | bit` */
export function setMarkBit(mark: number): Expression[] {
  return [
    { type: 'meta', key: 'mark', dreg: NFT_REG_1 },
    { type: 'bitwise', sreg: NFT_REG_1, dreg: NFT_REG_1, len: 4, op: 'bool', mask: hostOrder32(~mark >>> 0), xor: hostOrder32(mark) },
    { type: 'meta', key: 'mark', sreg: NFT_REG_1 },
  ];
}

/** `meta mark set meta mark ^ bit` */
export function flipMarkBit(mark: number): Expression[] {
  return [
    { type: 'meta', key: 'mark', dreg: NFT_REG_1 },
    { type: 'bitwise', sreg: NFT_REG_1, dreg: NFT_REG_1, len: 4, op: 'bool', mask: hostOrder32(0xffffffff), xor: hostOrder32(mark) },
    { type: 'meta', key: 'mark', sreg: NFT_REG_1 },
  ];
}

/** `meta mark & bit == bit` (set) or `== 0` (clear). */
export function markBit(mark: number, set: boolean): Expression[] {
  return [
    { type: 'meta', key: 'mark', dreg: NFT_REG_1 },
    { type: 'bitwise', sreg: NFT_REG_1, dreg: NFT_REG_1, len: 4, op: 'bool', mask: hostOrder32(mark), xor: hostOrder32(0) },
    { type: 'cmp', op: 'eq', sreg: NFT_REG_1, data: hostOrder32(set ? mark : 0) },
  ];
}

/** `ct state` one of these bits (NF_CT_STATE_BIT from <linux/netfilter/nf_conntrack_common.h>): new 8, established 2, related 4. */
export function ctStateAny(bits: number): Expression[] {
  return [
    { type: 'ct', key: 'state', dreg: NFT_REG_1 },
    { type: 'bitwise', sreg: NFT_REG_1, dreg: NFT_REG_1, len: 4, op: 'bool', mask: hostOrder32(bits), xor: hostOrder32(0) },
    { type: 'cmp', op: 'neq', sreg: NFT_REG_1, data: hostOrder32(0) },
  ];
}

export const CT_STATE = { established: 2, related: 4, new: 8 } as const;

/**
 * `reject`, as nft writes it in an ip or ip6 table: ICMP port unreachable
 * (code 3, <linux/icmp.h>) or ICMPv6 port unreachable (code 4,
 * <linux/icmpv6.h>), which is iptables' REJECT default too.
 */
export function rejectPortUnreachable(family: AddressFamily): Expression {
  // NFT_REJECT_ICMP_UNREACH is ICMPv6 in an ip6 table.
  return { type: 'reject', reject: 'icmp', code: family === 'inet' ? 3 : 4 };
}

export function verdict(v: 'accept' | 'drop' | 'return'): Expression {
  return { type: 'verdict', verdict: v };
}

export function jump(chain: string): Expression {
  return { type: 'verdict', verdict: 'jump', chain };
}

function hostOrder32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n >>> 0, true);
  return b;
}

function addressBytes(address: string, family: AddressFamily): number[] {
  if (family === 'inet') return address.split('.').map(Number);
  // Expand "::" into the zero groups it stands for, then two bytes per group.
  const [head, tail = ''] = address.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.flatMap((g) => {
    const v = parseInt(g, 16);
    return [v >> 8, v & 0xff];
  });
}
