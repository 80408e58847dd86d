/**
 * The objects of an nf_tables ruleset as this library writes and reads them.
 * What a read returns is what a write takes: the fields only the kernel
 * sets (`handle`, `use`, counters, `expires`) are ignored on the way in.
 */
import type { DataType } from './datatypes.js';
import type { Expression } from './expressions/index.js';
import type { Key } from './keys.js';
import type { NftObject, NftObjectRef } from './stateful-objects.js';
import type { Family, Hook, ObjectType, Policy, SetFlag, SetPolicy, TableFlag, VerdictCode } from './names.js';

export type { DataType } from './datatypes.js';
export type { NftCounter, NftLimit, NftObject, NftObjectMeta, NftObjectRef, NftOtherObject, NftQuota } from './stateful-objects.js';
export type { Key, KeyPart } from './keys.js';

/** Names a table. */
export interface TableRef {
  /** The table's family: `ip`, `ip6`, `inet` (both), `arp`, `bridge` or `netdev`. */
  family: Family;
  /** The table's name, unique within its family, at most 255 bytes. */
  name: string;
}

/** A table: the container of chains and sets, of one family. */
export interface Table extends TableRef {
  /** `dormant`: its base chains see no packets; `owner`: it belongs to the handle that added it, which alone may change it, and goes when that handle's socket closes (NFTA_TABLE_FLAGS). */
  flags?: TableFlag[];
  /** Shown by `nft list`, at most 127 bytes (kept in the table's userdata as nft keeps it). */
  comment?: string;
  /** Read only: the kernel's handle. */
  handle?: number;
  /** Read only: how many chains, sets and objects it holds. */
  use?: number;
}

/** Names a chain. */
export interface ChainRef {
  /** The table's family: `ip`, `ip6`, `inet` (both), `arp`, `bridge` or `netdev`. */
  family: Family;
  /** The table's name. */
  table: string;
  /** The chain's name, unique within its table, at most 255 bytes. */
  name: string;
}

/** What a base chain does: filter, NAT (the first packet of a connection) or route. */
export type ChainType = 'filter' | 'nat' | 'route';

/** A chain: a base chain when it has a hook (then `type` and `priority` too), else a regular one that rules jump to. */
export interface Chain extends ChainRef {
  /** Base chains: `filter` (the default), `nat` or `route` (NFTA_CHAIN_TYPE). */
  type?: ChainType;
  /** Makes it a base chain: where in the packet's path it is called (NFTA_HOOK_HOOKNUM). */
  hook?: Hook;
  /** Base chains, required: the order among chains of the same hook, lowest first; nft's `dstnat` is -100, `filter` 0, `srcnat` 100 (NFTA_HOOK_PRIORITY). */
  priority?: number;
  /** Base chains: what happens to a packet no rule decided. */
  policy?: Policy;
  /** netdev (and inet ingress) base chains: the interface. */
  device?: string;
  /** Shown by `nft list`, at most 127 bytes. */
  comment?: string;
  /** Read only: the kernel's handle. */
  handle?: number;
  /** Read only: how many references the kernel counts on it (NFTA_CHAIN_USE). */
  use?: number;
}

/** Names a set or map. */
export interface SetRef {
  /** The table's family: `ip`, `ip6`, `inet` (both), `arp`, `bridge` or `netdev`. */
  family: Family;
  /** The table's name. */
  table: string;
  /** The set's name, unique within its table, at most 255 bytes. */
  name: string;
}

/** A key type this library does not know, by nft's number and the key's length. */
export interface OtherType {
  /** nft's data type number (NFTA_SET_KEY_TYPE, NFTA_SET_DATA_TYPE). */
  id: number;
  /** The key's (or value's) length in bytes, 1-64 (NFTA_SET_KEY_LEN, NFTA_SET_DATA_LEN). */
  len: number;
  /** The byte order nft recorded for it (its userdata), by which nft prints the values; kept as read. */
  byteorder?: 'host' | 'big';
}

