/**
 * Tables, chains, sets and rules: typed form to the addon's raw attributes
 * (checking every field) and back. Comments and a set's key description go
 * in userdata the way nft writes them, so `nft list` shows them.
 */
import { integer, knownFields, name as checkName, object, oneOf, optionalBoolean, outOfRange, string, wrongType, wrongValue } from '../util/check.js';
import { type DataType, EXPR_CONCAT, VERDICT_TYPE_ID, dataTypes, keyLayout, typeInfo, typesOfKey } from './datatypes.js';
import { expressionFromRaw, expressionToRaw } from './expressions/index.js';
import { flagBits, named } from './expressions/fields.js';
import { K, type RawAttrs } from './native.js';
import { type Family, NAME_RULE, USERDATA_MAX, families, hooksOf, objectTypes, policies, setFlags, setPolicies, tableFlags } from './names.js';
import type { Chain, ChainRef, ChainType, NftSet, ObjectMap, OtherType, Rule, SetRef, Table, TableRef } from './types.js';
import { UDATA, commentOf, parseRecords, record, stringRecord, u32Of, u32Record } from './udata.js';

/** Every family name. */
export const familyNames = families.names;

/** A family name to its NFPROTO_* number, checked. */
export function familyOf(v: unknown, field: string): number {
  return families.byName[oneOf(v, familyNames, field)];
}

/** A table, chain or set name, checked. */
export function objectName(v: unknown, field: string): string {
  return checkName(v, field, NAME_RULE);
}

/** A comment as userdata record `type`; nft caps comments at 128 bytes. */
export function comment(v: unknown, field: string, type: number = UDATA.COMMENT): Buffer {
  const s = string(v, field);
  if (Buffer.byteLength(s) > 127 || s.includes('\0')) throw outOfRange(field, 'at most 127 bytes without NUL', s);
  return stringRecord(type, s);
}

/** A family's name from its NFPROTO_* number. */
export const familyName = (n: number): Family => (families.name(n) as Family) ?? 'inet';

// --- tables ---

const tableFields = new Set(['family', 'name', 'flags', 'comment', 'handle', 'use']);

/** A table's name and family, checked. */
export function tableRefToRaw(t: TableRef, field: string): { family: number; attrs: RawAttrs } {
  const o = object(t, field);
  return { family: familyOf(o.family, `${field}.family`), attrs: { name: objectName(o.name, `${field}.name`) } };
}

/** A table to add, checked. */
export function tableToRaw(t: Table, field: string): { family: number; attrs: RawAttrs } {
  knownFields(object(t, field), tableFields, field);
  const r = tableRefToRaw(t, field);
  r.attrs.flags = t.flags === undefined ? 0 : flagBits(tableFlags, t.flags, `${field}.flags`);
  if (t.comment !== undefined) r.attrs.userdata = comment(t.comment, `${field}.comment`);
  return r;
}

/** A table as the kernel listed it. */
export function tableFromRaw(family: number, a: RawAttrs): Table {
  const t: Table = { family: familyName(family), name: a.name as string };
  const flags = (a.flags as number | undefined) ?? 0;
  if (flags) t.flags = tableFlags.flags(flags) as Table['flags'];
  const c = commentOf(a.userdata as Uint8Array | undefined);
  if (c !== undefined) t.comment = c;
  if (a.handle !== undefined) t.handle = a.handle as number;
  if (a.use !== undefined) t.use = a.use as number;
  return t;
}

// --- chains ---

const chainFields = new Set(['family', 'table', 'name', 'type', 'hook', 'priority', 'policy', 'device', 'comment', 'handle', 'use']);
const chainTypes: ChainType[] = ['filter', 'nat', 'route'];

/** A chain's name, table and family, checked. */
export function chainRefToRaw(c: ChainRef, field: string): { family: number; attrs: RawAttrs } {
  const o = object(c, field);
  return {
    family: familyOf(o.family, `${field}.family`),
    attrs: { table: objectName(o.table, `${field}.table`), name: objectName(o.name, `${field}.name`) },
  };
}

