/**
 * Nftables: a typed client for the kernel's nf_tables over nfnetlink.
 *
 * One handle owns one netlink socket (opened lazily, replaced after a broken
 * conversation); calls are queued so concurrent callers can share it.
 * Changes go in transactions (commit()): all or nothing, checked before a
 * byte is sent. Reads decode into the types commit() takes. Element changes
 * need their set's key types; they come from the same transaction, from
 * what this handle has read or written, or from one read of the set first.
 */
import { type OpenOptions, NetlinkClient, openHandle } from '../netlink/client.js';
import { NetlinkError } from '../netlink/errors.js';
import { integer, knownFields, object, unknownField, wrongValue } from '../util/check.js';
import { changesToRaw, setKey, setsToLookUp } from './changes.js';
import { elementsFromRaw } from './elements.js';
import { type EventOptions, type NftablesEventStream, openEventStream } from './events.js';
import { GenerationChangedError, NftablesTransactionError, refusedChange } from './errors.js';
import { type NativeNftablesHandle, type RawAttrs, type RawMessage, type RawReply, K, addon } from './native.js';
import { type Family, type ObjectType, objectTypes } from './names.js';
import { named } from './expressions/fields.js';
import { type NftObject, objectFromRaw } from './stateful-objects.js';
import {
  type SetShape, chainFromRaw, familyOf, objectName, ruleFromRaw, setFromRaw, setRefToRaw, setShape, tableFromRaw,
} from './objects.js';
import type { Chain, Change, CommitOptions, Element, NftSet, Rule, Ruleset, SetRef, SetWithElements, Table } from './types.js';

/** Which part of the ruleset a read covers: a family, and within it a table. */
export interface ListFilter {
  /** Only this family's tables and what they hold; every family when left out. */
  family?: Family;
  /** Only the table of this name (of each family, without `family`). */
  table?: string;
}

/** Which objects listObjects() and resetObjects() read: those of a family, a table, a kind. */
export interface ObjectFilter extends ListFilter {
  /** Only objects of this kind. */
  type?: ObjectType | number;
}

type Request = RawMessage & { dump: boolean };

/** How often ruleset() reads again when the ruleset moved while it read. */
const MAX_READS = 10;

/** A handle on nf_tables in one network namespace: reads, and changes in transactions. */
export class Nftables extends NetlinkClient<NativeNftablesHandle> {
  private readonly shapes = new Map<string, SetShape>();

  private constructor(
    handle: NativeNftablesHandle,
    private readonly options: OpenOptions,
  ) {
    super(handle, 'nftables');
  }

  /** Opens a handle (in `netns` if given). */
  static async open(options: OpenOptions = {}): Promise<Nftables> {
    return new Nftables(await openHandle((o) => new addon.NftablesHandle(o), options, 'Nftables.open'), { ...options });
  }

  /**
   * The ruleset's changes as they are committed, by any program, in this
   * handle's network namespace (`nft monitor`), read on a thread of its own:
   * each transaction's changes as commit() takes them, then its `commit`.
   * Iterate it with `for await`; close() it (or break out of the loop) to
   * stop. A set's elements are read with the set's layout, which this
   * handle looks up when the set was made before the stream opened.
   */
  async events(options: EventOptions = {}): Promise<NftablesEventStream> {
    return openEventStream(this.options, options, (family, table, name) => this.shapeOf(family, table, name));
  }

  /** The ruleset's generation: it moves with every committed transaction (anyone's). */
  async generation(): Promise<number> {
    const [r] = await this.query('generation', [{ type: 'getgen', family: 0, attrs: {}, dump: false }]);
    return r[0].attrs.id as number;
  }

  /** Tables, of every family or one. */
  async listTables(filter: ListFilter = {}): Promise<Table[]> {
    const f = checkFilter(filter);
    const [r] = await this.query('listTables', [dump('gettable', f.family)]);
    return r.filter((m) => f.table === undefined || m.attrs.name === f.table).map((m) => tableFromRaw(m.family, m.attrs));
  }

  /** Chains, of every table or one. */
  async listChains(filter: ListFilter = {}): Promise<Chain[]> {
    const f = checkFilter(filter);
    const [r] = await this.query('listChains', [dump('getchain', f.family)]);
    return r.filter((m) => f.table === undefined || m.attrs.table === f.table).map((m) => chainFromRaw(m.family, m.attrs));
  }

  /** Sets and maps without their elements, of every table or one (listElements() reads a set's elements). */
  async listSets(filter: ListFilter = {}): Promise<NftSet[]> {
    const f = checkFilter(filter);
    const [r] = await this.query('listSets', [dump('getset', f.family, f.table === undefined ? undefined : { table: f.table })]);
    return r.map((m) => this.remember(m).set);
  }

  /** Rules, of every chain or of one (`chain` needs `table`). */
  async listRules(filter: ListFilter & { chain?: string } = {}): Promise<Rule[]> {
    const f = checkFilter(filter, ['chain']);
    const attrs: RawAttrs = {};
    if (f.table !== undefined) attrs.table = f.table;
    if (f.chain !== undefined) attrs.chain = f.chain;
    const [r] = await this.query('listRules', [dump('getrule', f.family, attrs)]);
    return r.map((m) => ruleFromRaw(m.family, m.attrs));
  }

