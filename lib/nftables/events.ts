/**
 * nf_tables' ruleset changes as they are committed, by any program (what
 * `nft monitor` shows), as an async iterator. The kernel announces each
 * change of a transaction, then the transaction's new generation; the
 * stream yields a transaction's changes once its end has come, each in the
 * form commit() takes (a set's consecutive elements as one change, as a
 * caller writes them), then a `commit` event naming the generation and the
 * process that committed. Dropped announcements are never a silent gap:
 * the stream yields `{ type: 'overrun' }` where they went missing.
 */
import type { OpenOptions } from '../netlink/client.js';
import { fromNativeFailure } from '../netlink/errors.js';
import { EventStream, openStream } from '../netlink/event-stream.js';
import { knownFields, object, optionalInteger } from '../util/check.js';
import { setKey } from './changes.js';
import { elementsFromRaw } from './elements.js';
import { K, type NativeNftablesEvents, type RawEvent, type RawReply, addon } from './native.js';
import { type SetShape, chainFromRaw, familyName, ruleFromRaw, setFromRaw, tableFromRaw } from './objects.js';
import { objectFromRaw } from './stateful-objects.js';
import type { Change, Element, RuleRef } from './types.js';

/** A committed change, as commit() takes it. */
export interface NftablesChangeEvent {
  /** Marks a change. */
  type: 'change';
  /** The change: a rule's `handle` and `position` are the kernel's in that namespace. */
  change: Change;
}

/**
 * The end of a transaction: the ruleset's new generation, and who
 * committed it as the kernel names them.
 */
export interface NftablesCommitEvent {
  /** Marks a transaction's end. */
  type: 'commit';
  /** The ruleset's generation after it (NFTA_GEN_ID). */
  generation: number;
  /** The committing thread's id: a single-threaded program's pid; this library commits from a worker thread, one of its process's threads (NFTA_GEN_PROC_PID). */
  pid?: number;
  /** The committing thread's name (NFTA_GEN_PROC_NAME). */
  process?: string;
}

/** The kernel dropped announcements here (the consumer fell behind): read the ruleset again to know where it stands. */
export interface NftablesOverrunEvent {
  /** Marks a gap. */
  type: 'overrun';
}

/** An announcement of a kind this library has no schema for (a flowtable, say). */
export interface NftablesUnknownEvent {
  /** Marks an announcement not decoded. */
  type: 'unknown';
  /** Its NFT_MSG_* number. */
  message: number;
}

/** One event of the stream. */
export type NftablesEvent = NftablesChangeEvent | NftablesCommitEvent | NftablesOverrunEvent | NftablesUnknownEvent;

/** Options of Nftables.events(). */
export interface EventOptions {
  /** How many announcements may wait unread before the reader stops and lets the kernel drop (and announce) the rest; 16384 when left out. */
  maxQueued?: number;
}

/** A set's element layout by its family, table and name, read from the kernel; undefined when the set is gone. */
export type ShapeLookup = (family: number, table: string, name: string) => Promise<SetShape | undefined>;

type Message = RawReply & { portId: number; flags: number };

/** A set whose layout could not be read (deleted before its elements' announcement was read): keys as bytes, a map's values left out (whether verdicts or data is the layout's to say). */
const UNKNOWN_SHAPE: SetShape = { key: { id: 0, len: 0 }, interval: false };

/** Ruleset changes, a transaction at a time; see Nftables.events(). */
export class NftablesEventStream extends EventStream<NftablesEvent> {
  /** The announcements of the transaction under way, until its end. */
  private pending: Array<Message | { unknown: number }> = [];
  /** Layouts of the sets announced here (a set's elements come after it). */
  private readonly shapes = new Map<string, SetShape>();

  /** @internal */
  constructor(
    private readonly native: NativeNftablesEvents,
    private readonly lookUp: ShapeLookup,
  ) {
    super(native);
  }

  protected async take(): Promise<Error | undefined> {
    const r = this.native.take();
    try {
      await this.read(r.events);
    } catch (err) {
      // A set's layout could not be read (the handle closed, say): the stream ends with that, after what was read.
      return err as Error;
    }
    return r.error ? fromNativeFailure(r.error, 'nftables events') : undefined;
  }

  private async read(events: RawEvent[]): Promise<void> {
    for (const e of events) {
      if ('overrun' in e) {
        // What came of the transaction before the gap, then the gap.
        await this.endTransaction();
        this.queue.push({ type: 'overrun' });
      } else if ('unknown' in e) {
        this.pending.push({ unknown: e.unknown });
      } else if (e.type === 'newgen') {
        await this.endTransaction();
        const commit: NftablesEvent = { type: 'commit', generation: e.attrs.id as number };
        if (e.attrs.procPid !== undefined) commit.pid = e.attrs.procPid as number;
        if (e.attrs.procName !== undefined) commit.process = e.attrs.procName as string;
        this.queue.push(commit);
      } else {
        this.pending.push(e);
      }
    }
  }

