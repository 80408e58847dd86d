/**
 * Entries travel to the native parser as the text `ipset save` prints:
 * strings pass through (checked only for line breaks, which separate
 * entries), objects are written in that form first.
 */
import type { Entry, EntryObject, SetType } from './types.js';
import { elementOptionsText } from './validate.js';

const ENTRY_KEYS = ['ip', 'cidr', 'proto', 'port', 'ip2', 'cidr2', 'iface', 'physdev', 'name'];

/** The text of one entry; `where` names it in errors ("entry 3"). */
export function entryText(type: SetType, entry: Entry, where = 'entry'): string {
  if (typeof entry === 'string') {
    if (/[\n\0]/.test(entry)) throw new TypeError(`${where} must not contain a newline or NUL`);
    if (entry.trim() === '') throw new TypeError(`${where} must not be empty`);
    return entry;
  }
  if (typeof entry !== 'object' || entry === null)
    throw new TypeError(`${where} must be a string or an object, got ${entry === null ? 'null' : typeof entry}`);
  return elementText(type, entry, where) + elementOptionsText(omit(entry, ENTRY_KEYS));
}

function omit(o: EntryObject, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k) && v !== undefined) out[k] = v;
  return out;
}

function need(o: EntryObject, key: keyof EntryObject, where: string): string {
  const v = o[key];
  if (v === undefined || v === null || v === '') throw new TypeError(`${where}.${key} is required`);
  const s = String(v);
  if (/[\s,"\0]/.test(s)) throw new TypeError(`${where}.${key} must not contain spaces, commas or quotes`);
  return s;
}

function address(o: EntryObject, ip: 'ip' | 'ip2', cidr: 'cidr' | 'cidr2', where: string): string {
  const a = need(o, ip, where);
  return o[cidr] === undefined ? a : `${a}/${need(o, cidr, where)}`;
}

function protoPort(o: EntryObject, where: string): string {
  const port = need(o, 'port', where);
  return o.proto === undefined ? port : `${need(o, 'proto', where)}:${port}`;
}

function elementText(type: SetType, o: EntryObject, where: string): string {
  switch (type) {
    case 'hash:ip':
    case 'hash:net':
    case 'bitmap:ip':
      return address(o, 'ip', 'cidr', where);
    case 'hash:ip,port':
    case 'hash:net,port':
      return `${address(o, 'ip', 'cidr', where)},${protoPort(o, where)}`;
    case 'hash:ip,port,ip':
    case 'hash:ip,port,net':
      return `${address(o, 'ip', 'cidr', where)},${protoPort(o, where)},${address(o, 'ip2', 'cidr2', where)}`;
    case 'hash:net,iface':
      return `${address(o, 'ip', 'cidr', where)},${o.physdev ? 'physdev:' : ''}${need(o, 'iface', where)}`;
    case 'bitmap:port':
      return need(o, 'port', where);
    case 'list:set':
      return need(o, 'name', where);
  }
}
