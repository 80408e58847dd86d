/**
 * A table's shape as one string: its comment, sets (names, key types,
 * flags, comments), chains (hooks, priorities, policies) and rules
 * (expressions and comments, in order), without elements or anything the
 * kernel assigns (handles, use counts, counters). The desired table's
 * fingerprint and that of a table read back are equal exactly when the
 * table needs no rebuild, so a restart adopts a table as it is.
 */
import type { Chain, NftSet, Rule, Table } from 'ipvs-netlink';

export interface TableShape {
  table: Table;
  sets: readonly NftSet[];
  chains: readonly Chain[];
  rules: readonly Rule[];
}

/** What the kernel assigns or counts, and the names every object of the table repeats. */
const SKIPPED = new Set(['handle', 'use', 'position', 'elements', 'family', 'table', 'packets', 'bytes']);

export function tableFingerprint(t: TableShape): string {
  const byName = <T extends { name: string }>(list: readonly T[]) => [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const chains = byName(t.chains).map((c) => ({ ...c, rules: t.rules.filter((r) => r.chain === c.name).map((r) => ({ ...r, chain: undefined })) }));
  return JSON.stringify(canonical({ table: t.table, sets: byName(t.sets), chains }));
}

/** Plain data with sorted keys, bytes as hex, and no field that is undefined or skipped. */
function canonical(v: unknown): unknown {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v === 'bigint') return String(v);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v).sort()) {
    const value = (v as Record<string, unknown>)[key];
    if (value !== undefined && !SKIPPED.has(key)) out[key] = canonical(value);
  }
  return out;
}
