/**
 * The nftables backend's half of the planner: per served family, the
 * table is made whole (with every element) when it is missing or its shape
 * differs from the one wanted; otherwise only set elements change, each set
 * compared over the scope's entries (or all of them without a scope). The
 * operations all go in one place of the plan, so the applier commits them
 * as one transaction.
 */
import { naturalCompare, type AddressFamily } from 'ipvs-netlink/address';
import { nftSetMembers } from '../desired/nftables-elements.js';
import type { CurrentState, DesiredState, NftablesOp } from './kernel-state.js';
import type { Scope } from './scope.js';

export function planNftables(desired: DesiredState, current: CurrentState, scope: Scope | undefined): NftablesOp[] {
  const ops: NftablesOp[] = [];
  const tables = desired.nftables;
  if (!tables) return ops;
  for (const [family, table] of tables) {
    const members = nftSetMembers(family);
    if (current.nftables?.get(family) !== table.fingerprint) {
      const entries = new Map<string, string[]>();
      for (const name of members.keys()) entries.set(name, [...(desired.ipsets.get(name)?.entries ?? [])].sort(naturalCompare));
      ops.push({ kind: 'nftables', op: 'table', family, table, entries });
      continue;
    }
    for (const name of [...members.keys()].sort(naturalCompare)) ops.push(...planElements(family, name, desired, current, scope));
  }
  for (const family of current.nftables?.keys() ?? []) {
    if (!tables.has(family)) ops.push({ kind: 'nftables', op: 'deleteTable', family });
  }
  // Adds before deletes, as the ipset plan orders them.
  return [...ops.filter((o) => o.op !== 'del'), ...ops.filter((o) => o.op === 'del')];
}

function planElements(family: AddressFamily, name: string, desired: DesiredState, current: CurrentState, scope: Scope | undefined): NftablesOp[] {
  const want = desired.ipsets.get(name)?.entries ?? new Set<string>();
  const have = current.ipsets.get(name)?.entries ?? new Set<string>();
  const candidates = scope ? scope.setEntries.get(name) : new Set([...want, ...have]);
  if (!candidates) return [];
  const add: string[] = [];
  const del: string[] = [];
  for (const e of candidates) {
    if (want.has(e) && !have.has(e)) add.push(e);
    else if (!want.has(e) && have.has(e)) del.push(e);
  }
  const ops: NftablesOp[] = [];
  if (add.length) ops.push({ kind: 'nftables', op: 'add', family, set: name, entries: add.sort(naturalCompare) });
  if (del.length) ops.push({ kind: 'nftables', op: 'del', family, set: name, entries: del.sort(naturalCompare) });
  return ops;
}
