/**
 * Ipset: a typed client for the kernel's ipset over nfnetlink.
 *
 * One handle owns one netlink socket (opened lazily, replaced after a broken
 * conversation, protocol negotiated on each). Calls are queued so any number
 * of concurrent callers can share a handle. Element operations need the
 * set's type to parse entries; it is looked up once per set name (a header
 * dump) and cached until this handle creates, destroys, renames or swaps
 * that set, or a call on it fails. Entries that do not parse against the
 * cached set are checked again against a fresh look-up, since someone else
 * may have re-created the set.
 */
import { randomBytes } from 'node:crypto';

import { native, type NativeIpsetHandle, type NativeIpsetResult } from '../netlink/binding.js';
import { NetlinkClient, openHandle } from '../netlink/client.js';
import * as arg from '../util/check.js';
import { checkEntry, entryTexts } from './entries.js';
import { IpsetBulkError, IpsetError, IpsetUnsupportedError, ipsetError, type BulkHalt } from './errors.js';
import { describeInfo, infoFromHeader, infoFromSpec, specFromHeader, type SetInfo } from './set-info.js';
import type {
  AddOptions,
  BulkOptions,
  CreateOptions,
  CreateSpec,
  DelOptions,
  Entry,
  IpsetOpenOptions,
  ProtocolInfo,
  SetHeader,
  SetListing,
  SetType,
  TestOptions,
} from './types.js';
import * as check from './validate.js';

/** The ipset handle's methods beyond what every handle has (native/ipset/handle.cc). */
interface IpsetNative extends NativeIpsetHandle {
  /** Parses entries as elements() would, throwing the same errors, and sends nothing. */
  check(op: object): void;
}

/** What the addon's elements() resolves to; bulk calls add what became of every entry (native/ipset/jobs.cc). */
interface ElementsResult extends NativeIpsetResult {
  applied: number;
  /** The first refused entry, -1 if none. */
  index: number;
  failures?: Array<NativeIpsetResult & { index: number }>;
  skipped?: number[];
  unconfirmed?: number[];
  /** Why sending stopped early, when it did. */
  halt?: NativeIpsetResult;
}

/** What create resolves to: the revision chosen and, when it lacks an option given, which (native/ipset/jobs.cc). */
interface CreateResult extends NativeIpsetResult {
  revision?: number;
  option?: string;
  needs?: number;
}

/** A typed client for the kernel's ipset (see the module comment). */
export class Ipset extends NetlinkClient<IpsetNative> {
  private readonly infos = new Map<string, SetInfo>();

  private constructor(handle: IpsetNative) {
    super(handle, 'ipset');
  }

  /** Opens a handle (in `netns` if given) and negotiates the protocol. */
  static async open(options: IpsetOpenOptions = {}): Promise<Ipset> {
    return new Ipset(await openHandle((o) => new native.IpsetHandle(o) as IpsetNative, options, 'Ipset.open'));
  }

  /** The protocol version in use and the kernel's minimum. */
  protocol(): ProtocolInfo {
    const p = this.handle.protocol();
    return { version: p.version, min: p.min };
  }

  /**
   * Creates a set at the newest revision of its type that both the kernel
   * and this library have. Options may be a SetHeader read from another
   * set. A type the kernel lacks, or an option its revision lacks, rejects
   * with an IpsetUnsupportedError and creates nothing.
   */
  async create(name: string, type: SetType, options?: CreateOptions): Promise<void> {
    check.setName(name);
    check.setType(type);
    const o = check.createOptions(type, options);
    await this.exclusive('create', async () => {
      const r = (await this.native('create', name, () => this.handle.command({ ...o, cmd: 'create', name, type }))) as CreateResult;
      this.infos.delete(name);
      if (r.option !== undefined || r.code === 'IPSET_ERR_FIND_TYPE')
        throw new IpsetUnsupportedError({ operation: 'create', set: name, setType: type, option: r.option, revision: r.revision, needs: r.needs });
      if (r.errno) throw ipsetError(r, 'create', { set: name });
    });
  }

