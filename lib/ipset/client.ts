/**
 * Ipset: a typed client for the kernel's ipset over nfnetlink.
 *
 * One handle owns one netlink socket (opened lazily, replaced after a broken
 * conversation, protocol negotiated on each). Calls are queued so any number
 * of concurrent callers can share a handle. Element operations need the
 * set's type to parse entries; it is looked up once per set name (a header
 * dump) and cached until this handle creates, destroys, renames or swaps
 * that set, or a call on it fails.
 */
import { randomBytes } from 'node:crypto';

import { native, type NativeIpsetHandle, type NativeIpsetResult } from '../netlink/binding.js';
import { NetlinkClient, openHandle } from '../netlink/client.js';
import { NetlinkError } from '../netlink/errors.js';
import { entryText } from './entries.js';
import { IpsetBulkError, ipsetError } from './errors.js';
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
} from './types.js';
import * as check from './validate.js';

/** What the addon's elements() resolves to; bulk calls add what became of every entry (native/ipset/jobs.cc). */
interface ElementsResult extends NativeIpsetResult {
  applied: number;
  /** The first refused entry, -1 if none. */
  index: number;
  messages: number;
  failures?: Array<NativeIpsetResult & { index: number }>;
  skipped?: number[];
  unconfirmed?: number[];
  /** Why sending stopped early, when it did. */
  halt?: NativeIpsetResult;
}

/** What element operations need to know about a set. */
interface SetInfo {
  type: SetType;
  family: string;
  support: { timeout: boolean; counters: boolean; comment: boolean; skbinfo: boolean };
}

export class Ipset extends NetlinkClient<NativeIpsetHandle> {
  private readonly infos = new Map<string, SetInfo>();

  private constructor(handle: NativeIpsetHandle) {
    super(handle, 'ipset');
  }

  /** Opens a handle (in `netns` if given) and negotiates the protocol. */
  static async open(options: IpsetOpenOptions = {}): Promise<Ipset> {
    return new Ipset(await openHandle((o) => new native.IpsetHandle(o), options, 'Ipset.open'));
  }

  /** The protocol version in use and the kernel's minimum. */
  protocol(): ProtocolInfo {
    const p = this.handle.protocol();
    return { version: p.version, min: p.min };
  }

  async create(name: string, type: SetType, options?: CreateOptions): Promise<void> {
    check.setName(name);
    check.setType(type);
    const o = check.createOptions(options);
    await this.run('create', name, { cmd: 'create', name, type, ...o });
    this.infos.delete(name);
  }

  /** Destroys one set, or every set not in use when no name is given. */
  async destroy(name?: string): Promise<void> {
    if (name !== undefined) check.setName(name);
    try {
      await this.run('destroy', name ?? 'all sets', { cmd: 'destroy', name });
    } finally {
      if (name === undefined) this.infos.clear();
      else this.infos.delete(name);
    }
  }

  /** Removes every element of one set, or of all sets. */
  async flush(name?: string): Promise<void> {
    if (name !== undefined) check.setName(name);
    await this.run('flush', name ?? 'all sets', { cmd: 'flush', name });
  }

  async rename(from: string, to: string): Promise<void> {
    check.setName(from, 'from');
    check.setName(to, 'to');
    try {
      await this.run('rename', `${from} -> ${to}`, { cmd: 'rename', name: from, to });
    } finally {
      this.infos.delete(from);
      this.infos.delete(to);
    }
  }

  /** Exchanges the contents (and names) of two sets of the same type and family. */
  async swap(a: string, b: string): Promise<void> {
    check.setName(a, 'a');
    check.setName(b, 'b');
    try {
      await this.run('swap', `${a} <-> ${b}`, { cmd: 'swap', name: a, to: b });
    } finally {
      this.infos.delete(a);
      this.infos.delete(b);
    }
  }

  async add(name: string, entry: Entry, options: AddOptions = {}): Promise<void> {
    check.setName(name);
    const suffix = check.elementOptionsText(options, ['exist']);
    const exist = options.exist === undefined ? false : check.boolean(options.exist, 'exist');
    await this.single('add', name, entry, suffix, exist);
  }

