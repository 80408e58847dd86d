/**
 * The nftables backend in the kernel: the planner's operations as the
 * changes of one transaction, the tables read back (their shape's
 * fingerprint and their elements in ipset form, for the mirror), and the
 * tables removed (cleanup, or a switch back to iptables).
 *
 * A table that differs, or after a refused transaction, is made whole in
 * one transaction that adds the table, deletes it and adds it again with
 * everything in it: the kernel swaps old for new at the commit, so no
 * packet ever sees the table half made, and whatever was in it (an
 * element someone deleted, a rule someone added) is gone.
 */
import type { Change, Element, NftFamily as Family, SetRef } from 'ipvs-netlink';
import type { AddressFamily } from 'ipvs-netlink/address';
import { elementKey, entryOfKey, nftSetMembers } from '../desired/nftables-elements.js';
import { tableFingerprint } from '../desired/nftables-fingerprint.js';
import { NFT_TABLE, nftFamily } from '../desired/nftables-table.js';
import type { NftablesOp } from '../plan/kernel-state.js';
import type { KernelSnapshot } from '../plan/mirror.js';
import type { NftablesClient } from './netlink-clients.js';

const FAMILIES: readonly AddressFamily[] = ['inet', 'inet6'];

/** The operations of a sync as one transaction's changes, in order. */
export function nftChanges(ops: readonly NftablesOp[]): Change[] {
  const changes: Change[] = [];
  for (const op of ops) {
    const ref = { family: nftFamily(op.family), name: NFT_TABLE };
    if (op.op === 'deleteTable') {
      changes.push({ op: 'deleteTable', table: ref });
    } else if (op.op === 'table') {
      const t = op.table;
      changes.push({ op: 'addTable', table: ref }, { op: 'deleteTable', table: ref }, { op: 'addTable', table: t.table });
      for (const set of t.sets) changes.push({ op: 'addSet', set });
      for (const chain of t.chains) changes.push({ op: 'addChain', chain });
      for (const rule of t.rules) changes.push({ op: 'addRule', rule });
      for (const [name, entries] of op.entries) {
        if (entries.length > 0) changes.push({ op: 'addElements', set: setRef(op.family, name), elements: elements(op.family, name, entries) });
      }
    } else {
      const set = setRef(op.family, op.set);
      const list = elements(op.family, op.set, op.entries);
      changes.push(op.op === 'add' ? { op: 'addElements', set, elements: list } : { op: 'deleteElements', set, elements: list });
    }
  }
  return changes;
}

function member(family: AddressFamily, name: string) {
  const m = nftSetMembers(family).get(name);
  if (!m) throw new RangeError(`no nftables set stands for ipset ${name}`);
  return m;
}

function setRef(family: AddressFamily, name: string): SetRef {
  return { family: nftFamily(family), table: NFT_TABLE, name: member(family, name).nftName };
}

function elements(family: AddressFamily, name: string, entries: readonly string[]): Element[] {
  const { base } = member(family, name);
  return entries.map((e) => ({ key: elementKey(base, e) }));
}

/**
 * Our tables as found, one consistent read each: the fingerprint of each
 * family's table, and its sets' elements as ipset entries under the ipset
 * names. A family without the table is left out.
 */
export async function readNftTables(nft: NftablesClient, families: readonly AddressFamily[]): Promise<Pick<KernelSnapshot, 'ipsets'> & { nftables: Map<AddressFamily, string> }> {
  const ipsets: KernelSnapshot['ipsets'] = [];
  const nftables = new Map<AddressFamily, string>();
  for (const family of families) {
    const rs = await nft.ruleset({ family: nftFamily(family), table: NFT_TABLE }).catch((err: unknown) => {
      if ((err as { code?: string }).code === 'ENOENT') return undefined; // no table of ours in this family
      throw err;
    });
    if (!rs || rs.tables.length === 0) continue;
    nftables.set(family, tableFingerprint({ table: rs.tables[0], sets: rs.sets, chains: rs.chains, rules: rs.rules }));
    const byNftName = new Map(rs.sets.map((s) => [s.name, s]));
    for (const [name, m] of nftSetMembers(family)) {
      const set = byNftName.get(m.nftName);
      if (!set) continue;
      const entries: string[] = [];
      for (const e of set.elements) {
        const entry = entryOfKey(m.base, e.key);
        if (entry !== undefined) entries.push(entry);
      }
      ipsets.push({ name, type: 'hash:ip', entries });
    }
  }
  return { ipsets, nftables };
}

/**
 * What a table dump answers where the kernel has no nf_tables for the ip
 * families (user-mode-linux's build: EINVAL), or none at all: such a
 * kernel holds no table of ours.
 */
const NO_NFTABLES = new Set(['EINVAL', 'EOPNOTSUPP', 'EAFNOSUPPORT', 'EPROTONOSUPPORT']);

type TableLister = Pick<NftablesClient, 'listTables'>;

/** The tables called `name` in any of `families` (one table dump); none where the kernel has no nf_tables. */
export async function tablesNamed(nft: TableLister, name: string, families: readonly Family[]): Promise<Array<{ family: Family; name: string }>> {
  try {
    return (await nft.listTables()).filter((t) => t.name === name && families.includes(t.family));
  } catch (err) {
    if (NO_NFTABLES.has((err as { code?: string }).code ?? '')) return [];
    throw err;
  }
}

/** Deletes the tables called `name` in `families` that exist, in one transaction; true when there was one. */
export async function deleteTablesNamed(nft: TableLister & Pick<NftablesClient, 'commit'>, name: string, families: readonly Family[]): Promise<boolean> {
  const found = await tablesNamed(nft, name, families);
  if (found.length > 0) await nft.commit(found.map((t) => ({ op: 'deleteTable' as const, table: { family: t.family, name: t.name } })));
  return found.length > 0;
}

const OUR_FAMILIES = FAMILIES.map(nftFamily);

/** Whether the kernel holds our table in any family. */
export async function hasNftTables(nft: NftablesClient): Promise<boolean> {
  return (await tablesNamed(nft, NFT_TABLE, OUR_FAMILIES)).length > 0;
}

/** Deletes our tables, every family's that exists, in one transaction; nothing else is touched. */
export async function deleteNftTables(nft: NftablesClient): Promise<void> {
  await deleteTablesNamed(nft, NFT_TABLE, OUR_FAMILIES);
}

/** The families a refused transaction's changes were about: their tables are made whole by the next sync. */
export function familiesOf(ops: readonly NftablesOp[]): AddressFamily[] {
  return [...new Set(ops.map((o) => o.family))];
}
