/**
 * The nftables backend's tables as `kube-proxy-ipvs plan` prints them:
 * per table, its sets with their elements (keys as nft prints them, `a .
 * b . c`) and its chains with their rules in nft's text. The rule text
 * comes from the caller (the library's formatRule), as this stage loads no
 * kernel code.
 */
import { naturalCompare } from 'ipvs-netlink/address';
import type { Rule } from 'ipvs-netlink';
import { elementKey, nftSetMembers } from '../desired/nftables-elements.js';
import type { DesiredState } from './kernel-state.js';

export interface PlannedNftTable {
  sets: Record<string, { type: string; flags?: string[]; comment?: string; elements: string[] }>;
  chains: Record<string, { type?: string; hook?: string; priority?: number; policy?: string; rules: string[] }>;
}

export type FormatRule = (rule: Pick<Rule, 'expressions' | 'comment' | 'family'>) => string;

/** "ip kube-proxy-ipvs" → the table. */
export function plannedNftables(desired: DesiredState, formatRule: FormatRule): Record<string, PlannedNftTable> {
  const out: Record<string, PlannedNftTable> = {};
  for (const [family, table] of desired.nftables ?? []) {
    const planned: PlannedNftTable = { sets: {}, chains: {} };
    const byNftName = new Map([...nftSetMembers(family)].map(([ipset, m]) => [m.nftName, { ipset, base: m.base }]));
    for (const set of table.sets) {
      const member = byNftName.get(set.name)!;
      const entries = [...(desired.ipsets.get(member.ipset)?.entries ?? [])].sort(naturalCompare);
      const key = (e: string) => [elementKey(member.base, e)].flat().join(' . ');
      planned.sets[set.name] = {
        type: [set.type].flat().join(' . '),
        ...(set.flags ? { flags: set.flags } : {}),
        ...(set.comment ? { comment: set.comment } : {}),
        elements: entries.map(key),
      };
    }
    for (const chain of table.chains) {
      const { type, hook, priority, policy } = chain;
      planned.chains[chain.name] = { ...(hook ? { type, hook, priority, policy } : {}), rules: table.rules.filter((r) => r.chain === chain.name).map((r) => formatRule(r)) };
    }
    out[`${table.table.family} ${table.table.name}`] = planned;
  }
  return out;
}