  /**
   * Named stateful objects (counters, quotas, limits, ...), of every table
   * or one, of every kind or one; each in the form addObject takes it.
   */
  async listObjects(filter: ObjectFilter = {}): Promise<NftObject[]> {
    return this.readObjects('listObjects', 'getobj', filter);
  }

  /**
   * As listObjects(), and zeroes what it read in the same step (`nft reset
   * counters`): counters and quotas start again from nothing, and what they
   * held up to then is in the answer, none of it lost between a read and a reset.
   */
  async resetObjects(filter: ObjectFilter = {}): Promise<NftObject[]> {
    return this.readObjects('resetObjects', 'getobjreset', filter);
  }

  /** One set's elements, in the form addElements takes them. */
  async listElements(set: SetRef): Promise<Element[]> {
    const ref = setRefToRaw(set, 'set');
    const [sets, elems] = await this.query('listElements', [
      { type: 'getset', family: ref.family, attrs: { table: ref.table, name: ref.name }, dump: false },
      { type: 'getsetelem', family: ref.family, attrs: { table: ref.table, set: ref.name }, dump: true },
    ], set);
    const { shape } = this.remember(sets[0]);
    return elementsFromRaw(shape, elementLists(elems));
  }

  /**
   * A consistent read: tables, chains, sets with their elements and rules,
   * all at one generation (read again when someone committed meanwhile).
   * Pass `generation` to commit() to apply changes computed from it only if
   * nothing moved since.
   */
  async ruleset(filter: ListFilter = {}): Promise<Ruleset> {
    const f = checkFilter(filter);
    const scoped = f.table === undefined ? undefined : { table: f.table };
    for (let read = 1; ; read++) {
      const [gen, tables, chains, sets, rules, objects] = await this.query('ruleset', [
        { type: 'getgen', family: 0, attrs: {}, dump: false },
        dump('gettable', f.family),
        dump('getchain', f.family),
        dump('getset', f.family, scoped),
        dump('getrule', f.family, scoped),
        dump('getobj', f.family, scoped),
      ]);
      const generation = gen[0].attrs.id as number;
      const inTable = (m: RawReply, key: string) => f.table === undefined || m.attrs[key] === f.table;
      const setMsgs = sets.filter((m) => inTable(m, 'table'));
      const second = await this.query('ruleset', [
        ...setMsgs.map((m) => ({ type: 'getsetelem', family: m.family, attrs: { table: m.attrs.table, set: m.attrs.name }, dump: true })),
        { type: 'getgen', family: 0, attrs: {}, dump: false },
      ]);
      const after = second[second.length - 1][0].attrs.id as number;
      const replies = [tables, chains, sets, rules, objects, ...second.slice(0, -1)].flat();
      if (after === generation && replies.every((m) => m.resId === (generation & 0xffff))) {
        return {
          generation,
          tables: tables.filter((m) => inTable(m, 'name')).map((m) => tableFromRaw(m.family, m.attrs)),
          chains: chains.filter((m) => inTable(m, 'table')).map((m) => chainFromRaw(m.family, m.attrs)),
          sets: setMsgs.map((m, i): SetWithElements => {
            const { set, shape } = this.remember(m);
            return { ...set, elements: elementsFromRaw(shape, elementLists(second[i])) };
          }),
          rules: rules.filter((m) => inTable(m, 'table')).map((m) => ruleFromRaw(m.family, m.attrs)),
          objects: objects.filter((m) => inTable(m, 'table')).map((m) => objectFromRaw(m.family, m.attrs)),
        };
      }
      if (read === MAX_READS)
        throw new NetlinkError({ errno: 4, code: 'EINTR', operation: 'ruleset', detail: `the ruleset changed during each of ${MAX_READS} reads; try again when it is quieter` });
    }
  }

  /**
   * Applies the changes as one transaction: all of them, or (when the kernel
   * refuses one) none, with an NftablesTransactionError naming the change.
   * With `generation`, nothing is applied if the ruleset moved since that
   * generation (GenerationChangedError). Bad input throws a TypeError or
   * RangeError naming the field before anything is sent. Resolves to the
   * number of messages the transaction took.
   */
  async commit(changes: readonly Change[], options: CommitOptions = {}): Promise<number> {
    const opts = object(options, 'options');
    knownFields(opts, new Set(['generation']), 'options');
    if (opts.generation !== undefined) integer(opts.generation, 'options.generation', 0, 0xffffffff);
    const missing = setsToLookUp(changes, (k) => this.shapes.has(k));
    if (missing.length) await this.lookUpSets(missing);
    const itemOrigins = new Map<number, number[]>();
    const raw = changesToRaw(changes, (k) => this.shapes.get(k), itemOrigins);
    if (raw.length === 0) return 0;
    const genid = opts.generation as number | undefined;
    return this.exclusive('commit', async () => {
      const r = await this.native('commit', undefined, () => this.handle.commit(raw, genid === undefined ? {} : { genid }));
      if (r.whole || r.failures.length) {
        this.shapes.clear();
        if (r.whole?.code === 'ERESTART' && genid !== undefined && !r.failures.length) throw new GenerationChangedError(genid);
        throw new NftablesTransactionError(
          changes,
          r.failures.map((f) => refusedChange(f, itemOrigins.get(f.change))),
          r.whole,
        );
      }
      this.learn(changes);
      return r.messages;
    });
  }

