/**
 * ipset's own argument rules, built on the library's checking module
 * (../util/check.ts, whose rule says which error a bad value gets).
 * Everything the caller passes is checked here (or, for element text, by
 * the native parser) before anything reaches the kernel. Which options a
 * set type takes is the native type table's to say (native/ipset/
 * set_types.cc); the values are checked here.
 */
import { native } from '../netlink/binding.js';
import { parseAddress } from '../util/address.js';
import * as check from '../util/check.js';
import { SET_TYPES, type CreateOptions, type SetType } from './types.js';

const uapi = native.ipsetConstants;
/** Longest set name, bytes: IPSET_MAXNAMELEN less its NUL. */
export const MAX_NAME_LENGTH = uapi.IPSET_MAXNAMELEN - 1;
/** Longest element comment, bytes: IPSET_MAX_COMMENT_SIZE. */
export const MAX_COMMENT_LENGTH = uapi.IPSET_MAX_COMMENT_SIZE;
/** The kernel's IPSET_MAX_TIMEOUT, (UINT_MAX >> 1) / 1000 seconds (kernel-internal, not in the uapi header). */
export const MAX_TIMEOUT = Math.floor(0x7fffffff / 1000);
const U32 = 0xffffffff;

/** A set name: 1 to 31 bytes, no NUL or newline. */
export function setName(value: unknown, field = 'name'): string {
  return check.name(value, field, { maxBytes: MAX_NAME_LENGTH });
}

/** One of the set types this library speaks. */
export function setType(value: unknown, field = 'type'): SetType {
  return check.oneOf(value, SET_TYPES, field);
}

/** An options argument: undefined for none, else a plain object. */
export function options(value: unknown, field = 'options'): Record<string, unknown> {
  return value === undefined ? {} : check.object(value, field);
}

/** Options that take nothing but the listed keys. */
export function only(value: unknown, keys: readonly string[], field = 'options'): Record<string, unknown> {
  const o = options(value, field);
  check.knownFields(o, new Set(keys), field);
  return o;
}

const CREATE_KEYS = [
  'family', 'hashSize', 'maxElem', 'timeout', 'counters', 'comment', 'skbinfo', 'range', 'size',
  'netmask', 'bitmask', 'markmask', 'forceadd', 'bucketSize', 'initval', 'exist',
] as const;
/** What a SetHeader has beyond the create options: taken and ignored, so a header can create a set. */
const HEADER_ONLY = ['name', 'type', 'revision', 'references', 'memSize', 'elements', 'index'];
const CREATE_FIELDS = new Set<string>([...CREATE_KEYS, ...HEADER_ONLY]);

/**
 * Checks create options (or a SetHeader) for a set of `type`: the values
 * here, which types take which option natively. Returns the options alone.
 */
export function createOptions(type: SetType, value: unknown, field = 'options'): CreateOptions {
  const o = options(value, field);
  check.knownFields(o, CREATE_FIELDS, field);
  const out: Record<string, unknown> = {};
  const put = (key: (typeof CREATE_KEYS)[number], v: unknown) => {
    if (v !== undefined) out[key] = v;
  };
  const at = (key: string) => `${field}.${key}`;
  const num = (key: (typeof CREATE_KEYS)[number], min: number, max: number) =>
    o[key] === undefined ? undefined : check.integer(o[key], at(key), min, max);
  const family = o.family === undefined ? undefined : check.oneOf(o.family, ['inet', 'inet6'] as const, at('family'));
  put('family', family);
  put('hashSize', num('hashSize', 1, U32));
  put('maxElem', num('maxElem', 1, U32));
  put('timeout', num('timeout', 0, MAX_TIMEOUT));
  put('size', num('size', 1, U32));
  put('netmask', num('netmask', 1, family === 'inet6' ? 128 : 32));
  put('markmask', num('markmask', 1, U32));
  put('bucketSize', num('bucketSize', 1, 255));
  put('initval', num('initval', 0, U32));
  for (const key of ['counters', 'comment', 'skbinfo', 'forceadd', 'exist'] as const)
    if (o[key] !== undefined) out[key] = check.boolean(o[key], at(key));
  if (o.bitmask !== undefined) out.bitmask = bitmask(o.bitmask, family ?? 'inet', at('bitmask'));
  if (o.netmask !== undefined && o.bitmask !== undefined)
    throw check.wrongValue(at('bitmask'), 'left out when netmask is given (they exclude each other)', o.bitmask);
  if (o.range !== undefined) out.range = range(type, o.range, at('range'));
  return out as CreateOptions;
}

function bitmask(value: unknown, family: 'inet' | 'inet6', field: string): string {
  const a = parseAddress(check.string(value, field), field);
  if (a.family !== family) throw check.wrongValue(field, `a mask of the set's family (${family})`, value);
  if (/^[0.:]+$/.test(a.text)) throw check.wrongValue(field, 'a mask that is not all zeroes', value);
  return a.text;
}