/** A chain to add, checked. */
export function chainToRaw(c: Chain, field: string): { family: number; attrs: RawAttrs } {
  knownFields(object(c, field), chainFields, field);
  const r = chainRefToRaw(c, field);
  const base = c.hook !== undefined;
  if (!base && (c.type !== undefined || c.priority !== undefined || c.policy !== undefined || c.device !== undefined))
    throw wrongValue(`${field}.hook`, 'a hook: type, priority, policy and device are for base chains', c.hook);
  if (base) {
    r.attrs.type = oneOf(c.type ?? 'filter', chainTypes, field, 'type');
    if (c.policy !== undefined) r.attrs.policy = policies.byName[oneOf(c.policy, policies.names, field, 'policy')];
    const hooks = hooksOf(c.family);
    const hook: RawAttrs = {
      hooknum: hooks.byName[oneOf(c.hook, hooks.names, field, 'hook')],
      priority: integer(c.priority, `${field}.priority`, -2147483648, 2147483647),
    };
    if (c.device !== undefined) hook.dev = checkName(c.device, `${field}.device`, { maxBytes: 15 });
    r.attrs.hook = hook;
  }
  if (c.comment !== undefined) r.attrs.userdata = comment(c.comment, `${field}.comment`);
  return r;
}

/** A chain as the kernel listed it. */
export function chainFromRaw(family: number, a: RawAttrs): Chain {
  const c: Chain = { family: familyName(family), table: a.table as string, name: a.name as string };
  const hook = a.hook as RawAttrs | undefined;
  if (hook) {
    c.type = a.type as ChainType;
    c.hook = hooksOf(c.family).name(hook.hooknum as number) as Chain['hook'];
    c.priority = hook.priority as number;
    if (a.policy !== undefined) c.policy = policies.name(a.policy as number) as Chain['policy'];
    if (hook.dev !== undefined) c.device = hook.dev as string;
  }
  const cm = commentOf(a.userdata as Uint8Array | undefined);
  if (cm !== undefined) c.comment = cm;
  if (a.handle !== undefined) c.handle = a.handle as number;
  if (a.use !== undefined) c.use = a.use as number;
  return c;
}

// --- sets ---

const setFields = new Set(['family', 'table', 'name', 'type', 'map', 'flags', 'timeout', 'gcInterval', 'size', 'policy', 'counter', 'comment', 'typeof', 'handle', 'elements']);
/** Flags a caller sets ('anonymous' too, so that nft's inline sets read back can be written back); 'map', 'concat' and 'object' follow from the set's types. */
const settableFlags = setFlags.names.filter((f) => f !== 'map' && f !== 'concat' && f !== 'expr' && f !== 'object');

/** What elements of a set need: the key's types and how values are laid out. */
export interface SetShape {
  key: DataType[] | OtherType;
  /** 'object': an object map's values are object names. */
  value?: DataType[] | OtherType | 'verdict' | 'object';
  interval: boolean;
}

const isObjectMap = (m: unknown): m is ObjectMap => typeof m === 'object' && m !== null && 'object' in m;

/** A set's name, table and family, checked. */
export function setRefToRaw(s: SetRef, field: string): { family: number; table: string; name: string } {
  const o = object(s, field);
  return { family: familyOf(o.family, `${field}.family`), table: objectName(o.table, `${field}.table`), name: objectName(o.name, `${field}.name`) };
}

function typeList(v: unknown, field: string): DataType[] | OtherType {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    knownFields(o, new Set(['id', 'len', 'byteorder']), field);
    const t: OtherType = { id: integer(o.id, `${field}.id`, 0, 0xffffffff), len: integer(o.len, `${field}.len`, 1, 64) };
    if (o.byteorder !== undefined) t.byteorder = oneOf(o.byteorder, ['host', 'big'] as const, field, 'byteorder');
    return t;
  }
  const list = Array.isArray(v) ? v : [v];
  if (list.length === 0 || list.length > 7) throw outOfRange(field, 'one type, or a concatenation of 2 to 7', list.length);
  const types = list.map((t, i) => oneOf(t, dataTypes, Array.isArray(v) ? `${field}[${i}]` : field));
  // nft records no byte order for a concatenation's parts: an integer among them would read back unnamed.
  const at = types.indexOf('integer');
  if (types.length > 1 && at >= 0) throw wrongValue(`${field}[${at}]`, 'a named type (integer goes alone, as numgen and hash make it)', 'integer');
  return types;
}