  // --- internals ---

  /** Keeps what a set read says about its elements' layout. */
  private remember(m: RawReply): { set: NftSet; shape: SetShape } {
    const r = setFromRaw(m.family, m.attrs);
    this.shapes.set(setKey(m.family, r.set.table, r.set.name), r.shape);
    return r;
  }

  /** What a committed transaction changed about the sets this handle knows. */
  private learn(changes: readonly Change[]): void {
    for (const c of changes) {
      if (c.op === 'deleteTable' || c.op === 'deleteSet') this.shapes.clear();
      if (c.op === 'addSet') {
        const r = setRefToRaw(c.set, 'set');
        this.shapes.set(setKey(r.family, r.table, r.name), setShape(c.set, 'set'));
      }
    }
  }

  /** A set's element layout, as this handle knows it or reads it; undefined when the set is gone. */
  private async shapeOf(family: number, table: string, name: string): Promise<SetShape | undefined> {
    const known = this.shapes.get(setKey(family, table, name));
    if (known) return known;
    try {
      const [r] = await this.query('events', [{ type: 'getset', family, attrs: { table, name }, dump: false }]);
      return this.remember(r[0]).shape;
    } catch (err) {
      if (err instanceof NetlinkError && err.code === 'ENOENT') return undefined;
      throw err;
    }
  }

  private async lookUpSets(sets: SetRef[]): Promise<void> {
    const refs = sets.map((s) => setRefToRaw(s, 'set'));
    const replies = await this.query('commit', refs.map((r) => ({ type: 'getset', family: r.family, attrs: { table: r.table, name: r.name }, dump: false })), sets);
    replies.forEach((msgs) => this.remember(msgs[0]));
  }

  /** A dump of objects, filtered by the kernel (table, kind) where it can. */
  private async readObjects(operation: string, type: string, filter: ObjectFilter): Promise<NftObject[]> {
    const f = checkFilter(filter, ['type']);
    const attrs: RawAttrs = {};
    if (f.table !== undefined) attrs.table = f.table;
    if (filter.type !== undefined) attrs.type = named(objectTypes, filter.type, 'filter.type');
    const [r] = await this.query(operation, [dump(type, f.family, attrs)]);
    return r.map((m) => objectFromRaw(m.family, m.attrs));
  }

  /** Runs gets and dumps in one conversation; a refusal is a NetlinkError about `subject`. */
  private query(operation: string, requests: Request[], subject?: unknown): Promise<RawReply[][]> {
    return this.exclusive(operation, async () => {
      const rs = await this.native(operation, subject, () => this.handle.query(requests));
      return rs.map((r, i) => {
        if (r.errno) {
          const what = requests[i].attrs.name ?? requests[i].attrs.set ?? requests[i].attrs.table;
          throw new NetlinkError({
            errno: r.errno,
            code: r.code,
            operation,
            subject: subject ?? (what === undefined ? undefined : String(what)),
            kernelMessage: r.message,
            text: r.text,
            hint: r.code === 'ENOENT' ? 'no such table, chain, set or object' : undefined,
          });
        }
        if (!requests[i].dump && r.messages.length === 0)
          throw new NetlinkError({ errno: 74, code: 'EBADMSG', operation, detail: 'the kernel answered without data' });
        return r.messages;
      });
    });
  }
}

/** The element lists of getsetelem replies (a reply without elements has none). */
function elementLists(replies: RawReply[]): Uint8Array[] {
  return replies.flatMap((m) => (m.attrs.elements === undefined ? [] : [m.attrs.elements as Uint8Array]));
}

function dump(type: string, family: number, attrs: RawAttrs = {}): Request {
  return { type, family, attrs, dump: true };
}

/** The family and table of a filter, checked, with `also` the other fields the call takes (checked by the caller). */
function checkFilter(filter: unknown, also: string[] = []): { family: number; table?: string; chain?: string } {
  const f = object(filter, 'filter');
  const known = ['family', 'table', ...also];
  for (const k of Object.keys(f)) if (!known.includes(k) && f[k] !== undefined) throw unknownField(`filter.${k}`, known, f[k]);
  const out: { family: number; table?: string; chain?: string } = {
    family: f.family === undefined ? K.NFPROTO_UNSPEC : familyOf(f.family, 'filter.family'),
  };
  if (f.table !== undefined) out.table = objectName(f.table, 'filter.table');
  if (also.includes('chain') && f.chain !== undefined) {
    if (out.table === undefined) throw wrongValue('filter.chain', 'given with filter.table', f.chain);
    out.chain = objectName(f.chain, 'filter.chain');
  }
  return out;
}