  /** The pending announcements as changes, a set's consecutive elements of one kind as one change. */
  private async endTransaction(): Promise<void> {
    const msgs = this.pending;
    this.pending = [];
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i];
      if ('unknown' in m) {
        this.queue.push({ type: 'unknown', message: m.unknown });
        continue;
      }
      if (m.type === 'newsetelem' || m.type === 'delsetelem') {
        const lists: Uint8Array[] = [];
        let j = i;
        for (; j < msgs.length && sameElementChange(msgs[j], m); j++) {
          const list = (msgs[j] as Message).attrs.elements;
          if (list !== undefined) lists.push(list as Uint8Array);
        }
        i = j - 1;
        this.queue.push({ type: 'change', change: await this.elementChange(m, lists) });
        continue;
      }
      const change = this.changeOf(m);
      if (change) this.queue.push({ type: 'change', change });
    }
  }

  private async elementChange(m: Message, lists: Uint8Array[]): Promise<Change> {
    const table = m.attrs.table as string;
    const name = m.attrs.set as string;
    const shape = this.shapes.get(setKey(m.family, table, name)) ?? (await this.lookUp(m.family, table, name)) ?? UNKNOWN_SHAPE;
    const set = { family: familyName(m.family), table, name };
    const elements: Element[] = elementsFromRaw(shape, lists);
    return m.type === 'newsetelem' ? { op: 'addElements', set, elements } : { op: 'deleteElements', set, elements };
  }

  /** Any other announcement as its change; undefined for one that is no change. */
  private changeOf(m: Message): Change | undefined {
    const a = m.attrs;
    switch (m.type) {
      case 'newtable': return { op: 'addTable', table: tableFromRaw(m.family, a) };
      case 'deltable':
        this.forgetTable(m.family, a.name as string);
        return { op: 'deleteTable', table: tableFromRaw(m.family, a) };
      case 'newchain': return { op: 'addChain', chain: chainFromRaw(m.family, a) };
      case 'delchain': return { op: 'deleteChain', chain: chainFromRaw(m.family, a) };
      case 'newrule': {
        // Where it went, as the kernel says: after the rule of handle `position` in the middle of
        // its chain; else last when appended (NLM_F_APPEND), first when not.
        const rule = ruleFromRaw(m.family, a);
        if (a.position !== undefined) rule.position = a.position as number;
        return a.position === undefined && !(m.flags & K.NLM_F_APPEND) ? { op: 'insertRule', rule } : { op: 'addRule', rule };
      }
      case 'delrule': return { op: 'deleteRule', rule: ruleFromRaw(m.family, a) as RuleRef };
      case 'newset': {
        const { set, shape } = setFromRaw(m.family, a);
        this.shapes.set(setKey(m.family, set.table, set.name), shape);
        return { op: 'addSet', set };
      }
      case 'delset': {
        // The kernel names the set, without its types.
        const set = { family: familyName(m.family), table: a.table as string, name: a.name as string };
        this.shapes.delete(setKey(m.family, set.table, set.name));
        return { op: 'deleteSet', set };
      }
      case 'newobj': return { op: 'addObject', object: objectFromRaw(m.family, a) };
      case 'delobj': return { op: 'deleteObject', object: objectFromRaw(m.family, a) };
      default: return undefined;
    }
  }

  private forgetTable(family: number, table: string): void {
    const prefix = setKey(family, table, '');
    for (const k of this.shapes.keys()) if (k.startsWith(prefix)) this.shapes.delete(k);
  }
}

/** Whether `m` adds (or deletes) elements of the same set as `first`. */
function sameElementChange(m: Message | { unknown: number }, first: Message): boolean {
  return !('unknown' in m) && m.type === first.type && m.family === first.family && m.attrs.table === first.attrs.table && m.attrs.set === first.attrs.set;
}

/** Opens a stream in the namespace of `open` (a handle's options). */
export async function openEventStream(open: OpenOptions, options: EventOptions, lookUp: ShapeLookup): Promise<NftablesEventStream> {
  const o = object(options, 'options');
  knownFields(o, new Set(['maxQueued']), 'options');
  const maxQueued = optionalInteger(o.maxQueued, 'options.maxQueued', 1, 1 << 24, 16384);
  return openStream('Nftables.events', open, (readable, socket) => {
    const reader = new addon.NftablesEvents({ ...socket, maxQueued }, readable);
    return { reader, stream: new NftablesEventStream(reader, lookUp) };
  });
}