/** A set's key and value layout, checked. */
export function setShape(s: NftSet, field: string): SetShape {
  const flags = s.flags === undefined ? [] : s.flags.map((f, i) => oneOf(f, settableFlags, `${field}.flags[${i}]`));
  return {
    key: typeList(s.type, `${field}.type`),
    value: s.map === undefined ? undefined : s.map === 'verdict' ? 'verdict' : isObjectMap(s.map) ? 'object' : typeList(s.map, `${field}.map`),
    interval: flags.includes('interval'),
  };
}

/** A set to add (with its id in the transaction), checked, with nft's userdata. */
export function setToRaw(s: NftSet, field: string, id: number): { family: number; attrs: RawAttrs; shape: SetShape } {
  knownFields(object(s, field), setFields, field);
  const ref = setRefToRaw(s, field);
  const shape = setShape(s, field);
  let flags = s.flags === undefined ? 0 : flagBits(setFlags, s.flags, `${field}.flags`);
  const concat = Array.isArray(shape.key) && shape.key.length > 1;
  const key = Array.isArray(shape.key) ? keyLayout(shape.key) : { id: shape.key.id, len: shape.key.len, fields: [] };
  if (shape.value === 'object') flags |= K.NFT_SET_OBJECT;
  else if (shape.value) flags |= K.NFT_SET_MAP;
  if (concat && shape.interval) flags |= K.NFT_SET_CONCAT;
  if (s.timeout !== undefined) flags |= K.NFT_SET_TIMEOUT;
  const a: RawAttrs = { table: ref.table, name: ref.name, flags, keyType: key.id, keyLen: key.len };
  const ud: Buffer[] = [u32Record(UDATA.SET_KEYBYTEORDER, byteorderOf(shape.key))];
  if (shape.value === 'verdict') {
    a.dataType = K.NFT_DATA_VERDICT;
    a.dataLen = 0;
    ud.push(u32Record(UDATA.SET_DATABYTEORDER, 0));
  } else if (shape.value === 'object') {
    // The objects' kind, and no value byte order in the userdata, as nft writes an object map.
    const m = object(s.map, `${field}.map`);
    knownFields(m, new Set(['object']), `${field}.map`);
    a.objType = named(objectTypes, m.object, `${field}.map.object`);
  } else if (shape.value) {
    const v = Array.isArray(shape.value) ? keyLayout(shape.value) : { id: shape.value.id, len: shape.value.len };
    a.dataType = v.id;
    a.dataLen = v.len;
    ud.push(u32Record(UDATA.SET_DATABYTEORDER, byteorderOf(shape.value)));
  }
  a.id = id;
  if (s.policy !== undefined) a.policy = setPolicies.byName[oneOf(s.policy, setPolicies.names, field, 'policy')];
  const desc: RawAttrs = {};
  if (s.size !== undefined) desc.size = integer(s.size, `${field}.size`, 1, 0xffffffff);
  if (concat && shape.interval) desc.concat = key.fields.map((len) => ({ len }));
  if (Object.keys(desc).length) a.desc = desc;
  if (s.timeout !== undefined) a.timeout = integer(s.timeout, `${field}.timeout`, 0, Number.MAX_SAFE_INTEGER);
  if (s.gcInterval !== undefined) a.gcInterval = integer(s.gcInterval, `${field}.gcInterval`, 0, 0xffffffff);
  // A concatenation (key or map value) is described as a "typeof" record
  // too (of no expressions: the types come from the type number), as nft does.
  // nft's own descriptions, where the caller has them (NftSet.typeof), take their place.
  const given = s.typeof === undefined ? {} : typeofRecords(s.typeof, `${field}.typeof`);
  const keyTypeof = given.key ?? (concat ? CONCAT_TYPEOF : undefined);
  const valueTypeof = given.value ?? (Array.isArray(shape.value) && shape.value.length > 1 ? CONCAT_TYPEOF : undefined);
  if (keyTypeof) ud.push(record(UDATA.SET_KEY_TYPEOF, keyTypeof));
  if (valueTypeof) ud.push(record(UDATA.SET_DATA_TYPEOF, valueTypeof));
  if (shape.value) ud.push(u32Record(UDATA.SET_DATA_INTERVAL, 0));
  if (s.comment !== undefined) ud.push(comment(s.comment, `${field}.comment`, UDATA.SET_COMMENT));
  a.userdata = Buffer.concat(ud);
  if (optionalBoolean(s.counter, field, false, 'counter')) a.expr = { type: 'counter' };
  return { family: ref.family, attrs: a, shape };
}

