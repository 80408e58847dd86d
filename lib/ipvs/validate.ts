/**
 * The rules of IPVS's own fields, on top of the library's checking module
 * (util/check.ts, whose errors they throw): kernel module names, families,
 * sync daemon states, persistence netmasks and timeouts.
 */
import { ipv4MaskFromPrefix, ipv4PrefixFromMask, type AddressFamily } from '../util/address.js';
import { integer, name, oneOf, tableValue, wrongType, wrongValue } from '../util/check.js';
import { DAEMON_STATE } from './constants.js';

// Kernel persistence and connection timeouts are seconds multiplied by HZ
// in an unsigned int.
export const MAX_TIMEOUT = 2147483;

const FAMILIES: readonly AddressFamily[] = ['inet', 'inet6'];
const MODULE_NAME = /^[A-Za-z0-9_.-]+$/;
const MODULE_NAME_TEXT = 'a kernel module name (letters, digits, _ . -)';

/** A kernel module name (scheduler, persistence engine) of at most maxLen bytes. */
export function moduleName(v: unknown, field: string, maxLen: number): string {
  return name(v, field, { maxBytes: maxLen, pattern: MODULE_NAME, patternText: MODULE_NAME_TEXT });
}

/** 'inet' or 'inet6'. */
export function family(v: unknown, field: string, part?: string): AddressFamily {
  return oneOf(v, FAMILIES, field, part);
}

/** A sync daemon's state ('master' or 'backup') as the kernel's number. */
export function daemonState(v: unknown, field: string): number {
  return tableValue(DAEMON_STATE, v, field);
}

/** A timeout in seconds the kernel can hold. */
export function timeoutSeconds(v: unknown, field: string, part?: string): number {
  return integer(v, field, 1, MAX_TIMEOUT, part);
}

const NETMASK_TEXT = "an IPv4 netmask like '255.255.255.0' or a prefix length from 0 to 32";

/** An IPv4 persistence netmask ('255.255.255.0' or a prefix length) as its four bytes. */
export function ipv4NetmaskBytes(nm: unknown, field: string): Uint8Array {
  let text: string;
  if (typeof nm === 'number') text = ipv4MaskFromPrefix(integer(nm, field, 0, 32));
  else if (typeof nm !== 'string') throw wrongType(field, NETMASK_TEXT, nm);
  else if (ipv4PrefixFromMask(nm) === null) throw wrongValue(field, NETMASK_TEXT, nm);
  else text = nm;
  return Uint8Array.from(text.split('.').map(Number));
}