  /** Destroys one set, or every set not in use when no name is given. */
  async destroy(name?: string): Promise<void> {
    if (name !== undefined) check.setName(name);
    try {
      await this.run('destroy', { set: name, subject: name ?? 'all sets' }, { cmd: 'destroy', name });
    } finally {
      if (name === undefined) this.infos.clear();
      else this.infos.delete(name);
    }
  }

  /** Removes every element of one set, or of all sets. */
  async flush(name?: string): Promise<void> {
    if (name !== undefined) check.setName(name);
    await this.run('flush', { set: name, subject: name ?? 'all sets' }, { cmd: 'flush', name });
  }

  /** Renames a set (not while a rule or list:set refers to it). */
  async rename(from: string, to: string): Promise<void> {
    await this.pair('rename', from, to, 'from', 'to', `${from} -> ${to}`);
  }

  /** Exchanges the contents (and names) of two sets of the same type and family. */
  async swap(a: string, b: string): Promise<void> {
    await this.pair('swap', a, b, 'a', 'b', `${a} <-> ${b}`);
  }

  private async pair(cmd: 'rename' | 'swap', a: string, b: string, fa: string, fb: string, subject: string): Promise<void> {
    check.setName(a, fa);
    check.setName(b, fb);
    try {
      await this.run(cmd, { set: a, subject }, { cmd, name: a, to: b });
    } finally {
      this.infos.delete(a);
      this.infos.delete(b);
    }
  }

  /** Adds one element; with `exist`, re-adding it refreshes its options instead of failing. */
  async add(name: string, entry: Entry, options: AddOptions = {}): Promise<void> {
    const exist = check.options(options).exist;
    await this.single('add', name, entry, check.elementOptionsText(options, ['exist']), exist);
  }

  /** Deletes one element; with `exist`, deleting one that is not there succeeds. */
  async del(name: string, entry: Entry, options: DelOptions = {}): Promise<void> {
    const o = check.only(options, ['exist', 'before', 'after']);
    const { exist, ...place } = o;
    await this.single('del', name, entry, check.elementOptionsText(place), exist);
  }

  /** Whether the element is in the set (as a nomatch exception, or at a list:set position, if asked). */
  async test(name: string, entry: Entry, options: TestOptions = {}): Promise<boolean> {
    check.only(options, ['nomatch', 'before', 'after']);
    return this.single('test', name, entry, check.elementOptionsText(options), false);
  }

  /**
   * Adds many entries in as few messages and sendmsg calls as possible.
   * Resolves to how many were applied (all of them). A refused entry does
   * not stop the others: each is attempted once, and the call then rejects
   * with an IpsetBulkError listing every refused entry (`failures`), how
   * many went in (`applied`) and, if something meant nothing more could go
   * in (the set is full or gone), the entries never attempted (`skipped`).
   */
  async addMany(name: string, entries: readonly Entry[], options: BulkOptions = {}): Promise<number> {
    return this.bulk('add', name, entries, options);
  }

  /** Deletes many entries, as addMany() adds them. */
  async delMany(name: string, entries: readonly Entry[], options: BulkOptions = {}): Promise<number> {
    return this.bulk('del', name, entries, options);
  }

  /** A set's header and its entries as `ipset save` prints them. */
  async list(name: string): Promise<SetListing> {
    check.setName(name);
    return this.exclusive('list', () => this.listed(name, 'list', 'full'));
  }

  /** The header of a set: its type, every create option it has, references, memory. */
  async header(name: string): Promise<SetHeader> {
    check.setName(name);
    const { entries: _entries, ...header } = await this.exclusive('header', () => this.listed(name, 'header', 'header'));
    return header;
  }

  /** The names of all sets. */
  async listNames(): Promise<string[]> {
    const r = await this.call('list', { subject: 'names' }, () => this.handle.list({ mode: 'names' }));
    return r.sets.map((s) => s.name as string);
  }

