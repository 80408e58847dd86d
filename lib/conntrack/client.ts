/**
 * Conntrack: a typed client for the kernel's connection tracking table
 * over nfnetlink (NFNL_SUBSYS_CTNETLINK).
 *
 * One handle owns one netlink socket (opened lazily, replaced after a
 * broken conversation); calls are queued so any number of callers can
 * share it. Entries come back in the form `conntrack -L -o extended`
 * shows them, and an entry read is a key for get() and delete() as it is.
 */
import { NetlinkClient, openHandle } from '../netlink/client.js';
import { NetlinkError } from '../netlink/errors.js';
import * as check from '../util/check.js';
import { openEventStream, type ConntrackEventStream } from './events.js';
import { ConntrackHandle, type NativeConntrackHandle, type NativeDeleteFailure } from './native.js';
import { EntryRecords } from './records.js';
import type {
  ConntrackEntry,
  ConntrackFamily,
  ConntrackFilter,
  ConntrackKey,
  ConntrackOpenOptions,
  ConntrackStats,
  DeleteFailure,
  DeleteReport,
  EventOptions,
  MatchingDeleteReport,
} from './types.js';
import * as validate from './validate.js';

/** What each failed delete means. */
const HINT: Record<string, string> = {
  ENOENT: 'no such entry (gone already, or replaced by a newer one with another id)',
  EOPNOTSUPP: 'this kernel does not support that here',
};

function failure(f: NativeDeleteFailure, operation: string, subject: unknown): NetlinkError {
  return new NetlinkError({
    errno: f.errno,
    code: f.code,
    operation,
    subject,
    kernelMessage: f.syscall ? undefined : f.message,
    syscall: f.syscall,
    text: f.text,
    hint: f.syscall ? f.message : HINT[f.code],
  });
}

/** Splits native delete failures into the entries already gone and the rest. */
function report(deleted: number, failures: NativeDeleteFailure[], subjectOf: (index: number) => unknown, operation: string): DeleteReport {
  const missing: number[] = [];
  const failed: DeleteFailure[] = [];
  for (const f of failures) {
    if (f.code === 'ENOENT' && !f.syscall) missing.push(f.index);
    else failed.push({ index: f.index, error: failure(f, operation, subjectOf(f.index)) });
  }
  return { deleted, missing, failures: failed };
}

export class Conntrack extends NetlinkClient<NativeConntrackHandle> {
  private constructor(
    handle: NativeConntrackHandle,
    private readonly options: ConntrackOpenOptions,
  ) {
    super(handle, 'conntrack');
  }

  /** Opens a handle (in `netns` if given). Fails when the kernel has no conntrack netlink (nf_conntrack_netlink). */
  static async open(options: ConntrackOpenOptions = {}): Promise<Conntrack> {
    const handle = await openHandle((o) => new ConntrackHandle(o), options, 'Conntrack.open');
    return new Conntrack(handle, { ...options });
  }

  /** The entries `filter` takes (every entry without one), as `conntrack -L` lists them. */
  async list(filter?: ConntrackFilter): Promise<ConntrackEntry[]> {
    const f = validate.filter(filter);
    return this.exclusive('list', async () => {
      const r = await this.native('list', filter, () => this.handle.list(f));
      return new EntryRecords(r).entries();
    });
  }

  /** One entry by its key, or undefined when there is none. */
  async get(key: ConntrackKey): Promise<ConntrackEntry | undefined> {
    const k = validate.key(key);
    return this.exclusive('get', async () => {
      const r = await this.native('get', key, () => this.handle.get(k));
      if (r.code === 'ENOENT') return undefined;
      if (r.errno) throw new NetlinkError({ errno: r.errno, code: r.code, operation: 'get', subject: key, kernelMessage: r.message });
      const records = new EntryRecords(r);
      return records.count ? records.entry(0) : undefined;
    });
  }

  /**
   * Deletes one entry. Resolves true when it was deleted, false when there
   * was no such entry (or, with `id`, it had been replaced).
   */
  async delete(key: ConntrackKey): Promise<boolean> {
    const r = await this.deleteKeys([validate.key(key)], [key]);
    if (r.failures.length) throw r.failures[0].error;
    return r.deleted === 1;
  }

  /**
   * Deletes many entries, thousands per sendmsg. Every key gets its own
   * result: a refusal does not stop the others, and when the conversation
   * breaks, the keys it left unanswered are failures that say so.
   */
  async deleteMany(keys: readonly ConntrackKey[]): Promise<DeleteReport> {
    if (!Array.isArray(keys)) throw check.wrongType('keys', 'an array of keys', keys);
    return this.deleteKeys(keys.map((k, i) => validate.key(k, `keys[${i}]`)), keys);
  }

  private deleteKeys(ks: validate.NativeKey[], keys: readonly ConntrackKey[]): Promise<DeleteReport> {
    return this.exclusive('delete', async () => {
      const r = await this.native('delete', undefined, () => this.handle.delete(ks));
      return report(r.deleted, r.failures, (i) => keys[i], 'delete');
    });
  }

  /**
   * Deletes every entry `filter` takes: one dump, then a delete of each
   * match by its tuple, zone and id (so an entry created meanwhile with
   * the same tuple is left alone), in one call. An empty filter is
   * refused: use flush() to empty the table.
   */
  async deleteMatching(filter: ConntrackFilter): Promise<MatchingDeleteReport> {
    const f = validate.filter(filter);
    if (Object.keys(f).length === 1 && f.family === 0)
      throw check.wrongValue('filter', 'a filter that names something (use flush() to empty the table)', filter);
    return this.exclusive('deleteMatching', async () => {
      const r = await this.native('deleteMatching', filter, () => this.handle.deleteMatching(f));
      const matched = new EntryRecords(r).entries();
      return { matched, ...report(r.deleted, r.failures, (i) => matched[i], 'deleteMatching') };
    });
  }

  /** Empties the table, or only the entries of one family. */
  async flush(family?: ConntrackFamily): Promise<void> {
    const f = validate.flushFamily(family);
    await this.exclusive('flush', () => this.native('flush', family ?? 'all families', () => this.handle.flush(f)));
  }

  /** The table's per-CPU counters (`conntrack -S`) and its size (`conntrack -C`). */
  async stats(): Promise<ConntrackStats> {
    return this.exclusive('stats', async () => (await this.native('stats', undefined, () => this.handle.stats())) as unknown as ConntrackStats);
  }

  /** How many entries the table holds (`conntrack -C`). */
  async count(): Promise<number> {
    const s = await this.stats();
    if (s.entries === undefined) throw new NetlinkError({ errno: 95, code: 'EOPNOTSUPP', operation: 'count', detail: 'this kernel does not report the table size (IPCTNL_MSG_CT_GET_STATS)' });
    return s.entries;
  }

  /**
   * A stream of events (new, update and destroy entries), in this
   * handle's network namespace, read on a thread of its own. Iterate it
   * with `for await`; close() it (or break out of the loop) to stop.
   */
  async events(options: EventOptions = {}): Promise<ConntrackEventStream> {
    return openEventStream(this.options, options);
  }
}