/** bitmap:port 'FROM-TO'; bitmap:ip and bitmap:ip,mac 'FROM-TO' or 'NET/CIDR' with CIDR 0 to 31. */
function range(type: SetType, value: unknown, field: string): string {
  const s = check.string(value, field);
  if (type === 'bitmap:port') {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(s);
    if (!m || Number(m[1]) > 65535 || Number(m[2]) > 65535 || Number(m[1]) > Number(m[2]))
      throw check.wrongValue(field, "ports 'FROM-TO' (0 to 65535, FROM not above TO)", value);
    return s;
  }
  if (!type.startsWith('bitmap:')) return s; // refused natively: only bitmaps take a range
  const net = /^([^/]+)\/(\d{1,2})$/.exec(s);
  const ipv4 = (a: string) => a.length > 0 && parseAddressOrNull(a)?.family === 'inet';
  if (net) {
    if (!ipv4(net[1])) throw check.wrongValue(field, "an IPv4 'FROM-TO' or 'NET/CIDR'", value);
    if (Number(net[2]) > 31) throw check.outOfRange(field, "a 'NET/CIDR' with CIDR from 0 to 31 (a host is no range)", value);
    return s;
  }
  const [from, to, ...rest] = s.split('-');
  if (rest.length > 0 || to === undefined || !ipv4(from) || !ipv4(to))
    throw check.wrongValue(field, "an IPv4 'FROM-TO' or 'NET/CIDR'", value);
  return s;
}

function parseAddressOrNull(a: string) {
  try {
    return parseAddress(a, 'address');
  } catch {
    return null;
  }
}

const ELEMENT_KEYS = ['timeout', 'comment', 'nomatch', 'wildcard', 'packets', 'bytes', 'skbmark', 'skbprio', 'skbqueue', 'before', 'after'];

function counter(value: unknown, field: string): string {
  if (typeof value === 'bigint') {
    if (value < 0n || value > 0xffffffffffffffffn) throw check.outOfRange(field, 'from 0 to 2^64-1', value);
    return value.toString();
  }
  return String(check.integer(value, field, 0, Number.MAX_SAFE_INTEGER));
}

function hex32(value: unknown, field: string): string {
  return '0x' + check.integer(value, field, 0, U32).toString(16);
}

function flag(o: Record<string, unknown>, key: string, field: string): boolean {
  return o[key] !== undefined && check.boolean(o[key], `${field}.${key}`);
}

/**
 * Element options as the text suffix `ipset save` prints, in its order
 * (timeout, nomatch, wildcard, packets, bytes, comment, skbmark, skbprio,
 * skbqueue), then list:set's before/after. `extra` lists keys that may
 * also appear (like `exist`) and are skipped.
 */
export function elementOptionsText(value: unknown, extra: readonly string[] = [], field = 'options'): string {
  const o = only(value, [...ELEMENT_KEYS, ...extra], field);
  const at = (key: string) => `${field}.${key}`;
  let s = '';
  if (o.timeout !== undefined) s += ` timeout ${check.integer(o.timeout, at('timeout'), 0, MAX_TIMEOUT)}`;
  if (flag(o, 'nomatch', field)) s += ' nomatch';
  if (flag(o, 'wildcard', field)) s += ' wildcard';
  if (o.packets !== undefined) s += ` packets ${counter(o.packets, at('packets'))}`;
  if (o.bytes !== undefined) s += ` bytes ${counter(o.bytes, at('bytes'))}`;
  if (o.comment !== undefined) s += ` comment "${comment(o.comment, at('comment'))}"`;
  if (o.skbmark !== undefined) {
    const [mark, mask] = Array.isArray(o.skbmark) ? o.skbmark : [o.skbmark, undefined];
    s += ` skbmark ${hex32(mark, at('skbmark'))}${mask === undefined ? '' : '/' + hex32(mask, at('skbmark[1]'))}`;
  }
  if (o.skbprio !== undefined) {
    if (typeof o.skbprio !== 'string' || !/^[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}$/.test(o.skbprio))
      throw check.wrongValue(at('skbprio'), "'MAJOR:MINOR' in hex", o.skbprio);
    s += ` skbprio ${o.skbprio}`;
  }
  if (o.skbqueue !== undefined) s += ` skbqueue ${check.integer(o.skbqueue, at('skbqueue'), 0, 0xffff)}`;
  if (o.before !== undefined && o.after !== undefined)
    throw check.wrongValue(at('after'), 'left out when before is given', o.after);
  if (o.before !== undefined) s += ` before ${memberName(o.before, at('before'))}`;
  if (o.after !== undefined) s += ` after ${memberName(o.after, at('after'))}`;
  return s;
}

/** A set name as a word of element text: no spaces or quotes. */
export function memberName(value: unknown, field: string): string {
  const s = setName(value, field);
  if (/[\s"]/.test(s)) throw check.wrongValue(field, 'a set name without spaces or quotes', s);
  return s;
}

function comment(value: unknown, field: string): string {
  const s = check.string(value, field);
  if (Buffer.byteLength(s) > MAX_COMMENT_LENGTH) throw check.outOfRange(field, `at most ${MAX_COMMENT_LENGTH} bytes long`, s);
  if (/["\n\r\0]/.test(s)) throw check.wrongValue(field, "text without '\"', newlines or NUL (ipset cannot print them back)", s);
  return s;
}
