/**
 * Entries travel to the native parser as the text `ipset save` prints:
 * strings pass through (checked only for line breaks, which separate
 * entries), objects are written in that form first.
 */
import * as check from '../util/check.js';
import type { Entry, EntryObject, SetType } from './types.js';
import { elementOptionsText } from './validate.js';

const ENTRY_KEYS = ['ip', 'cidr', 'proto', 'port', 'ip2', 'cidr2', 'iface', 'physdev', 'mac', 'mark', 'name'];

/**
 * What an entry must be whatever the set: a non-empty string on one line,
 * or an object. `where` names it in errors ("entries[3]").
 */
export function checkEntry(entry: unknown, where: string): asserts entry is Entry {
  if (typeof entry === 'string') {
    if (/[\n\0]/.test(entry)) throw check.wrongValue(where, 'one line without NUL', entry);
    if (entry.trim() === '') throw check.wrongValue(where, 'a non-empty entry', entry);
    return;
  }
  if (!check.isObject(entry)) throw check.wrongType(where, 'a string or an object', entry);
}

/** The text of one entry for a set of `type` (checked with checkEntry() first). */
export function entryText(type: SetType, entry: Entry, where = 'entry'): string {
  if (typeof entry === 'string') return entry;
  return elementText(type, entry, where) + elementOptionsText(omit(entry, ENTRY_KEYS), [], where);
}

/**
 * The texts of entries for a set of `type`, separated by newlines. When
 * `context` says what the set was taken to be, a refused entry's error
 * says it too (it is built from the refusal's parts with the context
 * added to what the field takes).
 */
export function entryTexts(type: SetType, entries: readonly Entry[], context: string | undefined, where?: string): string {
  const texts = new Array<string>(entries.length);
  try {
    for (let i = 0; i < entries.length; i++) texts[i] = entryText(type, entries[i], where ?? `entries[${i}]`);
  } catch (err) {
    throw withContext(err, context);
  }
  return texts.join('\n');
}

function withContext(err: unknown, context: string | undefined): unknown {
  if (context === undefined) return err;
  if (err instanceof check.ArgumentRangeError) return check.outOfRange(err.field, `${err.expected} (${context})`, err.value);
  if (err instanceof check.ArgumentTypeError)
    return (err.code === 'ERR_INVALID_ARG_TYPE' ? check.wrongType : check.wrongValue)(err.field, `${err.expected} (${context})`, err.value);
  return err;
}

function omit(o: EntryObject, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k) && v !== undefined) out[k] = v;
  return out;
}

/** A part the set's type requires; absent is a wrong kind of value (undefined), a space or comma a wrong value. */
function need(o: EntryObject, key: keyof EntryObject, where: string, type: SetType): string {
  const v = o[key];
  const field = `${where}.${key}`;
  if (v === undefined || v === null || v === '') throw check.wrongType(field, `a value (a ${type} element has one)`, v);
  const s = String(v);
  if (/[\s,"\0]/.test(s)) throw check.wrongValue(field, 'a value without spaces, commas or quotes', v);
  return s;
}

function address(o: EntryObject, ip: 'ip' | 'ip2', cidr: 'cidr' | 'cidr2', where: string, type: SetType): string {
  const a = need(o, ip, where, type);
  return o[cidr] === undefined ? a : `${a}/${need(o, cidr, where, type)}`;
}

function protoPort(o: EntryObject, where: string, type: SetType): string {
  const port = need(o, 'port', where, type);
  return o.proto === undefined ? port : `${need(o, 'proto', where, type)}:${port}`;
}

function elementText(type: SetType, o: EntryObject, where: string): string {
  const ip = () => address(o, 'ip', 'cidr', where, type);
  const ip2 = () => address(o, 'ip2', 'cidr2', where, type);
  const mac = () => need(o, 'mac', where, type);
  switch (type) {
    case 'hash:ip':
    case 'hash:net':
    case 'bitmap:ip':
      return ip();
    case 'hash:ip,port':
    case 'hash:net,port':
      return `${ip()},${protoPort(o, where, type)}`;
    case 'hash:ip,port,ip':
    case 'hash:ip,port,net':
    case 'hash:net,port,net':
      return `${ip()},${protoPort(o, where, type)},${ip2()}`;
    case 'hash:net,net':
      return `${ip()},${ip2()}`;
    case 'hash:net,iface':
      return `${ip()},${o.physdev ? 'physdev:' : ''}${need(o, 'iface', where, type)}`;
    case 'hash:ip,mark':
      return `${ip()},${check.integer(o.mark, `${where}.mark`, 0, 0xffffffff)}`;
    case 'hash:ip,mac':
      return `${ip()},${mac()}`;
    case 'hash:mac':
      return mac();
    case 'bitmap:ip,mac':
      return o.mac === undefined ? ip() : `${ip()},${mac()}`;
    case 'bitmap:port':
      return need(o, 'port', where, type);
    case 'list:set':
      return need(o, 'name', where, type);
  }
}
