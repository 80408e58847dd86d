/**
 * The shapes of the ipset API: set types, create and element options, and
 * what listing a set returns. A header read from one set is a valid create
 * spec for another: `create(h.name2, h.type, h)` and `replace(name,
 * entries, h)` take it as it comes.
 */

/** Every set type this library speaks (the ipset tool's 7.x types). */
export const SET_TYPES = [
  'hash:ip',
  'hash:ip,port',
  'hash:ip,port,ip',
  'hash:ip,port,net',
  'hash:ip,mark',
  'hash:ip,mac',
  'hash:mac',
  'hash:net',
  'hash:net,port',
  'hash:net,iface',
  'hash:net,net',
  'hash:net,port,net',
  'bitmap:ip',
  'bitmap:ip,mac',
  'bitmap:port',
  'list:set',
] as const;

/** A set type, as `ipset create` names it. */
export type SetType = (typeof SET_TYPES)[number];
/** The address family of a set: IPv4 (`inet`) or IPv6 (`inet6`). */
export type IpsetFamily = 'inet' | 'inet6';

/** Where and how to open the handle: `{ netns?, timeoutMs? }`. */
export type { OpenOptions as IpsetOpenOptions } from '../netlink/client.js';

/**
 * What `ipset create` takes after the type. Each option applies to the
 * types the tool offers it for (a TypeError otherwise); one the running
 * kernel's revision of the type lacks is refused with an
 * IpsetUnsupportedError before the set is created.
 */
export interface CreateOptions {
  /** hash:* (but hash:mac): the family of the addresses (default inet). */
  family?: IpsetFamily;
  /** hash:*: initial number of buckets (the kernel rounds it up to a power of two, at least 64). */
  hashSize?: number;
  /** hash:*: the most elements the set may hold. */
  maxElem?: number;
  /** Default timeout of elements, seconds; makes the set a timeout set (0: elements never expire unless given one). */
  timeout?: number;
  /** Elements carry packet and byte counters. */
  counters?: boolean;
  /** Elements may carry a comment. */
  comment?: boolean;
  /** Elements may carry skbmark, skbprio and skbqueue (for the SET target's --map-set). */
  skbinfo?: boolean;
  /** bitmap:ip, bitmap:ip,mac: 'FROM-TO' or 'NET/CIDR' (CIDR 0 to 31); bitmap:port: 'FROM-TO'. */
  range?: string;
  /** list:set: the number of member sets. */
  size?: number;
  /** hash:ip, hash:ip,port, hash:net,net, bitmap:ip: store addresses masked to this prefix length. */
  netmask?: number;
  /** hash:ip, hash:ip,port, hash:net,net: store addresses ANDed with this mask ('255.255.0.255'); excludes netmask. */
  bitmask?: string;
  /** hash:ip,mark: store marks ANDed with this mask (not 0). */
  markmask?: number;
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
  /** Seconds until the element expires (timeout sets only; 0: never). */
  timeout?: number;
  /** Free text (sets created with `comment`). */
  comment?: string;
  /** hash:*net* types: the element is an exception that matches nothing. */
  nomatch?: boolean;
  /** hash:net,iface: the interface name is a prefix ("eth" matches eth0, eth1...). */
  wildcard?: boolean;
  /** Initial packet counter (sets created with `counters`). */
  packets?: number | bigint;
  /** Initial byte counter (sets created with `counters`). */
  bytes?: number | bigint;
  /** 32-bit mark, or [mark, mask] (sets created with `skbinfo`). */
  skbmark?: number | [number, number];
  /** 'MAJOR:MINOR' in hex, as ipset prints it (sets created with `skbinfo`). */
  skbprio?: string;
  /** Transmit queue (sets created with `skbinfo`). */
  skbqueue?: number;
  /** list:set: place the member right before this one. */
  before?: string;
  /** list:set: place the member right after this one. */
  after?: string;
}

/** Options of add(). */
export interface AddOptions extends ElementOptions {
  /** Adding an element that is already there refreshes it instead of failing. */
  exist?: boolean;
}

/** Options of del(). */
export interface DelOptions {
  /** Deleting an element that is not there succeeds. */
  exist?: boolean;
  /** list:set: delete the member only if it is right before this one. */
  before?: string;
  /** list:set: delete the member only if it is right after this one. */
  after?: string;
}

