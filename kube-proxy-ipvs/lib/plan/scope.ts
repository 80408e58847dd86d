/**
 * A Scope: the keys an incremental plan looks at, and nothing else. The
 * desired index reports one for each object change (the keys that change
 * may have touched); the controller gathers them until the next sync, with
 * the keys of operations that failed (so a failure is retried by the next
 * sync, not only by the periodic resync), and the planner compares only
 * those keys.
 */
import type { Operation } from './kernel-state.js';
import { virtualServerKey } from './kernel-state.js';

export interface Scope {
  virtualServers: Set<string>;
  /** set name → entries */
  setEntries: Map<string, Set<string>>;
  addresses: Set<string>;
  /** Whether the iptables payload may have changed. */
  iptables: boolean;
}

export function emptyScope(): Scope {
  return { virtualServers: new Set(), setEntries: new Map(), addresses: new Set(), iptables: false };
}

export function isEmptyScope(s: Scope): boolean {
  return s.virtualServers.size === 0 && s.addresses.size === 0 && s.setEntries.size === 0 && !s.iptables;
}

/** Adds `from`'s keys to `into`. */
export function mergeScope(into: Scope, from: Scope): void {
  for (const k of from.virtualServers) into.virtualServers.add(k);
  for (const a of from.addresses) into.addresses.add(a);
  for (const [set, entries] of from.setEntries) {
    let mine = into.setEntries.get(set);
    if (!mine) into.setEntries.set(set, (mine = new Set()));
    for (const e of entries) mine.add(e);
  }
  into.iptables ||= from.iptables;
}

/** The scope that plans these operations again. */
export function scopeOf(ops: Iterable<Operation>): Scope {
  const scope = emptyScope();
  for (const op of ops) {
    switch (op.kind) {
      case 'ipvs':
        if ('address' in op.batch.service) scope.virtualServers.add(virtualServerKey(op.batch.service));
        break;
      case 'address':
        scope.addresses.add(op.address);
        break;
      case 'iptables':
        scope.iptables = true;
        break;
      case 'nftables':
        // A table that failed to be made is made by any plan, as a missing set is.
        if (op.op === 'add' || op.op === 'del') mergeScope(scope, { ...emptyScope(), setEntries: new Map([[op.set, new Set(op.entries)]]) });
        break;
      case 'ipset':
        // A set that failed to be created is created by any plan (the planner creates missing sets whatever the scope).
        if (op.op === 'add' || op.op === 'del') mergeScope(scope, { ...emptyScope(), setEntries: new Map([[op.set, new Set(op.entries)]]) });
        break;
    }
  }
  return scope;
}