/** A set (or, with `map`, a map): typed keys, one type or a concatenation of several. */
export interface NftSet extends SetRef {
  /** The key's type, or a concatenation's types in order (`['ipv4_addr', 'inet_service']`), as nft's `type` names them. */
  type: DataType | DataType[] | OtherType;
  /** A map's value type: a data type, a concatenation's types in order (`['ipv4_addr', 'inet_service']`), verdicts (a verdict map), or named objects of one kind (`{ object: 'counter' }`: nft's `type ipv4_addr : counter`, each element's value an object's name). */
  map?: DataType | DataType[] | 'verdict' | OtherType | ObjectMap;
  /** 'interval' (prefixes and ranges), 'timeout', 'constant', 'dynamic', 'anonymous' (nft's inline sets, named `__set0`..., bound to the rule that looks them up in the same transaction); 'map' and 'concat' follow from `map` and `type`. */
  flags?: SetFlag[];
  /** Default element timeout in milliseconds (sets the 'timeout' flag). */
  timeout?: number;
  /** How often the kernel removes expired elements, in milliseconds (NFTA_SET_GC_INTERVAL); the kernel's default when left out. */
  gcInterval?: number;
  /** The most elements expected (NFTA_SET_DESC_SIZE). */
  size?: number;
  /** What the kernel favours in picking the set's backend (NFTA_SET_POLICY): `performance` (the default; a read leaves it out) or `memory`. */
  policy?: SetPolicy;
  /** Every element counts packets and bytes. */
  counter?: boolean;
  /** Shown by `nft list`, at most 127 bytes. */
  comment?: string;
  /**
   * nft's `typeof` descriptions of the key and the value (`typeof ip saddr . tcp dport`), as the
   * userdata records only nft reads: kept as read, so that a set nft made that way lists the same
   * when written back. The types themselves are `type` and `map`.
   */
  typeof?: SetTypeof;
  /** Read only: the kernel's handle. */
  handle?: number;
}

/** A verdict, as a verdict map's value. */
export interface Verdict {
  /** The verdict (NFTA_VERDICT_CODE); a number for a code without a name. */
  verdict: VerdictCode | number;
  /** The chain to jump or go to: given with `jump` and `goto` only (NFTA_VERDICT_CHAIN). */
  chain?: string;
}

/** An element of a set or map. */
export interface Element {
  /** The key: `'10.0.0.1'`, `80`, `'tcp'`, in interval sets `'10.0.0.0/8'` or `'1000-2000'`, for a concatenation one per type. A Buffer for a type this library does not know. */
  key: Key | Uint8Array;
  /** A map's value; in an object map, the object's name. */
  value?: Key | Verdict | Uint8Array;
  /** Milliseconds until it expires (sets with the 'timeout' flag). */
  timeout?: number;
  /** Read only: milliseconds left. */
  expires?: number;
  /** Shown by `nft list`, at most 127 bytes. */
  comment?: string;
  /** Read only, in sets with `counter`. */
  counter?: {
    /** Packets that matched the element. */
    packets: bigint;
    /** Their bytes. */
    bytes: bigint;
  };
}

/** nft's `typeof` userdata records of a set (NftSet.typeof), as bytes. */
export interface SetTypeof {
  /** Of the key. */
  key?: Uint8Array;
  /** Of a map's value. */
  value?: Uint8Array;
}

/** An object map's value type: the kind of the named objects its elements give (NFTA_SET_OBJ_TYPE). */
export interface ObjectMap {
  /** The objects' kind. */
  object: ObjectType | number;
}

/** Names a chain's rule. */
export interface RuleRef {
  /** The table's family: `ip`, `ip6`, `inet` (both), `arp`, `bridge` or `netdev`. */
  family: Family;
  /** The table's name. */
  table: string;
  /** The chain's name. */
  chain: string;
  /** The rule's handle, as a read gives it. */
  handle: number;
}

/** A rule: expressions run in order until one decides the packet's fate. */
export interface Rule {
  /** The table's family: `ip`, `ip6`, `inet` (both), `arp`, `bridge` or `netdev`. */
  family: Family;
  /** The table's name. */
  table: string;
  /** The chain's name. */
  chain: string;
  /** What the rule does, in order; one nft statement often takes several (a load, then a compare). */
  expressions: Expression[];
  /** Shown by `nft list`, at most 127 bytes. */
  comment?: string;
  /** Read: the kernel's handle. Written: which rule replaceRule replaces. */
  handle?: number;
  /** addRule: the handle to add after; insertRule: the handle to insert before. */
  position?: number;
}

/** A set with its elements, as ruleset() reads it. */
export interface SetWithElements extends NftSet {
  /** Every element, in the form listElements() gives them. */
  elements: Element[];
}

/** A consistent read of (part of) the ruleset, all at one generation. */
export interface Ruleset {
  /** The generation all of it was read at: pass it to commit() to apply changes only if nothing moved since. */
  generation: number;
  /** The tables, as listTables() gives them. */
  tables: Table[];
  /** The chains, as listChains() gives them. */
  chains: Chain[];
  /** The sets and maps, with their elements. */
  sets: SetWithElements[];
  /** The rules, each chain's in order. */
  rules: Rule[];
  /** The named stateful objects (counters, quotas, limits, ...), as listObjects() gives them. */
  objects: NftObject[];
}

