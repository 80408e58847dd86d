/**
 * A transaction's changes to the addon's messages, with the flags nft uses
 * for each (`add` creates or leaves, `exclusive` refuses what exists, rules
 * append unless inserted). Sets added in the transaction get ids, as nft
 * gives them, and elements and lookups of those sets name them by id too.
 */
import { knownFields, object, oneOf, wrongType } from '../util/check.js';
import { elementsToRaw } from './elements.js';
import { K, type RawAttrs, type RawMessage } from './native.js';
import { type SetShape, chainRefToRaw, chainToRaw, ruleToRaw, setRefToRaw, setToRaw, tableRefToRaw, tableToRaw } from './objects.js';
import { objectDeleteToRaw, objectToRaw } from './stateful-objects.js';
import type { Change, SetRef } from './types.js';

const ops: Array<Change['op']> = [
  'addTable', 'deleteTable', 'flushTable', 'addChain', 'deleteChain', 'flushChain', 'addSet', 'deleteSet', 'flushSet',
  'addElements', 'deleteElements', 'addRule', 'insertRule', 'replaceRule', 'deleteRule', 'addObject', 'deleteObject',
];

/** What a change names its object with. */
const payloadKey: Record<Change['op'], string> = {
  addTable: 'table', deleteTable: 'table', flushTable: 'table', addChain: 'chain', deleteChain: 'chain', flushChain: 'chain',
  addSet: 'set', deleteSet: 'set', flushSet: 'set', addElements: 'set', deleteElements: 'set',
  addRule: 'rule', insertRule: 'rule', replaceRule: 'rule', deleteRule: 'rule', addObject: 'object', deleteObject: 'object',
};

/** A set's identity across a transaction. */
export function setKey(family: number | string, table: string, name: string): string {
  return `${family}\0${table}\0${name}`;
}

/** The sets whose element changes need their shape from the kernel (not added in these changes). */
export function setsToLookUp(changes: readonly Change[], known: (key: string) => boolean): SetRef[] {
  const added = new Set<string>();
  const out = new Map<string, SetRef>();
  changes.forEach((c, i) => {
    const field = `changes[${i}]`;
    const op = oneOf(object(c, field).op, ops, field, 'op');
    if (op === 'addSet') {
      const r = setRefToRaw((c as { set: SetRef }).set, `${field}.set`);
      added.add(setKey(r.family, r.table, r.name));
    } else if (op === 'addElements' || op === 'deleteElements') {
      const ref = (c as { set: SetRef }).set;
      const r = setRefToRaw(ref, `${field}.set`);
      const k = setKey(r.family, r.table, r.name);
      if (!added.has(k) && !known(k)) out.set(k, ref);
    }
  });
  return [...out.values()];
}

/**
 * Encodes the changes; `shapeOf` knows every set whose elements change
 * (setsToLookUp's answer). `itemOrigins` gets, for each element change
 * whose items are not its elements one for one, which element each item
 * came from (elementsToRaw's `origins`), by the change's index.
 */
