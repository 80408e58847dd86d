/**
 * The objects of an nf_tables ruleset as this library writes and reads them.
 * What a read returns is what a write takes: the fields only the kernel
 * sets (`handle`, `use`, counters, `expires`) are ignored on the way in.
 */
import type { DataType } from './datatypes.js';
import type { Expression } from './expressions/index.js';
import type { Key } from './keys.js';
import type { Family, Hook, Policy, SetFlag, SetPolicy, TableFlag, VerdictCode } from './names.js';

export type { DataType } from './datatypes.js';
export type { Key, KeyPart } from './keys.js';

/** Names a table. */
export interface TableRef {
  family: Family;
  name: string;
}

/** A table: the container of chains and sets, of one family. */
export interface Table extends TableRef {
  flags?: TableFlag[];
  comment?: string;
  /** Read only: the kernel's handle. */
  handle?: number;
  /** Read only: how many chains, sets and objects it holds. */
  use?: number;
}

/** Names a chain. */
export interface ChainRef {
  family: Family;
  table: string;
  name: string;
}

/** What a base chain does: filter, NAT (the first packet of a connection) or route. */
export type ChainType = 'filter' | 'nat' | 'route';

/** A chain: a base chain when it has a hook (then `type` and `priority` too), else a regular one that rules jump to. */
export interface Chain extends ChainRef {
  type?: ChainType;
  hook?: Hook;
  priority?: number;
  /** Base chains: what happens to a packet no rule decided. */
  policy?: Policy;
  /** netdev (and inet ingress) base chains: the interface. */
  device?: string;
  comment?: string;
  handle?: number;
  use?: number;
}

/** Names a set or map. */
export interface SetRef {
  family: Family;
  table: string;
  name: string;
}

/** A key type this library does not know, by nft's number and the key's length. */
export interface OtherType {
  id: number;
  len: number;
}

/** A set (or, with `map`, a map): typed keys, one type or a concatenation of several. */
export interface NftSet extends SetRef {
  type: DataType | DataType[] | OtherType;
  /** A map's value type: a data type, or verdicts (a verdict map). */
  map?: DataType | 'verdict' | OtherType;
  /** 'interval' (prefixes and ranges), 'timeout', 'constant', 'dynamic'; 'map' and 'concat' follow from `map` and `type`. */
  flags?: SetFlag[];
  /** Default element timeout in milliseconds (sets the 'timeout' flag). */
  timeout?: number;
  gcInterval?: number;
  /** The most elements expected (NFTA_SET_DESC_SIZE). */
  size?: number;
  policy?: SetPolicy;
  /** Every element counts packets and bytes. */
  counter?: boolean;
  comment?: string;
  handle?: number;
}

/** A verdict, as a verdict map's value. */
export interface Verdict {
  verdict: VerdictCode | number;
  chain?: string;
}

/** An element of a set or map. */
export interface Element {
  /** The key: `'10.0.0.1'`, `80`, `'tcp'`, in interval sets `'10.0.0.0/8'` or `'1000-2000'`, for a concatenation one per type. A Buffer for a type this library does not know. */
  key: Key | Uint8Array;
  /** A map's value. */
  value?: Key | Verdict | Uint8Array;
  /** Milliseconds until it expires (sets with the 'timeout' flag). */
  timeout?: number;
  /** Read only: milliseconds left. */
  expires?: number;
  comment?: string;
  /** Read only, in sets with `counter`. */
  counter?: { packets: bigint; bytes: bigint };
}

/** Names a chain's rule. */
export interface RuleRef {
  family: Family;
  table: string;
  chain: string;
  handle: number;
}

/** A rule: expressions run in order until one decides the packet's fate. */
export interface Rule {
  family: Family;
  table: string;
  chain: string;
  expressions: Expression[];
  comment?: string;
  /** Read: the kernel's handle. Written: which rule replaceRule replaces. */
  handle?: number;
  /** addRule: the handle to add after; insertRule: the handle to insert before. */
  position?: number;
}

/** A set with its elements, as ruleset() reads it. */
export interface SetWithElements extends NftSet {
  elements: Element[];
}

/** A consistent read of (part of) the ruleset, all at one generation. */
export interface Ruleset {
  generation: number;
  tables: Table[];
  chains: Chain[];
  sets: SetWithElements[];
  rules: Rule[];
}

/** One change of a transaction. `exclusive` adds fail with EEXIST rather than leave what exists. */
export type Change =
  | { op: 'addTable'; table: Table; exclusive?: boolean }
  | { op: 'deleteTable'; table: TableRef }
  /** Deletes every rule of every chain of the table. */
  | { op: 'flushTable'; table: TableRef }
  | { op: 'addChain'; chain: Chain; exclusive?: boolean }
  | { op: 'deleteChain'; chain: ChainRef }
  | { op: 'flushChain'; chain: ChainRef }
  | { op: 'addSet'; set: NftSet; exclusive?: boolean }
  | { op: 'deleteSet'; set: SetRef }
  | { op: 'flushSet'; set: SetRef }
  | { op: 'addElements'; set: SetRef; elements: Element[]; exclusive?: boolean }
  | { op: 'deleteElements'; set: SetRef; elements: Element[] }
  /** Appends (after `position`, when given). */
  | { op: 'addRule'; rule: Rule }
  /** Prepends (before `position`, when given). */
  | { op: 'insertRule'; rule: Rule }
  | { op: 'replaceRule'; rule: Rule & { handle: number } }
  | { op: 'deleteRule'; rule: RuleRef };

/** Options of commit(). */
export interface CommitOptions {
  /** The generation the changes were computed at (from ruleset() or generation()): if the ruleset moved since, nothing is applied and a GenerationChangedError says so. */
  generation?: number;
}