/** One change of a transaction. `exclusive` adds fail with EEXIST rather than leave what exists. */
export type Change =
  /** Adds a table. */
  | {
      /** Which change. */
      op: 'addTable';
      /** The table, with its flags and comment. */
      table: Table;
      /** Fail with EEXIST when it exists already (nft's `create`), rather than leave it as it is (nft's `add`). */
      exclusive?: boolean;
    }
  /** Deletes a table with everything in it. */
  | {
      /** Which change. */
      op: 'deleteTable';
      /** The table. */
      table: TableRef;
    }
  /** Deletes every rule of every chain of the table. */
  | {
      /** Which change. */
      op: 'flushTable';
      /** The table. */
      table: TableRef;
    }
  /** Adds a chain. */
  | {
      /** Which change. */
      op: 'addChain';
      /** The chain; with a hook, a base chain. */
      chain: Chain;
      /** Fail with EEXIST when it exists already (nft's `create`), rather than leave it as it is (nft's `add`). */
      exclusive?: boolean;
    }
  /** Deletes a chain, which nothing may jump or go to. */
  | {
      /** Which change. */
      op: 'deleteChain';
      /** The chain. */
      chain: ChainRef;
    }
  /** Deletes every rule of the chain. */
  | {
      /** Which change. */
      op: 'flushChain';
      /** The chain. */
      chain: ChainRef;
    }
  /** Adds a set or map. */
  | {
      /** Which change. */
      op: 'addSet';
      /** The set, with its key type. */
      set: NftSet;
      /** Fail with EEXIST when it exists already (nft's `create`), rather than leave it as it is (nft's `add`). */
      exclusive?: boolean;
    }
  /** Deletes a set or map, which no rule may use. */
  | {
      /** Which change. */
      op: 'deleteSet';
      /** The set. */
      set: SetRef;
    }
  /** Deletes every element of the set. */
  | {
      /** Which change. */
      op: 'flushSet';
      /** The set. */
      set: SetRef;
    }
  /** Adds elements to a set or map. */
  | {
      /** Which change. */
      op: 'addElements';
      /** The set: added earlier in the transaction, read or written by this handle before, or read first. */
      set: SetRef;
      /** The elements, with their values for a map. */
      elements: Element[];
      /** Fail with EEXIST when it exists already (nft's `create`), rather than leave it as it is (nft's `add`). */
      exclusive?: boolean;
    }
  /** Deletes elements; one that is not there fails the transaction (ENOENT). */
  | {
      /** Which change. */
      op: 'deleteElements';
      /** The set. */
      set: SetRef;
      /** The elements, by key (values, timeouts and comments are not needed). */
      elements: Element[];
    }
  /** Appends (after `position`, when given). */
  | {
      /** Which change. */
      op: 'addRule';
      /** The rule. */
      rule: Rule;
    }
  /** Prepends (before `position`, when given). */
  | {
      /** Which change. */
      op: 'insertRule';
      /** The rule. */
      rule: Rule;
    }
  /** Replaces a rule in place. */
  | {
      /** Which change. */
      op: 'replaceRule';
      /** The new rule. */
      rule: Rule & {
        /** The handle of the rule it replaces. */
        handle: number;
      };
    }
  /** Deletes a rule. */
  | {
      /** Which change. */
      op: 'deleteRule';
      /** The rule, by its handle. */
      rule: RuleRef;
    }
  /** Adds a named stateful object (`nft add counter`); one that exists is left as it is, unless `exclusive`. */
  | {
      /** Which change. */
      op: 'addObject';
      /** The object, with its state to start from. */
      object: NftObject;
      /** Refuse an object that exists (EEXIST) rather than leave it (`nft create counter`). */
      exclusive?: boolean;
    }
  /** Deletes a named stateful object; the kernel refuses while a rule or a map element refers to it (EBUSY). */
  | {
      /** Which change. */
      op: 'deleteObject';
      /** The object: its family, table, kind and name (an object as read will do). */
      object: NftObjectRef;
    };

/** Options of commit(). */
export interface CommitOptions {
  /** The generation the changes were computed at (from ruleset() or generation()): if the ruleset moved since, nothing is applied and a GenerationChangedError says so. */
  generation?: number;
}
