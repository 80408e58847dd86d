/**
 * The shapes of the ipset API: set types, create and element options, and
 * what listing a set returns.
 */

export const SET_TYPES = [
  'hash:ip',
  'hash:ip,port',
  'hash:ip,port,ip',
  'hash:ip,port,net',
  'hash:net',
  'hash:net,port',
  'hash:net,iface',
  'bitmap:ip',
  'bitmap:port',
  'list:set',
] as const;

export type SetType = (typeof SET_TYPES)[number];
export type IpsetFamily = 'inet' | 'inet6';

/** Where and how to open the handle: `{ netns?, timeoutMs? }`. */
export type { OpenOptions as IpsetOpenOptions } from '../netlink/client.js';

export interface CreateOptions {
  family?: IpsetFamily;
  /** hash:*: initial number of buckets (the kernel rounds it up to a power of two, at least 64). */
  hashSize?: number;
  /** hash:*: the most elements the set may hold. */
  maxElem?: number;
  /** Default timeout of elements, seconds; makes the set a timeout set. */
  timeout?: number;
  counters?: boolean;
  comment?: boolean;
  skbinfo?: boolean;
  /** bitmap:ip: 'FROM-TO' or 'NET/CIDR'; bitmap:port: 'FROM-TO'. */
  range?: string;
  /** list:set: the number of member sets. */
  size?: number;
  /** hash:ip / bitmap:ip: store addresses masked to this prefix length. */
  netmask?: number;
  /** hash:*: when the set is full, evict a random element instead of refusing. */
  forceadd?: boolean;
  /** hash:*: elements per hash bucket (the kernel rounds up to an even number from 2 to 12). */
  bucketSize?: number;
  /** hash:*: the hash seed (the kernel picks a random one otherwise). */
  initval?: number;
  /** Succeed if an identical set already exists. */
  exist?: boolean;
}

/** Options of one element, as `ipset add` takes them. */
export interface ElementOptions {
  timeout?: number;
  comment?: string;
  nomatch?: boolean;
  packets?: number | bigint;
  bytes?: number | bigint;
  /** 32-bit mark, or [mark, mask]. */
  skbmark?: number | [number, number];
  /** 'MAJOR:MINOR' in hex, as ipset prints it. */
  skbprio?: string;
  skbqueue?: number;
}

export interface AddOptions extends ElementOptions {
  /** Adding an element that is already there refreshes it instead of failing. */
  exist?: boolean;
}

export interface DelOptions {
  /** Deleting an element that is not there succeeds. */
  exist?: boolean;
}

export interface BulkOptions {
  exist?: boolean;
}

/**
 * An element in structured form; it is written as the text `ipset save`
 * prints, so the same rules apply. `ip` and `ip2` may carry '/CIDR' or a
 * 'FROM-TO' range.
 */
export interface EntryObject extends ElementOptions {
  ip?: string;
  cidr?: number;
  proto?: string | number;
  port?: number | string;
  ip2?: string;
  cidr2?: number;
  iface?: string;
  physdev?: boolean;
  /** list:set: the member set. */
  name?: string;
}

/** An element: the text form `ipset save` prints ("10.0.0.1,tcp:80"), or an object. */
export type Entry = string | EntryObject;

export interface SetHeader {
  name: string;
  type: string;
  revision: number;
  family?: IpsetFamily;
  hashSize?: number;
  maxElem?: number;
  timeout?: number;
  netmask?: number;
  size?: number;
  bucketSize?: number;
  initval?: number;
  /** bitmap sets: 'FROM-TO'. */
  range?: string;
  counters: boolean;
  comment: boolean;
  skbinfo: boolean;
  forceadd: boolean;
  references: number;
  memSize: number;
  /** Number of elements (kernels that report it). */
  elements?: number;
  index?: number;
}

export interface SetListing extends SetHeader {
  /** Elements as `ipset save` prints them after "add NAME ". */
  entries: string[];
}

/** What replace() creates when the set does not exist yet. */
export interface CreateSpec extends CreateOptions {
  type: SetType;
}

export interface ProtocolInfo {
  /** The protocol version in use: min(kernel's, 7). */
  version: number;
  /** The kernel's minimum supported version. */
  min: number;
}