/** The "typeof" record nft writes for a concatenation of plain types: a concatenation of no expressions. */
const CONCAT_TYPEOF = Buffer.concat([u32Record(UDATA.SET_TYPEOF_EXPR, EXPR_CONCAT), record(UDATA.SET_TYPEOF_DATA, Buffer.alloc(0))]);

/** NftSet.typeof's records, checked. */
function typeofRecords(v: unknown, field: string): { key?: Buffer; value?: Buffer } {
  const o = object(v, field);
  knownFields(o, new Set(['key', 'value']), field);
  const one = (x: unknown, f: string) => {
    if (x === undefined) return undefined;
    if (!(x instanceof Uint8Array)) throw wrongType(f, 'a Buffer or Uint8Array (as a read gave it)', x);
    if (x.length > 255) throw outOfRange(f, 'at most 255 bytes (one userdata record)', x.length);
    return Buffer.from(x);
  };
  return { key: one(o.key, `${field}.key`), value: one(o.value, `${field}.value`) };
}

/** nft's byte order record for a key or value: one type's own, an unknown type's as read, none for a concatenation. */
function byteorderOf(t: DataType[] | OtherType): number {
  if (!Array.isArray(t)) return t.byteorder === 'host' ? 1 : t.byteorder === 'big' ? 2 : 0;
  return t.length === 1 ? typeInfo(t[0]).byteorder : 0;
}

/**
 * A key's or a map value's types from the set's type number and nft's byte
 * order record; one this library does not know (or whose length or byte
 * order is not theirs, as an integer nft keeps big end first) as its
 * number, length and byte order.
 */
function typesOf(id: number, len: number, byteorder: number | undefined): DataType | DataType[] | OtherType {
  const t = typesOfKey(id);
  // nft records no byte order for a concatenation: an integer in one could be either, so it stays unnamed.
  const mismatch = t && t.includes('integer') && (t.length > 1 || byteorder !== typeInfo('integer').byteorder);
  if (!t || mismatch || (len && keyLayout(t).len !== len)) {
    const other: OtherType = { id, len };
    if (byteorder === 1 || byteorder === 2) other.byteorder = byteorder === 1 ? 'host' : 'big';
    return other;
  }
  return t.length === 1 ? t[0] : t;
}

