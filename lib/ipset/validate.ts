/**
 * Argument checks. Everything the caller passes is checked here (or, for
 * element text, by the native parser) before anything reaches the kernel:
 * bad values throw TypeError / RangeError naming the field.
 */
import { SET_TYPES, type CreateOptions, type ElementOptions, type SetType } from './types.js';

/** IPSET_MAXNAMELEN - 1 (the native layer checks against the header too). */
export const MAX_NAME_LENGTH = 31;
/** IPSET_MAX_COMMENT_SIZE. */
export const MAX_COMMENT_LENGTH = 255;
/** The kernel's IPSET_MAX_TIMEOUT: (UINT_MAX >> 1) / 1000 seconds. */
export const MAX_TIMEOUT = Math.floor(0x7fffffff / 1000);

export function setName(value: unknown, field = 'name'): string {
  if (typeof value !== 'string') throw new TypeError(`${field} must be a string`);
  if (value.length === 0) throw new TypeError(`${field} must not be empty`);
  if (Buffer.byteLength(value) > MAX_NAME_LENGTH)
    throw new RangeError(`${field} must be at most ${MAX_NAME_LENGTH} bytes, got '${value}'`);
  if (/[\0\n]/.test(value)) throw new TypeError(`${field} must not contain NUL or newline`);
  return value;
}

export function setType(value: unknown, field = 'type'): SetType {
  if (typeof value !== 'string' || !(SET_TYPES as readonly string[]).includes(value))
    throw new TypeError(`${field} must be one of ${SET_TYPES.join(', ')}; got ${JSON.stringify(value)}`);
  return value as SetType;
}

export function integer(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number') throw new TypeError(`${field} must be a number`);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${field} must be an integer from ${min} to ${max}, got ${value}`);
  return value;
}

export function boolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new TypeError(`${field} must be a boolean`);
  return value;
}

/** Options of calls that take only `exist` (del, addMany, delMany). */
export function onlyExist(options: unknown, operation: string): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  for (const key of Object.keys(options)) {
    if (key !== 'exist') throw new TypeError(`unknown ${operation} option '${key}': ${operation} takes only exist`);
  }
}

function known(options: object, allowed: readonly string[], what: string): void {
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) throw new TypeError(`unknown ${what} option '${key}'`);
  }
}

const CREATE_KEYS = [
  'family', 'hashSize', 'maxElem', 'timeout', 'counters', 'comment', 'skbinfo', 'range', 'size',
  'netmask', 'forceadd', 'bucketSize', 'initval', 'exist', 'type',
] as const;

/** Checks create options; type-specific applicability is checked natively. */
export function createOptions(options: unknown): CreateOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  known(options, CREATE_KEYS, 'create');
  const o = options as Record<string, unknown>;
  const out: CreateOptions = {};
  if (o.family !== undefined) {
    if (o.family !== 'inet' && o.family !== 'inet6') throw new TypeError(`family must be 'inet' or 'inet6'`);
    out.family = o.family;
  }
  if (o.hashSize !== undefined) out.hashSize = integer(o.hashSize, 'hashSize', 1, 0xffffffff);
  if (o.maxElem !== undefined) out.maxElem = integer(o.maxElem, 'maxElem', 1, 0xffffffff);
  if (o.timeout !== undefined) out.timeout = integer(o.timeout, 'timeout', 0, MAX_TIMEOUT);
  if (o.size !== undefined) out.size = integer(o.size, 'size', 1, 0xffffffff);
  if (o.netmask !== undefined) out.netmask = integer(o.netmask, 'netmask', 1, out.family === 'inet6' ? 128 : 32);
  if (o.bucketSize !== undefined) out.bucketSize = integer(o.bucketSize, 'bucketSize', 1, 255);
  if (o.initval !== undefined) out.initval = integer(o.initval, 'initval', 0, 0xffffffff);
  for (const key of ['counters', 'comment', 'skbinfo', 'forceadd', 'exist'] as const) {
    if (o[key] !== undefined) out[key] = boolean(o[key], key);
  }
  if (o.range !== undefined) {
    if (typeof o.range !== 'string') throw new TypeError('range must be a string');
    out.range = o.range;
  }
  return out;
}

const ELEMENT_KEYS = ['timeout', 'comment', 'nomatch', 'packets', 'bytes', 'skbmark', 'skbprio', 'skbqueue'];

function counter(value: unknown, field: string): string {
  if (typeof value === 'bigint') {
    if (value < 0n || value > 0xffffffffffffffffn) throw new RangeError(`${field} must fit 64 bits`);
    return value.toString();
  }
  return String(integer(value, field, 0, Number.MAX_SAFE_INTEGER));
}

function hex32(value: unknown, field: string): string {
  return '0x' + integer(value, field, 0, 0xffffffff).toString(16);
}

/**
 * Element options as the text suffix `ipset save` prints, in its order
 * (timeout, nomatch, packets, bytes, comment, skbmark, skbprio, skbqueue).
 * `extra` lists keys that may also appear (like `exist`) and are skipped.
 */
export function elementOptionsText(options: unknown, extra: readonly string[] = []): string {
  if (options === undefined) return '';
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  known(options, [...ELEMENT_KEYS, ...extra], 'element');
  const o = options as ElementOptions & Record<string, unknown>;
  let s = '';
  if (o.timeout !== undefined) s += ` timeout ${integer(o.timeout, 'timeout', 0, MAX_TIMEOUT)}`;
  if (o.nomatch !== undefined && boolean(o.nomatch, 'nomatch')) s += ' nomatch';
  if (o.packets !== undefined) s += ` packets ${counter(o.packets, 'packets')}`;
  if (o.bytes !== undefined) s += ` bytes ${counter(o.bytes, 'bytes')}`;
  if (o.comment !== undefined) s += ` comment "${comment(o.comment)}"`;
  if (o.skbmark !== undefined) {
    const [mark, mask] = Array.isArray(o.skbmark) ? o.skbmark : [o.skbmark, undefined];
    s += ` skbmark ${hex32(mark, 'skbmark')}${mask === undefined ? '' : '/' + hex32(mask, 'skbmark mask')}`;
  }
  if (o.skbprio !== undefined) {
    if (typeof o.skbprio !== 'string' || !/^[0-9a-fA-F]{1,4}:[0-9a-fA-F]{1,4}$/.test(o.skbprio))
      throw new TypeError(`skbprio must be 'MAJOR:MINOR' in hex, got ${JSON.stringify(o.skbprio)}`);
    s += ` skbprio ${o.skbprio}`;
  }
  if (o.skbqueue !== undefined) s += ` skbqueue ${integer(o.skbqueue, 'skbqueue', 0, 0xffff)}`;
  return s;
}

function comment(value: unknown): string {
  if (typeof value !== 'string') throw new TypeError('comment must be a string');
  if (Buffer.byteLength(value) > MAX_COMMENT_LENGTH)
    throw new RangeError(`comment must be at most ${MAX_COMMENT_LENGTH} bytes`);
  if (/["\n\r\0]/.test(value))
    throw new TypeError('comment must not contain \'"\', newlines or NUL (ipset cannot print them back)');
  return value;
}
