/**
 * An anonymous set as nft prints it inside the rule that looks it up
 * (`tcp dport { 22, 80, 443 }`, `ip saddr . tcp dport { 10.0.0.1 . 22 }`,
 * `tcp dport vmap { 80 : accept }`): its elements in nft's order, each as
 * nft prints its type. A concatenation of intervals stays `@__set0` (nft
 * orders those by values it does not keep in one place).
 */
import { endianness } from 'node:os';

import { type DataType, valueBytes } from './datatypes.js';
import { keyBytes } from './keys.js';
import type { Element, SetWithElements } from './types.js';

const hex8 = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;

/** One value of type `t` (or a range of two) as nft prints it. */
function valueText(t: DataType, v: unknown): string | undefined {
  if (t === 'mark') {
    if (typeof v === 'number') return hex8(v);
    const m = typeof v === 'string' ? /^(\d+)-(\d+)$/.exec(v) : null;
    return m ? `${hex8(Number(m[1]))}-${hex8(Number(m[2]))}` : undefined;
  }
  if (t === 'ifname') return typeof v === 'string' ? JSON.stringify(v) : undefined;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

/** A map's value as nft prints it; undefined for a kind this does not print. */
function dataText(set: SetWithElements, v: Element['value']): string | undefined {
  if (set.map === 'verdict') {
    if (!v || typeof v !== 'object' || !('verdict' in v)) return undefined;
    return v.chain === undefined ? String(v.verdict) : `${v.verdict} ${v.chain}`;
  }
  if (typeof set.map === 'string') return valueText(set.map, v);
  return undefined;
}

/**
 * nft's order of a concatenation's elements: each part's bytes as the
 * kernel holds them, unpadded and one after another, read as one number in
 * the host's byte order (nft's mergesort), so on a little-endian host the
 * last part's last byte weighs most. A key it cannot write throws.
 */
function concatenationOrder(types: readonly DataType[]): (e: Element) => Buffer {
  const littleEndian = endianness() === 'LE';
  return (e) => {
    const parts = e.key as unknown[];
    const b = Buffer.concat(types.map((t, i) => valueBytes(t, parts[i], 'key')));
    return littleEndian ? b.reverse() : b;
  };
}

/** One element's key as nft prints it. */
function keyText(types: DataType | readonly DataType[], key: unknown): string | undefined {
  if (typeof types === 'string') return valueText(types, key);
  if (!Array.isArray(key) || key.length !== types.length) return undefined;
  const parts = types.map((t, i) => valueText(t, key[i]));
  return parts.includes(undefined) ? undefined : parts.join(' . ');
}

/** `{ ... }` for an anonymous set, or undefined (a concatenation of intervals, a type it has no text for). */
export function inlineSet(set: SetWithElements): string | undefined {
  if (!set.flags?.includes('anonymous')) return undefined;
  const type = set.type;
  if (typeof type !== 'string' && (!Array.isArray(type) || set.flags.includes('interval'))) return undefined;
  // One type: nft lists them in the order of their values (marks big end first, as in an interval set).
  const order = typeof type === 'string' ? (e: Element) => keyBytes([type], e.key, true, 'key').first : concatenationOrder(type);
  let sorted: Element[];
  try {
    sorted = [...set.elements].sort((a, b) => Buffer.compare(order(a), order(b)));
  } catch {
    return undefined;
  }
  const texts: string[] = [];
  for (const e of sorted) {
    const key = keyText(type, e.key);
    const data = set.map === undefined ? '' : dataText(set, e.value);
    if (key === undefined || data === undefined) return undefined;
    texts.push(set.map === undefined ? key : `${key} : ${data}`);
  }
  return texts.length ? `{ ${texts.join(', ')} }` : undefined;
}