export function changesToRaw(
  changes: readonly Change[],
  shapeOf: (key: string) => SetShape | undefined,
  itemOrigins?: Map<number, number[]>,
): RawMessage[] {
  if (!Array.isArray(changes)) throw wrongType('changes', 'an array of changes', changes);
  const shapes = new Map<string, SetShape>();
  const ids = new Map<string, number>();
  return changes.map((c, i) => {
    const field = `changes[${i}]`;
    const o = object(c, field);
    const op = oneOf(o.op, ops, field, 'op');
    const what = payloadKey[op];
    const fields = new Set(['op', what]);
    if (op.startsWith('add') && op !== 'addRule') fields.add('exclusive');
    if (op === 'addElements' || op === 'deleteElements') fields.add('elements');
    knownFields(o, fields, field);
    const at = `${field}.${what}`;
    const create = K.NLM_F_CREATE | (o.exclusive === true ? K.NLM_F_EXCL : 0);
    if (o.exclusive !== undefined && typeof o.exclusive !== 'boolean') throw wrongType(`${field}.exclusive`, 'a boolean', o.exclusive);
    switch (op) {
      case 'addTable': {
        const r = tableToRaw(o.table as never, at);
        return { type: 'newtable', family: r.family, flags: o.exclusive === true ? create : 0, attrs: r.attrs };
      }
      case 'deleteTable': {
        const r = tableRefToRaw(o.table as never, at);
        return { type: 'deltable', family: r.family, attrs: r.attrs };
      }
      case 'flushTable': {
        const r = tableRefToRaw(o.table as never, at);
        return { type: 'delrule', family: r.family, attrs: { table: r.attrs.name } };
      }
      case 'addChain': {
        const r = chainToRaw(o.chain as never, at);
        return { type: 'newchain', family: r.family, flags: create, attrs: r.attrs };
      }
      case 'deleteChain': {
        const r = chainRefToRaw(o.chain as never, at);
        return { type: 'delchain', family: r.family, attrs: r.attrs };
      }
      case 'flushChain': {
        const r = chainRefToRaw(o.chain as never, at);
        return { type: 'delrule', family: r.family, attrs: { table: r.attrs.table, chain: r.attrs.name } };
      }
      case 'addSet': {
        const r = setToRaw(o.set as never, at, ids.size + 1);
        const k = setKey(r.family, r.attrs.table as string, r.attrs.name as string);
        ids.set(k, ids.size + 1);
        shapes.set(k, r.shape);
        return { type: 'newset', family: r.family, flags: create, attrs: r.attrs };
      }
      case 'deleteSet':
      case 'flushSet': {
        const r = setRefToRaw(o.set as never, at);
        return op === 'deleteSet'
          ? { type: 'delset', family: r.family, attrs: { table: r.table, name: r.name } }
          : { type: 'delsetelem', family: r.family, attrs: { table: r.table, set: r.name } };
      }
      case 'addElements':
      case 'deleteElements': {
        const r = setRefToRaw(o.set as never, at);
        const k = setKey(r.family, r.table, r.name);
        const shape = shapes.get(k) ?? shapeOf(k);
        if (!shape) throw new Error(`${at}: the set's type is not known (internal: look it up first)`);
        const attrs: RawAttrs = { table: r.table, set: r.name };
        if (ids.has(k)) attrs.setId = ids.get(k);
        const origins: number[] = [];
        attrs.elements = elementsToRaw(shape, o.elements as never, `${field}.elements`, op === 'addElements', origins);
        if (origins.length) itemOrigins?.set(i, origins);
        return op === 'addElements'
          ? { type: 'newsetelem', family: r.family, flags: create, attrs }
          : { type: 'delsetelem', family: r.family, attrs };
      }
      case 'addRule':
      case 'insertRule':
      case 'replaceRule': {
        const r = ruleToRaw(o.rule as never, at, op === 'replaceRule');
        for (const e of r.attrs.expressions as RawAttrs[]) {
          // Lookups of sets added in this transaction name them by id too.
          if ((e.type === 'lookup' || e.type === 'dynset') && e.setId === undefined) {
            const id = ids.get(setKey(r.family, r.attrs.table as string, e.set as string));
            if (id !== undefined) e.setId = id;
          }
        }
        const flags = op === 'replaceRule' ? K.NLM_F_REPLACE : op === 'addRule' ? K.NLM_F_CREATE | K.NLM_F_APPEND : K.NLM_F_CREATE;
        return { type: 'newrule', family: r.family, flags, attrs: r.attrs };
      }
      case 'addObject': {
        const r = objectToRaw(o.object as never, at);
        return { type: 'newobj', family: r.family, flags: create, attrs: r.attrs };
      }
      case 'deleteObject': {
        const r = objectDeleteToRaw(o.object as never, at);
        return { type: 'delobj', family: r.family, attrs: r.attrs };
      }
      case 'deleteRule': {
        const ref = object(o.rule, at);
        knownFields(ref, new Set(['family', 'table', 'chain', 'handle', 'expressions', 'comment', 'position']), at);
        const r = ruleToRaw({ ...(ref as Record<string, unknown>), expressions: [] } as never, at, true);
        delete r.attrs.expressions;
        return { type: 'delrule', family: r.family, attrs: r.attrs };
      }
    }
  });
}
