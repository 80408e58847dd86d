/**
 * The keys the next incremental sync must look at: those of object changes
 * since the last sync, plus those of operations that failed (so a failure
 * is retried by the next sync, not only by the periodic resync).
 */
import { emptyScope, type Scope } from '../desired/desired-index.js';
import type { Operation } from './kernel-state.js';
import { virtualServerKey } from './kernel-state.js';

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

/** The scope that re-plans these operations. */
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
      case 'ipset':
        // A set that failed to be created is created by any plan (the planner creates missing sets whatever the scope).
        if (op.op === 'add' || op.op === 'del') mergeScope(scope, { ...emptyScope(), setEntries: new Map([[op.set, new Set(op.entries)]]) });
        break;
    }
  }
  return scope;
}

export function isEmptyScope(s: Scope): boolean {
  return s.virtualServers.size === 0 && s.addresses.size === 0 && s.setEntries.size === 0 && !s.iptables;
}
