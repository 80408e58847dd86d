/**
 * The protocol matches nft leaves out when it lists a rule: those that a
 * later header field depends on, which nft writes itself (`meta l4proto
 * tcp` before `tcp dport`, `meta nfproto ipv4` before `ip saddr` in an inet
 * table, `meta iiftype ether` before `ether saddr`, `ether type ip` before
 * `ip saddr` once the link layer was matched) and prints again by the
 * field's name alone. nft leaves such a match out when a field of the layer
 * it implies is loaded later with only matches between; a statement
 * (counter, log...) on the way ends that, and nft then prints the match.
 */
import type { Expression } from './expressions/index.js';
import { type HeaderBase, type HeaderContext, headerField, mergedFields } from './format-fields.js';

/** Expressions that match (load, compare, look up) rather than act: a dependency is looked for past them. */
const MATCHES = new Set<string>(['payload', 'meta', 'ct', 'cmp', 'bitwise', 'byteorder', 'lookup', 'range', 'fib', 'numgen', 'hash']);

type Family = HeaderContext['family'];

/** The layer (and, for the network header, the family) an equality on what `src` loaded implies, if any. */
function impliedBy(src: Expression | undefined, data: Buffer, family: Family): { base: HeaderBase; family?: Family } | undefined {
  if (!src) return undefined;
  const etherType = (v: number) => (v === 0x0800 ? 'ip' : v === 0x86dd ? 'ip6' : undefined);
  if (src.type === 'meta') {
    if (src.key === 'nfproto') return data[0] === 2 ? { base: 'network', family: 'ip' } : data[0] === 10 ? { base: 'network', family: 'ip6' } : undefined;
    if (src.key === 'l4proto') return { base: 'transport' };
    if (src.key === 'iiftype') return data.length >= 2 && data.readUInt16LE(0) === 1 ? { base: 'll' } : undefined;
    if (src.key === 'protocol' && data.length >= 2) {
      const f = etherType(data.readUInt16BE(0));
      return f ? { base: 'network', family: f } : undefined;
    }
    return undefined;
  }
  if (src.type !== 'payload') return undefined;
  if (src.base === 'network' && family === 'ip' && src.offset === 9 && src.len === 1) return { base: 'transport' };
  if (src.base === 'll' && src.offset === 12 && src.len === 2 && data.length >= 2) {
    const f = etherType(data.readUInt16BE(0));
    return f ? { base: 'network', family: f } : undefined;
  }
  return undefined;
}

/**
 * Whether the first load of `base` after `from`, before any statement, is
 * of a field nft names (or of neighbouring ones it merged). A field only
 * raw syntax can show (`@th,104,8`) keeps the match: that text alone would
 * not make nft write it again.
 */
function namedLater(exprs: readonly Expression[], from: number, base: HeaderBase, ctx: HeaderContext): boolean {
  for (let j = from; j < exprs.length; j++) {
    const x = exprs[j];
    if (!MATCHES.has(x.type) || ((x.type === 'meta' || x.type === 'ct') && x.sreg !== undefined)) return false;
    if (x.type === 'payload' && x.dreg !== undefined && x.base === base)
      return headerField(base, x.offset, x.len, ctx) !== undefined || mergedFields(base, x.offset, x.len, ctx) !== undefined;
  }
  return false;
}

/** The indexes of the comparisons nft leaves out of the rule's text; `family`: the table's, where it says one. */
export function impliedMatches(exprs: readonly Expression[], family: Family): Set<number> {
  const left = new Set<number>();
  const loads = new Map<number, Expression>();
  for (let i = 0; i < exprs.length; i++) {
    const e = exprs[i];
    if ((e.type === 'payload' || e.type === 'meta' || e.type === 'ct') && e.dreg !== undefined) {
      loads.set(e.dreg, e);
      continue;
    }
    if (e.type !== 'cmp' || e.op !== 'eq') continue;
    const implied = impliedBy(loads.get(e.sreg), Buffer.from(e.data), family);
    if (!implied) continue;
    family = implied.family ?? family;
    if (namedLater(exprs, i + 1, implied.base, { family, l4: undefined })) left.add(i);
  }
  return left;
}
