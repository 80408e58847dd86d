/**
 * Named stateful objects (`nft add counter inet t hits`): counters, quotas
 * and limits a table holds by name, which rules (`counter name "hits"`) and
 * object maps refer to. Their state is the attributes of the expression of
 * the same name, so each is written by that expression's codec, with every
 * attribute nft sends; kinds this library has no vocabulary for (ct
 * helpers, synproxies, ...) are kept as read and write back unchanged.
 */
import { knownFields, object } from '../util/check.js';
import { counter } from './expressions/actions.js';
import { bytes, named } from './expressions/fields.js';
import { limit, quota } from './expressions/stateful.js';
import type { CounterExpr, LimitExpr, QuotaExpr } from './expressions/index.js';
import type { RawAttrs } from './native.js';
import { type Family, type ObjectType, objectTypes } from './names.js';
import { comment, familyName, familyOf, objectName } from './objects.js';
import { commentOf } from './udata.js';

/** A named object's identity: a delete needs its kind as well as its name. */
export interface NftObjectRef {
  /** Its table's family. */
  family: Family;
  /** Its table (NFTA_OBJ_TABLE). */
  table: string;
  /** Its kind, by nft's word (NFTA_OBJ_TYPE); a number for a kind without one. */
  type: ObjectType | number;
  /** Its name, unique among the table's objects of its kind (NFTA_OBJ_NAME). */
  name: string;
}

/** What every named object carries besides its state. */
export interface NftObjectMeta {
  /** Shown by `nft list`, at most 127 bytes. */
  comment?: string;
  /** Read only: the kernel's handle. */
  handle?: number;
  /** Read only: how many rules and map elements refer to it (the kernel refuses to delete it while any do). */
  use?: number;
}

/** `counter hits { packets 0 bytes 0 }`: written, where counting starts (0 when left out). */
export type NftCounter = NftObjectRef & NftObjectMeta & CounterExpr;
/** `quota q { over 100 mbytes used 1 kbytes }`. */
export type NftQuota = NftObjectRef & NftObjectMeta & QuotaExpr;
/** `limit l { rate 10/second burst 20 packets }`. */
export type NftLimit = NftObjectRef & NftObjectMeta & LimitExpr;
/** A kind this library has no vocabulary for (a ct helper, a synproxy, ...): its state kept as read (NFTA_OBJ_DATA's attributes), so it writes back unchanged. */
export interface NftOtherObject extends NftObjectRef, NftObjectMeta {
  /** Its state: NFTA_OBJ_DATA's attributes, as the kernel listed them. */
  data: Uint8Array;
}
/** A named stateful object, its state by its kind. */
export type NftObject = NftCounter | NftQuota | NftLimit | NftOtherObject;

/** The kinds with a typed state, by nft's word for them (the expression of the same name). */
const codecs = { counter, quota, limit } as const;
type TypedKind = keyof typeof codecs;
const isTyped = (kind: unknown): kind is TypedKind => kind === 'counter' || kind === 'quota' || kind === 'limit';

/** What every object has besides its kind and state. */
const META = new Set(['family', 'table', 'name', 'comment', 'handle', 'use']);

/** An object's table, name and kind, checked, as getobj and delobj take them. */
export function objectRefToRaw(o: NftObjectRef, field: string): { family: number; attrs: RawAttrs } {
  const r = object(o, field);
  return {
    family: familyOf(r.family, `${field}.family`),
    attrs: {
      table: objectName(r.table, `${field}.table`),
      name: objectName(r.name, `${field}.name`),
      type: named(objectTypes, r.type, `${field}.type`),
    },
  };
}

/** The message that deletes an object: its identity, and its state's nest left empty, as nft sends it. */
export function objectDeleteToRaw(o: NftObjectRef, field: string): { family: number; attrs: RawAttrs } {
  const r = objectRefToRaw(o, field);
  // An object as read (its state included) deletes too; its state is checked like an add's.
  if (Object.keys(object(o, field)).some((k) => k !== 'type' && !META.has(k))) objectToRaw(o as NftObject, field);
  const kind = objectTypes.name(r.attrs.type as number);
  r.attrs.data = isTyped(kind) ? { type: kind } : { type: '', raw: new Uint8Array(0) };
  return r;
}

/** An object to add, checked: its state by its kind's codec. */
export function objectToRaw(o: NftObject, field: string): { family: number; attrs: RawAttrs } {
  const r = objectRefToRaw(o, field);
  const kind = objectTypes.name(r.attrs.type as number);
  const state: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(object(o, field))) if (!META.has(k)) state[k] = v;
  if (isTyped(kind)) {
    state.type = kind;
    // nft writes a counter's two values even when they start at zero.
    if (kind === 'counter') {
      state.packets ??= 0n;
      state.bytes ??= 0n;
    }
    r.attrs.data = { type: kind, ...codecs[kind].toRaw(state as never, field) };
  } else {
    knownFields(state, new Set(['type', 'data']), field);
    r.attrs.data = { type: '', raw: bytes(state.data, `${field}.data`, 65535) };
  }
  if (o.comment !== undefined) r.attrs.userdata = comment(o.comment, `${field}.comment`);
  return r;
}

/** An object as the kernel listed it. */
export function objectFromRaw(family: number, a: RawAttrs): NftObject {
  const kind = objectTypes.name(a.type as number);
  const data = (a.data ?? {}) as RawAttrs;
  const base = { family: familyName(family), table: a.table as string, name: a.name as string };
  let o: NftObject;
  if (isTyped(kind) && data.raw === undefined) {
    // The expression's typed form, whose `type` is the object's kind.
    o = { ...base, ...codecs[kind].fromRaw(data) } as NftObject;
  } else {
    o = { ...base, type: kind, data: Buffer.from((data.raw as Uint8Array | undefined) ?? []) };
  }
  const c = commentOf(a.userdata as Uint8Array | undefined);
  if (c !== undefined) o.comment = c;
  if (a.handle !== undefined) o.handle = a.handle as number;
  if (a.use !== undefined) o.use = a.use as number;
  return o;
}
