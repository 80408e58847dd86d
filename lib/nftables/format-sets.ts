/**
 * An anonymous set as nft prints it inside the rule that looks it up
 * (`tcp dport { 22, 80, 443 }`, `tcp dport vmap { 80 : accept }`): its
 * elements in nft's order, each as nft prints its type. Only sets of one key
 * type; nft orders concatenations by a rule of its own, so those stay
 * `@__set0`.
 */
import type { DataType } from './datatypes.js';
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

/** `{ ... }` for an anonymous set of one key type, or undefined (a concatenation, a type it has no text for). */
export function inlineSet(set: SetWithElements): string | undefined {
  if (typeof set.type !== 'string' || !set.flags?.includes('anonymous')) return undefined;
  const type = set.type;
  // nft lists them in the order of their values (marks big end first, as in an interval set).
  const order = (e: Element) => keyBytes([type], e.key, true, 'key').first;
  let sorted: Element[];
  try {
    sorted = [...set.elements].sort((a, b) => Buffer.compare(order(a), order(b)));
  } catch {
    return undefined;
  }
  const texts: string[] = [];
  for (const e of sorted) {
    const key = valueText(type, e.key);
    const data = set.map === undefined ? '' : dataText(set, e.value);
    if (key === undefined || data === undefined) return undefined;
    texts.push(set.map === undefined ? key : `${key} : ${data}`);
  }
  return texts.length ? `{ ${texts.join(', ')} }` : undefined;
}