  /**
   * Replaces a set's contents atomically: fills a temporary set, swaps it
   * in and destroys the old contents. Readers see either the old or the new
   * contents, never a mix. Without `spec` the set must exist (its settings,
   * every create option, are copied); with it (a SetHeader will do), the
   * set is created if missing. The kernel refuses to swap a set while
   * someone is dumping it (EBUSY), so the swap is retried for a while when
   * that happens.
   */
  async replace(name: string, entries: readonly Entry[], spec?: CreateSpec): Promise<number> {
    check.setName(name);
    if (!Array.isArray(entries)) throw arg.wrongType('entries', 'an array', entries);
    entries.forEach((e, i) => checkEntry(e, `entries[${i}]`));
    const given = spec === undefined ? undefined : { ...check.createOptions(check.setType(arg.object(spec, 'spec').type, 'spec.type'), spec, 'spec'), type: spec.type };
    // The entries are checked before anything is sent: against the spec, or
    // what this handle already knows of the set (else after reading its header).
    const known = given ? infoFromSpec(given) : this.infos.get(name);
    if (known) this.checkEntries(name, known, entries);
    const current = await this.header(name).catch((err: unknown) => {
      if (err instanceof IpsetError && err.code === 'ENOENT' && given) return undefined;
      throw err;
    });
    const { type, ...options } = given ?? specFromHeader(current!);
    if (!known) this.checkEntries(name, infoFromSpec({ type, ...options }), entries);
    const temp = `${name.slice(0, 20)}~${randomBytes(5).toString('hex')}`; // within the 31-byte limit
    await this.create(temp, type, { ...options, exist: false });
    try {
      const applied = await this.addMany(temp, entries, { exist: true }).catch((err: unknown) => {
        // Nothing is swapped in when any entry failed.
        throw err instanceof IpsetBulkError ? err.asReplace({ set: name, temporary: temp }) : err;
      });
      if (!current) await this.create(name, type, { ...options, exist: true });
      await this.swapWhenNotBusy(temp, name);
      return applied;
    } finally {
      await this.destroy(temp).catch(() => undefined);
    }
  }

  /** Parses the entries as the set would take them; throws TypeError/RangeError naming the bad one, sends nothing. */
  private checkEntries(name: string, info: SetInfo, entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    this.handle.check({ cmd: 'add', name, type: info.type, family: info.family, entries: entryTexts(info.type, entries, undefined), exist: true, support: info.support });
  }