/** A set as the kernel listed it, and its layout. */
export function setFromRaw(family: number, a: RawAttrs): { set: NftSet; shape: SetShape } {
  const keyLen = (a.keyLen as number | undefined) ?? 0;
  const userdata = a.userdata as Uint8Array | undefined;
  const type = typesOf((a.keyType as number | undefined) ?? 0, keyLen, u32Of(userdata, UDATA.SET_KEYBYTEORDER));
  const s: NftSet = { family: familyName(family), table: a.table as string, name: a.name as string, type };
  const rawFlags = (a.flags as number | undefined) ?? 0;
  let map: NftSet['map'];
  if (rawFlags & K.NFT_SET_OBJECT) {
    map = { object: objectTypes.name((a.objType as number | undefined) ?? 0) };
    s.map = map;
  } else if (rawFlags & K.NFT_SET_MAP) {
    const dt = (a.dataType as number | undefined) ?? 0;
    // A concatenation of values (ipv4_addr . inet_service) is numbered as a concatenated key is.
    map = dt === K.NFT_DATA_VERDICT || dt === VERDICT_TYPE_ID ? 'verdict' : typesOf(dt, (a.dataLen as number | undefined) ?? 0, u32Of(userdata, UDATA.SET_DATABYTEORDER));
    s.map = map;
  }
  const shown = setFlags.flags(rawFlags & ~(K.NFT_SET_MAP | K.NFT_SET_CONCAT | K.NFT_SET_EXPR | K.NFT_SET_OBJECT)) as NftSet['flags'];
  if (shown && shown.length) s.flags = shown;
  if (a.timeout !== undefined) s.timeout = a.timeout as number;
  if (a.gcInterval !== undefined) s.gcInterval = a.gcInterval as number;
  const desc = a.desc as RawAttrs | undefined;
  if (desc?.size !== undefined) s.size = desc.size as number;
  if (a.policy !== undefined && a.policy !== K.NFT_SET_POL_PERFORMANCE) s.policy = setPolicies.name(a.policy as number) as NftSet['policy'];
  const exprs = [a.expr, ...((a.expressions as RawAttrs[] | undefined) ?? [])].filter(Boolean) as RawAttrs[];
  if (exprs.some((e) => e.type === 'counter')) s.counter = true;
  const c = commentOf(a.userdata as Uint8Array | undefined, UDATA.SET_COMMENT);
  if (c !== undefined) s.comment = c;
  // nft's descriptions by expression (typeof), but not the bare concatenation this library writes too.
  const records = parseRecords(a.userdata as Uint8Array | undefined);
  const typeofOf = (type: number) => records.find((r) => r.type === type && !r.value.equals(CONCAT_TYPEOF))?.value;
  const keyTypeof = typeofOf(UDATA.SET_KEY_TYPEOF);
  const valueTypeof = typeofOf(UDATA.SET_DATA_TYPEOF);
  if (keyTypeof || valueTypeof) s.typeof = { ...(keyTypeof ? { key: Buffer.from(keyTypeof) } : {}), ...(valueTypeof ? { value: Buffer.from(valueTypeof) } : {}) };
  if (a.handle !== undefined) s.handle = a.handle as number;
  const shape: SetShape = {
    key: Array.isArray(type) ? type : typeof type === 'string' ? [type] : type,
    value: map === undefined ? undefined : map === 'verdict' ? 'verdict' : isObjectMap(map) ? 'object' : typeof map === 'string' ? [map] : map,
    interval: (rawFlags & K.NFT_SET_INTERVAL) !== 0,
  };
  return { set: s, shape };
}

// --- rules ---

const ruleFields = new Set(['family', 'table', 'chain', 'expressions', 'comment', 'handle', 'position']);

/** A rule to add or replace, checked. */
export function ruleToRaw(r: Rule, field: string, withHandle: boolean): { family: number; attrs: RawAttrs } {
  knownFields(object(r, field), ruleFields, field);
  const a: RawAttrs = { table: objectName(r.table, `${field}.table`), chain: objectName(r.chain, `${field}.chain`) };
  if (withHandle) a.handle = integer(r.handle, `${field}.handle`, 1, Number.MAX_SAFE_INTEGER);
  if (r.position !== undefined) a.position = integer(r.position, `${field}.position`, 1, Number.MAX_SAFE_INTEGER);
  if (!Array.isArray(r.expressions)) throw wrongType(`${field}.expressions`, 'an array of expressions', r.expressions);
  a.expressions = r.expressions.map((e, i) => expressionToRaw(e, `${field}.expressions[${i}]`));
  if (r.comment !== undefined) {
    a.userdata = comment(r.comment, `${field}.comment`);
    if ((a.userdata as Buffer).length > USERDATA_MAX) throw outOfRange(`${field}.comment`, `at most ${USERDATA_MAX} bytes of userdata`, r.comment);
  }
  return { family: familyOf(r.family, `${field}.family`), attrs: a };
}

/** A rule as the kernel listed it. */
export function ruleFromRaw(family: number, a: RawAttrs): Rule {
  const r: Rule = {
    family: familyName(family),
    table: a.table as string,
    chain: a.chain as string,
    expressions: ((a.expressions as RawAttrs[] | undefined) ?? []).map(expressionFromRaw),
  };
  const c = commentOf(a.userdata as Uint8Array | undefined);
  if (c !== undefined) r.comment = c;
  if (a.handle !== undefined) r.handle = a.handle as number;
  return r;
}
