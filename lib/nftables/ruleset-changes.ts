/**
 * A ruleset as read, turned into the changes that write it again: the
 * copy a caller makes into another namespace, or back after a flush.
 */
import type { Change, Ruleset } from './types.js';

/**
 * The changes that write `rs` (as ruleset() read it) into a namespace
 * without those tables, in the order the kernel needs: tables, then named
 * objects (which rules and object maps name), chains (which rules jump
 * to), sets with their elements (anonymous ones included: the rules that
 * use them bind them), then each chain's rules in order. What only a read
 * reports is left out: handles, and an element's counter and time left.
 * One commit() of the result writes it all or nothing.
 */
export function rulesetChanges(rs: Ruleset): Change[] {
  return [
    ...rs.tables.map((table) => ({ op: 'addTable' as const, table })),
    ...rs.objects.map((object) => ({ op: 'addObject' as const, object })),
    ...rs.chains.map((chain) => ({ op: 'addChain' as const, chain })),
    ...rs.sets.flatMap(({ elements, ...set }) => [
      { op: 'addSet' as const, set },
      ...(elements.length ? [{ op: 'addElements' as const, set, elements: elements.map(({ expires, counter, ...e }) => e) }] : []),
    ]),
    ...rs.rules.map(({ handle, ...rule }) => ({ op: 'addRule' as const, rule })),
  ];
}