  /** Swaps, retrying while a concurrent list/save holds either set (EBUSY). */
  private async swapWhenNotBusy(a: string, b: string): Promise<void> {
    const deadline = Date.now() + 5000;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        return await this.swap(a, b);
      } catch (err) {
        if (!(err instanceof IpsetError) || err.code !== 'EBUSY' || Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  // --- internals ---

  private async single(cmd: 'add' | 'del' | 'test', name: string, entry: Entry, suffix: string, exist: unknown): Promise<boolean> {
    check.setName(name);
    checkEntry(entry, 'entry');
    const ex = exist === undefined ? false : arg.boolean(exist, 'options.exist');
    return this.exclusive(cmd, async () => {
      const r = await this.withInfo(name, cmd, (info, context) =>
        this.elements(cmd, name, {
          cmd, name, type: info.type, family: info.family, entries: entryTexts(info.type, [entry], context, 'entry') + suffix,
          single: true, exist: ex, support: info.support, context,
        }),
      );
      if (cmd === 'test' && r.code === 'IPSET_ERR_EXIST') return false;
      if (r.errno) {
        this.infos.delete(name);
        throw ipsetError(r, cmd, { set: name, entry });
      }
      return true;
    });
  }

  private async bulk(cmd: 'add' | 'del', name: string, entries: readonly Entry[], options: BulkOptions): Promise<number> {
    const operation = cmd === 'add' ? 'addMany' : 'delMany';
    check.setName(name);
    if (!Array.isArray(entries)) throw arg.wrongType('entries', 'an array', entries);
    const o = check.only(options, ['exist']);
    const exist = o.exist === undefined ? false : arg.boolean(o.exist, 'options.exist');
    for (let i = 0; i < entries.length; i++) checkEntry(entries[i], `entries[${i}]`);
    if (entries.length === 0) return 0;
    return this.exclusive(operation, async () => {
      const r = await this.withInfo(name, operation, (info, context) =>
        this.elements(operation, name, {
          cmd, name, type: info.type, family: info.family, entries: entryTexts(info.type, entries, context), exist, support: info.support, context,
        }),
      ).catch((err: unknown) => {
        // The look-up failed: nothing was sent, every entry is skipped.
        if (!(err instanceof IpsetError)) throw err;
        const halt = halted(err);
        throw new IpsetBulkError(halt, operation, name, {
          index: -1, entry: undefined, applied: 0, failures: [], skipped: entries.map((_, i) => i), unconfirmed: [], halt, total: entries.length,
        });
      });
      if (r.errno) {
        this.infos.delete(name);
        throw new IpsetBulkError(r, operation, name, {
          index: r.index,
          entry: r.index >= 0 ? entries[r.index] : undefined,
          applied: r.applied,
          failures: (r.failures ?? []).map((f) => ({ ...halted(f), index: f.index, entry: entries[f.index] })),
          skipped: r.skipped ?? [],
          unconfirmed: r.unconfirmed ?? [],
          ...(r.halt ? { halt: halted(r.halt) } : {}),
          total: entries.length,
        });
      }
      return r.applied;
    });
  }

  /**
   * Runs `send`, which parses the entries against what is known of the set
   * before anything is sent. When this handle remembered the set, `context`
   * says so (a refused entry's error ends with it): the set may have been
   * re-created (or swapped, renamed) by someone else with other settings,
   * so a refused entry makes the handle forget it, and the next call looks
   * it up afresh. Nothing is sent either way.
   */
  private async withInfo<R>(name: string, operation: string, send: (info: SetInfo, context: string | undefined) => Promise<R>): Promise<R> {
    const cached = this.infos.get(name);
    if (!cached) return send(await this.lookup(name, operation), undefined);
    try {
      return await send(cached, `as set ${name} was when this handle last looked: ${describeInfo(cached)}; if it has been re-created since, call again: it is looked up afresh`);
    } catch (err) {
      if (err instanceof TypeError || err instanceof RangeError) this.infos.delete(name);
      throw err;
    }
  }

  /** Runs the native element call; a bad entry throws synchronously from it. */
  private elements(operation: string, name: string, op: object): Promise<ElementsResult> {
    return this.native(operation, name, () => this.handle.elements(op) as Promise<ElementsResult>);
  }

  /** The set's type, family and options, from a header dump (then cached). */
  private async lookup(name: string, operation: string): Promise<SetInfo> {
    const info = infoFromHeader(await this.listed(name, operation, 'header'));
    this.infos.set(name, info);
    return info;
  }

  /** One set's LIST dump (unqueued); a type this library does not speak is an IpsetUnsupportedError. */
  private async listed(name: string, operation: string, mode: 'full' | 'header'): Promise<SetListing> {
    const r = await this.native(operation, name, () => this.handle.list({ name, mode }));
    if (r.errno) throw ipsetError(r, operation, { set: name });
    const set = r.sets.find((s) => s.name === name);
    if (!set) throw new IpsetError({ errno: 2, code: 'ENOENT', meaning: 'the set was not returned', operation, set: name });
    if (!(native.ipsetConstants.setTypes as string[]).includes(set.type as string))
      throw new IpsetUnsupportedError({ operation, set: name, setType: String(set.type) });
    // Header mode lists no entries: the caller drops them.
    return set as unknown as SetListing;
  }

  /** A queued command whose failure is a kernel error. */
  private run(operation: string, about: { set: string | undefined; subject: unknown }, op: object): Promise<void> {
    return this.call(operation, about, () => this.handle.command(op)).then(() => undefined);
  }

  /** Queues a native call and turns a kernel refusal into an IpsetError. */
  private call<R extends NativeIpsetResult>(operation: string, about: { set?: string | undefined; subject: unknown }, fn: () => Promise<R>): Promise<R> {
    return this.exclusive(operation, async () => {
      const r = await this.native(operation, about.subject, fn);
      if (r.errno) throw ipsetError(r, operation, about);
      return r;
    });
  }
}

/** A refusal's parts, as a bulk error lists them. */
function halted(r: { errno: number; code: string; message?: string; meaning?: string; kernelMessage?: string | undefined }): BulkHalt {
  return { errno: r.errno, code: r.code, message: r.meaning ?? r.message ?? '', ...(r.kernelMessage ? { kernelMessage: r.kernelMessage } : {}) };
}
