/**
 * The nftables backend's set elements are kube-proxy's ipset entries: the
 * desired state keeps them in `ipset save` form under the ipset names
 * (ipsets.ts), and only the step to and from the kernel spells them as nft
 * keys. So both backends share the desired state, its incremental scopes
 * and the mirror, and a change is the same entries added and deleted.
 */
import type { Key } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import { ipsetName, SET_DEFINITIONS, type SetName } from './ipsets.js';
import { keyShape, nftSetName, OUT_DROP_SET } from './nftables-table.js';

/** One nft set of a family's table: the ipset name its entries are kept under, and its name in the table. */
export interface NftSetMember {
  /** The kube-proxy set it stands for, in its IPv4 spelling (SET), which fixes the key's shape. */
  base: string;
  /** Its name in the table. */
  nftName: string;
}

/** Family-specific ipset name (KUBE-6-... for IPv6) → the nft set that holds its entries. */
export function nftSetMembers(family: AddressFamily): Map<string, NftSetMember> {
  const out = new Map<string, NftSetMember>();
  for (const base of [...SET_DEFINITIONS.map((d) => d.name), OUT_DROP_SET]) {
    out.set(ipsetName(base as SetName, family), { base, nftName: nftSetName(base) });
  }
  return out;
}

/**
 * An entry as its nft set's key: "10.96.0.10,tcp:53" → ['10.96.0.10',
 * 'tcp', 53]; a bitmap:port entry → the port; a hash:ip entry → the
 * address. The out-drop set's "vip,tcp:80" matches source and destination
 * both: [vip, vip, 'tcp', 80].
 */
export function elementKey(base: string, entry: string): Key {
  const shape = keyShape(base);
  if (shape.length === 1) return shape[0] === 'dport' ? Number(entry) : entry;
  const [ip, protoPort, third] = entry.split(',');
  const colon = protoPort.indexOf(':');
  const proto = protoPort.slice(0, colon);
  const port = Number(protoPort.slice(colon + 1));
  if (base === OUT_DROP_SET) return [ip, ip, proto, port];
  return third === undefined ? [ip, proto, port] : [ip, proto, port, third];
}

/**
 * A key read from the kernel as the entry it stands for (elementKey's
 * inverse), or undefined for one this proxy never writes (left alone: a
 * rebuild of the table clears it).
 */
export function entryOfKey(base: string, key: Key | Uint8Array): string | undefined {
  if (key instanceof Uint8Array) return undefined;
  if (!Array.isArray(key)) return String(key);
  if (base === OUT_DROP_SET) return key[0] === key[1] ? [key[0], ',', key[2], ':', key[3]].join('') : undefined;
  if (key.length === 3) return [key[0], ',', key[1], ':', key[2]].join('');
  // ipset prints a host-length network without its prefix.
  return [key[0], ',', key[1], ':', key[2], ',', String(key[3]).replace(/\/(32|128)$/, '')].join('');
}