  async del(name: string, entry: Entry, options: DelOptions = {}): Promise<void> {
    check.setName(name);
    check.onlyExist(options, 'del');
    const exist = options.exist === undefined ? false : check.boolean(options.exist, 'exist');
    await this.single('del', name, entry, '', exist);
  }

  /** Whether the element is in the set. */
  async test(name: string, entry: Entry): Promise<boolean> {
    check.setName(name);
    return this.single('test', name, entry, '', false);
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

  async delMany(name: string, entries: readonly Entry[], options: BulkOptions = {}): Promise<number> {
    return this.bulk('del', name, entries, options);
  }

  /** A set's header and its entries as `ipset save` prints them. */
  async list(name: string): Promise<SetListing> {
    check.setName(name);
    const r = await this.call('list', name, () => this.handle.list({ name, mode: 'full' }));
    const set = r.sets.find((s) => s.name === name);
    if (!set) throw new NetlinkError({ errno: 2, code: 'ENOENT', operation: 'list', subject: name, message: `list ${name}: the set was not returned` });
    return set as unknown as SetListing;
  }

  /** The header of a set (type, sizes, options, references, memory). */
  async header(name: string): Promise<SetHeader> {
    check.setName(name);
    const r = await this.call('header', name, () => this.handle.list({ name, mode: 'header' }));
    const set = r.sets.find((s) => s.name === name);
    if (!set) throw new NetlinkError({ errno: 2, code: 'ENOENT', operation: 'header', subject: name, message: `header ${name}: the set was not returned` });
    const { entries: _entries, ...header } = set as unknown as SetListing;
    return header;
  }

  /** The names of all sets. */
  async listNames(): Promise<string[]> {
    const r = await this.call('list', 'names', () => this.handle.list({ mode: 'names' }));
    return r.sets.map((s) => s.name as string);
  }

  /**
   * Replaces a set's contents atomically: fills a temporary set, swaps it
   * in and destroys the old contents. Readers see either the old or the new
   * contents, never a mix. Without `spec` the set must exist (its settings
   * are copied); with it, the set is created if missing. The kernel refuses
   * to swap a set while someone is dumping it (EBUSY), so the swap is
   * retried for a while when that happens.
   */
  async replace(name: string, entries: readonly Entry[], spec?: CreateSpec): Promise<number> {
    check.setName(name);
    if (!Array.isArray(entries)) throw new TypeError('entries must be an array');
    if (spec !== undefined) {
      if (typeof spec !== 'object' || spec === null) throw new TypeError('spec must be an object');
      check.setType(spec.type, 'spec.type');
      check.createOptions(spec);
    }
    // The entries are checked before anything is sent: against the spec, or
    // what this handle already knows of the set (else after reading its header).
    const known = spec ? infoFromSpec(spec) : this.infos.get(name);
    if (known) this.checkEntries(name, known, entries);
    const current = await this.header(name).catch((err: unknown) => {
      if (err instanceof NetlinkError && err.code === 'ENOENT' && spec) return undefined;
      throw err;
    });
    const { type, ...options } = spec ?? specFromHeader(current!);
    if (!known) this.checkEntries(name, infoFromSpec({ type, ...options }), entries);
    const temp = temporaryName(name);
    await this.create(temp, type, { ...options, exist: false });
    try {
      const applied = await this.addMany(temp, entries, { exist: true }).catch((err: unknown) => {
        // Nothing is swapped in when any entry failed: say so, since the
        // counts describe the temporary set.
        if (err instanceof IpsetBulkError)
          err.message += `; replace ${name} swapped nothing in: ${name} is unchanged and the temporary set ${temp} is destroyed`;
        throw err;
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
    const texts = entries.map((e, i) => entryText(info.type, e, `entry ${i}`));
    if (texts.length === 0) return;
    (this.handle as unknown as { check(op: object): void }).check({
      cmd: 'add', name, type: info.type, family: info.family, entries: texts.join('\n'), exist: true, support: info.support,
    });
  }

  /** Swaps, retrying while a concurrent list/save holds either set (EBUSY). */
  private async swapWhenNotBusy(a: string, b: string): Promise<void> {
    const deadline = Date.now() + 5000;
    for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
      try {
        return await this.swap(a, b);
      } catch (err) {
        if (!(err instanceof NetlinkError) || err.code !== 'EBUSY' || Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  // --- internals ---

  private async single(cmd: 'add' | 'del' | 'test', name: string, entry: Entry, suffix: string, exist: boolean): Promise<boolean> {
    return this.exclusive(cmd, async () => {
      const cached = this.infos.has(name);
      const info = await this.info(name, cmd);
      const r = await this.parsed(name, info, cached, () => {
        const text = entryText(info.type, entry) + suffix;
        return this.elements({ cmd, name, type: info.type, family: info.family, entries: text, single: true, exist, support: info.support }, cmd, name);
      });
      if (cmd === 'test' && r.code === 'IPSET_ERR_EXIST') return false;
      if (r.errno) {
        this.infos.delete(name);
        throw ipsetError(r, cmd, { set: name, entry });
      }
      return true;
    });
  }

  private async bulk(cmd: 'add' | 'del', name: string, entries: readonly Entry[], options: BulkOptions): Promise<number> {
    check.setName(name);
    if (!Array.isArray(entries)) throw new TypeError('entries must be an array');
    if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
    check.onlyExist(options, cmd === 'add' ? 'addMany' : 'delMany');
    const exist = options.exist === undefined ? false : check.boolean(options.exist, 'exist');
    const operation = cmd === 'add' ? 'addMany' : 'delMany';
    if (entries.length === 0) return 0;
    return this.exclusive(operation, async () => {
      const cached = this.infos.has(name);
      const info = await this.info(name, operation).catch((err: unknown) => {
        // Nothing was sent: every entry is skipped, in the bulk error's terms.
        if (!(err instanceof NetlinkError)) throw err;
        throw new IpsetBulkError({ errno: err.errno, code: err.code, message: kernelMeaning(err) }, operation, name, {
          index: -1,
          entry: undefined,
          applied: 0,
          skipped: entries.map((_, i) => i),
          halt: { errno: err.errno, code: err.code, message: kernelMeaning(err) },
          total: entries.length,
        });
      });
      const r = await this.parsed(name, info, cached, () => {
        const texts = new Array<string>(entries.length);
        for (let i = 0; i < entries.length; i++) texts[i] = entryText(info.type, entries[i], `entry ${i}`);
        return this.elements(
          { cmd, name, type: info.type, family: info.family, entries: texts.join('\n'), exist, support: info.support },
          operation,
          name,
        );
      });
      if (r.errno) {
        this.infos.delete(name);
        throw new IpsetBulkError(r, operation, name, {
          index: r.index,
          entry: r.index >= 0 ? entries[r.index] : undefined,
          applied: r.applied,
          failures: (r.failures ?? []).map((f) => ({
            index: f.index,
            entry: entries[f.index],
            errno: f.errno,
            code: f.code,
            message: f.message,
            ...(f.kernelMessage ? { kernelMessage: f.kernelMessage } : {}),
          })),
          skipped: r.skipped ?? [],
          unconfirmed: r.unconfirmed ?? [],
          halt: r.halt && { errno: r.halt.errno, code: r.halt.code, message: r.halt.message, ...(r.halt.kernelMessage ? { kernelMessage: r.halt.kernelMessage } : {}) },
          total: entries.length,
        });
      }
      return r.applied;
    });
  }

  /**
   * Runs `send`, which parses the entries against `info` before anything is
   * sent. When they do not parse against what this handle remembered of the
   * set, the set may have been re-created (or swapped, renamed) by someone
   * else with other settings: forget it, so the next call looks it up again,
   * and say so. Nothing is sent either way.
   */
  private async parsed<R>(name: string, info: SetInfo, cached: boolean, send: () => Promise<R>): Promise<R> {
    try {
      return await send();
    } catch (err) {
      // Only what depends on the set's type, family and options: the
      // parser's errors (they carry `field`) and missing parts of a
      // structured entry.
      const dependsOnSet = 'field' in Object(err) || /is required$/.test(String((err as Error).message));
      if (cached && (err instanceof TypeError || err instanceof RangeError) && dependsOnSet) {
        this.infos.delete(name);
        const with_ = (['timeout', 'counters', 'comment', 'skbinfo'] as const).filter((k) => info.support[k]);
        err.message +=
          ` (as set ${name} was when this handle last looked: ${info.type} ${info.family}${with_.length ? ` with ${with_.join(', ')}` : ''};` +
          ` if it has been re-created since, call again: it is looked up afresh)`;
      }
      throw err;
    }
  }

  /** Runs the native element call; a bad entry throws synchronously from it. */
  private elements(op: object, operation: string, name: string): Promise<ElementsResult> {
    return this.native(operation, name, () => this.handle.elements(op) as Promise<ElementsResult>);
  }

  /** The set's type, family and options, from the cache or a header dump. */
  private async info(name: string, operation: string): Promise<SetInfo> {
    const cached = this.infos.get(name);
    if (cached) return cached;
    const r = await this.native(operation, name, () => this.handle.list({ name, mode: 'header' }));
    if (r.errno) throw ipsetError(r, operation, name);
    const h = r.sets.find((s) => s.name === name) as unknown as SetHeader | undefined;
    if (!h) throw new NetlinkError({ errno: 2, code: 'ENOENT', operation, subject: name, message: `${operation} ${name} failed: the set does not exist [ENOENT]` });
    if (!native.ipsetConstants.setTypes.includes(h.type))
      throw new NetlinkError({ errno: 95, code: 'EOPNOTSUPP', operation, subject: name, message: `${operation} ${name}: sets of type ${h.type} are not supported by this library` });
    const info: SetInfo = {
      type: h.type as SetType,
      family: h.family ?? 'inet',
      support: { timeout: h.timeout !== undefined, counters: h.counters, comment: h.comment, skbinfo: h.skbinfo },
    };
    this.infos.set(name, info);
    return info;
  }

  /** A queued command whose failure is a kernel error. */
  private run(operation: string, subject: string, op: object): Promise<void> {
    return this.call(operation, subject, () => this.handle.command(op)).then(() => undefined);
  }

  /** Queues a native call and turns a kernel refusal into a NetlinkError. */
  private call<R extends NativeIpsetResult>(operation: string, subject: string, fn: () => Promise<R>): Promise<R> {
    return this.exclusive(operation, async () => {
      const r = await this.native(operation, subject, fn);
      if (r.errno) throw ipsetError(r, operation, subject);
      return r;
    });
  }
}

/** What element operations need to know about a set that `spec` would create. */
function infoFromSpec(spec: CreateSpec): SetInfo {
  return {
    type: spec.type,
    family: spec.family ?? 'inet',
    support: { timeout: spec.timeout !== undefined, counters: spec.counters === true, comment: spec.comment === true, skbinfo: spec.skbinfo === true },
  };
}

/** What a NetlinkError from info() says, without its "operation set failed:" prefix. */
function kernelMeaning(err: NetlinkError): string {
  return err.message.replace(/^.*? failed: /, '').replace(/ \[[A-Z_0-9]+\]$/, '');
}

/** A set name for replace()'s temporary set, within the 31-byte limit. */
function temporaryName(name: string): string {
  return `${name.slice(0, 20)}~${randomBytes(5).toString('hex')}`;
}

/** Create options that reproduce an existing set's settings. */
function specFromHeader(h: SetHeader): CreateSpec {
  const spec: CreateSpec = { type: h.type as SetType };
  if (h.family && h.type.startsWith('hash:')) spec.family = h.family;
  if (h.hashSize !== undefined) spec.hashSize = h.hashSize;
  if (h.maxElem !== undefined) spec.maxElem = h.maxElem;
  if (h.timeout !== undefined) spec.timeout = h.timeout;
  if (h.netmask !== undefined && h.netmask !== (h.family === 'inet6' ? 128 : 32)) spec.netmask = h.netmask;
  if (h.size !== undefined) spec.size = h.size;
  if (h.range !== undefined) spec.range = h.range;
  if (h.counters) spec.counters = true;
  if (h.comment) spec.comment = true;
  if (h.skbinfo) spec.skbinfo = true;
  if (h.forceadd) spec.forceadd = true;
  if (h.bucketSize !== undefined) spec.bucketSize = h.bucketSize;
  if (h.initval !== undefined) spec.initval = h.initval;
  return spec;
}