/** Options of test(). */
export interface TestOptions {
  /** hash:*net* types: whether the element is in the set as a nomatch exception. */
  nomatch?: boolean;
  /** list:set: whether the member is right before this one. */
  before?: string;
  /** list:set: whether the member is right after this one. */
  after?: string;
}

/** Options of addMany() and delMany(). */
export interface BulkOptions {
  /** Entries already there (add) or not there (del) count as applied. */
  exist?: boolean;
}

/**
 * An element in structured form; it is written as the text `ipset save`
 * prints, so the same rules apply. `ip` and `ip2` may carry '/CIDR' or a
 * 'FROM-TO' range (IPv4).
 */
export interface EntryObject extends ElementOptions {
  /** The (first) address or network. */
  ip?: string;
  /** Prefix length of `ip`. */
  cidr?: number;
  /** Protocol of the port: a name ('tcp', 'udp', 'icmp'...) or number; tcp when left out. */
  proto?: string | number;
  /** Port, port range 'FROM-TO', service name, or ICMP 'TYPE/CODE' / type name. */
  port?: number | string;
  /** The second address or network (hash:ip,port,ip, hash:ip,port,net, hash:net,net, hash:net,port,net). */
  ip2?: string;
  /** Prefix length of `ip2`. */
  cidr2?: number;
  /** hash:net,iface: the interface name. */
  iface?: string;
  /** hash:net,iface: the interface is a bridge port (physdev). */
  physdev?: boolean;
  /** hash:mac, hash:ip,mac, bitmap:ip,mac: the ethernet address. */
  mac?: string;
  /** hash:ip,mark: the packet mark. */
  mark?: number;
  /** list:set: the member set. */
  name?: string;
}

/** An element: the text form `ipset save` prints ("10.0.0.1,tcp:80"), or an object. */
export type Entry = string | EntryObject;

/**
 * A set's header: its type and every create option it was made with, as
 * the kernel reports them, plus what the kernel keeps about it.
 */
export interface SetHeader {
  /** The set's name. */
  name: string;
  /** Its type. */
  type: SetType;
  /** The revision of the type the set was created with. */
  revision: number;
  /** The family (hash types; bitmap:ip and bitmap:ip,mac report inet). */
  family?: IpsetFamily;
  /** Number of hash buckets. */
  hashSize?: number;
  /** The most elements the set may hold. */
  maxElem?: number;
  /** Default timeout of elements, seconds (timeout sets only). */
  timeout?: number;
  /** Prefix length addresses are masked to (only when not a host's). */
  netmask?: number;
  /** Mask addresses are ANDed with, when the set was created with one. */
  bitmask?: string;
  /** hash:ip,mark: the mask marks are ANDed with. */
  markmask?: number;
  /** list:set: the number of member sets. */
  size?: number;
  /** Elements per hash bucket. */
  bucketSize?: number;
  /** The hash seed. */
  initval?: number;
  /** bitmap sets: 'FROM-TO'. */
  range?: string;
  /** Elements carry counters. */
  counters: boolean;
  /** Elements may carry comments. */
  comment: boolean;
  /** Elements may carry skbinfo. */
  skbinfo: boolean;
  /** A full set evicts to make room. */
  forceadd: boolean;
  /** How many rules and list:sets refer to the set. */
  references: number;
  /** Memory the set takes in the kernel, bytes. */
  memSize: number;
  /** Number of elements (kernels that report it). */
  elements?: number;
  /** The kernel's index of the set (kernels that report it). */
  index?: number;
}

/** A set's header and its elements. */
export interface SetListing extends SetHeader {
  /** Elements as `ipset save` prints them after "add NAME ". */
  entries: string[];
}

/** What replace() creates when the set does not exist yet: a type and create options (a SetHeader will do). */
export interface CreateSpec extends CreateOptions {
  /** The set's type. */
  type: SetType;
}

/** The ipset protocol a handle speaks. */
export interface ProtocolInfo {
  /** The protocol version in use: min(kernel's, 7). */
  version: number;
  /** The kernel's minimum supported version. */
  min: number;
}
