/**
 * The protocol matches nft leaves out when it lists a rule: those that a
 * later header field depends on, which nft writes itself and prints again
 * by the field's name alone: `meta nfproto ipv4` before `ip saddr` (inet),
 * `meta l4proto tcp` before `tcp dport`, `meta iiftype ether` before
 * `ether saddr`, `ether type ip` before `ip saddr`; and, only where the
 * table's family makes them the dependency nft would write, `ip protocol
 * tcp` (an ip table) and `meta protocol ip` (any table but inet). Such a
 * match is left out when the first load of the layer it implies after it,
 * with only matches between, is a field nft names and compares whole; a
 * statement (counter, log...) on the way ends that, and nft then prints
 * the match. A transport protocol is left out only where the text says it
 * again (`tcp dport`): one without port fields (esp, icmp) stays, as the
 * raw `th dport` alone would not make nft write it.
 */
import type { Expression } from './expressions/index.js';
import { type HeaderBase, type HeaderContext, headerField, mergedFields, PORT_PROTOCOLS } from './format-fields.js';
import { l4protos, type Family as TableFamily } from './names.js';

/** Expressions that match (load, compare, look up) rather than act: a dependency is looked for past them. */
const MATCHES = new Set<string>(['payload', 'meta', 'ct', 'cmp', 'bitwise', 'byteorder', 'lookup', 'range', 'fib', 'numgen', 'hash']);

type Family = HeaderContext['family'];

/** Whether nft names the ports of this transport protocol (`tcp dport`), so that the text says the protocol again. */
const namesPorts = (proto: number) => PORT_PROTOCOLS.has(String(l4protos.name(proto)));

/** The layer (and, for the network header, the family) an equality on what `src` loaded implies, if any. */
function impliedBy(src: Expression | undefined, data: Buffer, table: TableFamily | undefined): { base: HeaderBase; family?: Family } | undefined {
  if (!src) return undefined;
  const etherType = (v: number) => (v === 0x0800 ? 'ip' : v === 0x86dd ? 'ip6' : undefined);
  if (src.type === 'meta') {
    if (src.key === 'nfproto') return data[0] === 2 ? { base: 'network', family: 'ip' } : data[0] === 10 ? { base: 'network', family: 'ip6' } : undefined;
    if (src.key === 'l4proto') return namesPorts(data[0]) ? { base: 'transport' } : undefined;
    if (src.key === 'iiftype') return data.length >= 2 && data.readUInt16LE(0) === 1 ? { base: 'll' } : undefined;
    if (src.key === 'protocol' && data.length >= 2 && table !== undefined && table !== 'inet') {
      const f = etherType(data.readUInt16BE(0));
      return f ? { base: 'network', family: f } : undefined;
    }
    return undefined;
  }
  if (src.type !== 'payload') return undefined;
  if (src.base === 'network' && table === 'ip' && src.offset === 9 && src.len === 1) return namesPorts(data[0]) ? { base: 'transport' } : undefined;
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
    if (x.type === 'payload' && x.dreg !== undefined && x.base === base) {
      if (headerField(base, x.offset, x.len, ctx) !== undefined) return true;
      // Neighbouring fields are printed one by one only when compared whole for equality: otherwise raw.
      const next = exprs[j + 1];
      return mergedFields(base, x.offset, x.len, ctx) !== undefined && next?.type === 'cmp' && next.op === 'eq' && next.sreg === x.dreg;
    }
  }
  return false;
}

/** The indexes of the comparisons nft leaves out of the rule's text; `table`: the rule's table's family, where known. */
export function impliedMatches(exprs: readonly Expression[], table: TableFamily | undefined): Set<number> {
  const left = new Set<number>();
  /** What last wrote each register (any expression that writes one: a fib or a hash replaces a load). */
  const loads = new Map<number, Expression>();
  let family: Family = table === 'ip' || table === 'ip6' ? table : undefined;
  for (let i = 0; i < exprs.length; i++) {
    const e = exprs[i];
    if (e.type !== 'cmp') {
      if ('dreg' in e && e.dreg !== undefined) loads.set(e.dreg, e);
      continue;
    }
    if (e.op !== 'eq') continue;
    const implied = impliedBy(loads.get(e.sreg), Buffer.from(e.data), table);
    if (!implied) continue;
    family = implied.family ?? family;
    if (namedLater(exprs, i + 1, implied.base, { family, l4: undefined })) left.add(i);
  }
  return left;
}
