/**
 * Field checks shared by the IPVS request writer. Each returns the checked
 * value or throws a TypeError/RangeError that names the field, before a
 * byte is sent.
 */
import { ipv4MaskFromPrefix, ipv4PrefixFromMask, checkInteger } from '../util/address.js';
import type { AddressFamily } from '../util/address.js';
import { DAEMON_STATE } from './constants.js';
import type { DaemonState } from './types.js';

// Kernel persistence and connection timeouts are seconds multiplied by HZ
// in an unsigned int.
export const MAX_TIMEOUT = 2147483;
const NAME_RE = /^[A-Za-z0-9_.-]+$/;

/**
 * Refuses a field `o` does not know: a misspelt option (`schedular`) must
 * not be silently ignored. The names a read returns (counters, connection
 * counts, family) are allowed too, so what the library reads can be passed
 * back. for...in allocates nothing: this runs for every op of a batch.
 */
export function checkKnownFields(o: Record<string, unknown>, known: ReadonlySet<string>, field: string): void {
  for (const k in o) {
    if (!known.has(k) && o[k] !== undefined)
      throw new TypeError(`${field}.${k} is not a field it takes (known: ${[...known].join(', ')})`);
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

export function checkBoolean(v: unknown, field: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new TypeError(`${field} must be a boolean`);
  return v;
}

/** A kernel module name (scheduler, persistence engine). */
export function checkName(v: unknown, field: string, maxLen: number): string {
  if (typeof v !== 'string' || v.length === 0) throw new TypeError(`${field} must be a non-empty string`);
  if (v.length > maxLen) throw new RangeError(`${field} must be at most ${maxLen} characters, got '${v}'`);
  if (!NAME_RE.test(v)) throw new TypeError(`${field} has characters a kernel module name cannot have: '${v}'`);
  return v;
}

export function checkFamily(v: unknown, field: string): AddressFamily {
  if (v !== 'inet' && v !== 'inet6') throw new TypeError(`${field} must be 'inet' or 'inet6', got ${JSON.stringify(v)}`);
  return v;
}

/** A name from one of the constant tables (forwarding methods, tunnel types...), as its number. */
export function oneOf(table: Readonly<Record<string, number>>, v: unknown, field: string, name: string): number {
  if (typeof v === 'string' && Object.prototype.hasOwnProperty.call(table, v)) return table[v];
  throw new TypeError(`${field}.${name} must be one of ${Object.keys(table).join(', ')}, got ${JSON.stringify(v)}`);
}

export function daemonState(v: unknown, field: string): number {
  if (v !== 'master' && v !== 'backup') throw new TypeError(`${field} must be 'master' or 'backup', got ${JSON.stringify(v)}`);
  return DAEMON_STATE[v as DaemonState];
}

/** An IPv4 persistence netmask ('255.255.255.0' or a prefix length) as its four bytes. */
export function ipv4NetmaskBytes(nm: unknown, field: string): Uint8Array {
  let text: string | undefined;
  if (typeof nm === 'number') text = ipv4MaskFromPrefix(checkInteger(nm, field, 0, 32));
  else if (typeof nm === 'string' && ipv4PrefixFromMask(nm) !== null) text = nm;
  if (text === undefined)
    throw new TypeError(`${field} must be an IPv4 netmask like '255.255.255.0' or a prefix length 0-32, got ${JSON.stringify(nm)}`);
  return Uint8Array.from(text.split('.').map(Number));
}
