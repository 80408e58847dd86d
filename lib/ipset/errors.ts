/**
 * ipset's answers as errors. Each keeps its parts as properties (errno,
 * code, the set, the entry, what the code means for the command, the
 * kernel's own text); the message is NetlinkError's, built once from them
 * (the meaning is its hint; a bulk call's account of its entries, its detail):
 *
 * - IpsetError: the kernel refused a request (IPSET_ERR_EXIST, ENOENT...);
 * - IpsetBulkError: a bulk add/del did not fully go in, with what became
 *   of every entry;
 * - IpsetUnsupportedError: the running kernel lacks the set type, or the
 *   revision of it an option needs; nothing was created.
 *
 * All three are NetlinkErrors.
 */
import type { NativeIpsetResult } from '../netlink/binding.js';
import { NetlinkError } from '../netlink/errors.js';
import type { Entry } from './types.js';

/** The parts of a refusal, as they arise. */
export interface IpsetErrorInit {
  /** The errno, or the ipset error number (4096 and up). */
  errno: number;
  /** IPSET_ERR_EXIST, ENOENT, ... */
  code: string;
  /** What the code means for this command and set (the native layer's reading of it). */
  meaning: string;
  /** The kernel's extended-ack text, if it sent one. */
  kernelMessage?: string | undefined;
  /** The call that failed: create, add, addMany, list... */
  operation: string;
  /** The set the operation was on, if one. */
  set?: string | undefined;
  /** The element, for add/del/test. */
  entry?: Entry | undefined;
  /** What the operation was about, when more than a set ('a -> b' for rename). */
  subject?: unknown;
}

/** A kernel's refusal of an ipset request. */
export class IpsetError extends NetlinkError {
  /** The set the operation was on (undefined for operations on all sets). */
  readonly set: string | undefined;
  /** The element of an add/del/test (for bulk calls: the first refused one). */
  readonly entry: Entry | undefined;
  /** What the code means for this command and set, in words. */
  readonly meaning: string;

  /** `told`: the message's detail and hint, when they are not the meaning alone (bulk calls). */
  constructor(init: IpsetErrorInit, told: { detail?: string; hint?: string } = { hint: init.meaning }) {
    const subject = init.subject ?? (init.entry === undefined ? init.set : { set: init.set, entry: init.entry });
    super({
      errno: init.errno,
      code: init.code,
      operation: init.operation,
      subject,
      kernelMessage: init.kernelMessage,
      detail: told.detail,
      hint: told.hint,
    });
    this.name = 'IpsetError';
    this.set = init.set;
    this.entry = init.entry;
    this.meaning = init.meaning;
  }
}

function shown(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
}

/** The error for a native result that was refused. */
export function ipsetError(r: NativeIpsetResult, operation: string, about: { set?: string | undefined; entry?: Entry; subject?: unknown }): IpsetError {
  return new IpsetError({ errno: r.errno, code: r.code, meaning: r.message, kernelMessage: r.kernelMessage, operation, ...about });
}

/**
 * The running kernel lacks the set type, or the revision of it that an
 * option needs (an older kernel would ignore the option without a word).
 * Nothing was created.
 */
export class IpsetUnsupportedError extends IpsetError {
  /** The set type. */
  readonly setType: string;
  /** The option its revision lacks; undefined when the kernel lacks the type. */
  readonly option: string | undefined;
  /** The newest revision of the type the kernel has (and this library speaks); undefined when none. */
  readonly revision: number | undefined;
  /** The revision the option needs. */
  readonly needs: number | undefined;

  constructor(init: { operation: string; set: string; setType: string; option?: string | undefined; revision?: number | undefined; needs?: number | undefined }) {
    const lacks =
      init.option === undefined
        ? `this kernel has no set type ${init.setType} (or no revision of it this library speaks)`
        : `option ${init.option} needs revision ${init.needs} of ${init.setType}; this kernel has revision ${init.revision}`;
    super({ errno: 95, code: 'EOPNOTSUPP', meaning: lacks, operation: init.operation, set: init.set }, { detail: `${lacks}; nothing was created` });
    this.name = 'IpsetUnsupportedError';
    this.setType = init.setType;
    this.option = init.option;
    this.revision = init.revision;
    this.needs = init.needs;
  }
}

/** One entry the kernel refused. */
export interface BulkEntryFailure {
  /** Its position in the caller's list. */
  index: number;
  /** The entry, as passed. */
  entry: Entry;
  /** The errno, or the ipset error number. */
  errno: number;
  /** IPSET_ERR_EXIST, IPSET_ERR_HASH_FULL, ERANGE, ... */
  code: string;
  /** What the code means for this set and command. */
  message: string;
  /** The kernel's extended-ack text, if it sent one. */
  kernelMessage?: string;
}

/** Why a bulk call stopped sending before every entry was attempted. */
export interface BulkHalt {
  /** The errno, or the ipset error number. */
  errno: number;
  /** Its name. */
  code: string;
  /** What it means. */
  message: string;
  /** The kernel's extended-ack text, if it sent one. */
  kernelMessage?: string;
}

/** What became of a bulk call's entries (what IpsetBulkError is made from). */
export interface BulkFailure {
  /** Position of the first refused entry in the caller's list; -1 if none was refused (the request failed as a whole). */
  index: number;
  /** The entry at `index`, as passed. */
  entry: Entry | undefined;
  /** How many entries the kernel took: exactly those neither in `failures`, `skipped` nor `unconfirmed`. */
  applied: number;
  /** Every refused entry, in the caller's order (default: the one at `index`). */
  failures?: BulkEntryFailure[];
  /** Indices of entries the kernel never attempted: sending stopped (see `halt`) before it got to them. */
  skipped?: number[];
  /**
   * Indices of entries sent while the conversation with the kernel broke
   * (a timeout): they may or may not be in the set. Empty otherwise.
   */
  unconfirmed?: number[];
  /** Why sending stopped early, when it did. */
  halt?: BulkHalt;
  /** How many entries the call had. */
  total?: number;
}

/** What `replace()` adds when the bulk load into its temporary set failed. */
export interface ReplaceContext {
  /** The set replace() was to fill. */
  set: string;
  /** The temporary set the entries went to (destroyed). */
  temporary: string;
}

/**
 * A bulk add/del that did not fully go in. Every entry was attempted once
 * unless something meant nothing more could go in (the set is full or gone,
 * or an error every entry would hit); the entries after that are `skipped`.
 */
export class IpsetBulkError extends IpsetError implements BulkFailure {
  /** Position of the first refused entry in the caller's list; -1 if none was refused (the request failed as a whole). */
  readonly index: number;
  /** How many entries the kernel took: exactly those neither in `failures`, `skipped` nor `unconfirmed`. */
  readonly applied: number;
  /** Every refused entry, in the caller's order. */
  readonly failures: BulkEntryFailure[];
  /** Indices of entries the kernel never attempted: sending stopped (see `halt`) before it got to them. */
  readonly skipped: number[];
  /** Indices of entries sent while the conversation broke: they may or may not be in the set. */
  readonly unconfirmed: number[];
  /** Why sending stopped early, when it did. */
  readonly halt?: BulkHalt;
  /** How many entries the call had. */
  readonly total?: number;
  /** Set when the load was replace()'s: nothing was swapped in. */
  readonly replace?: ReplaceContext;

  /** `verdict`: the first refusal, or why the request failed as a whole. */
  constructor(verdict: BulkHalt, operation: string, set: string, failure: BulkFailure, replace?: ReplaceContext) {
    const init = { errno: verdict.errno, code: verdict.code, meaning: verdict.message, kernelMessage: verdict.kernelMessage, operation, set, entry: failure.entry, subject: replace ? replace.temporary : set };
    const failures =
      failure.failures ??
      (failure.index >= 0 ? [{ index: failure.index, entry: failure.entry as Entry, errno: verdict.errno, code: verdict.code, message: verdict.message, ...(verdict.kernelMessage ? { kernelMessage: verdict.kernelMessage } : {}) }] : []);
    const f = { ...failure, failures, skipped: failure.skipped ?? [], unconfirmed: failure.unconfirmed ?? [] };
    super(init, { detail: describe(init, f, replace) });
    this.name = 'IpsetBulkError';
    this.index = f.index;
    this.applied = f.applied;
    this.failures = f.failures;
    this.skipped = f.skipped;
    this.unconfirmed = f.unconfirmed;
    if (f.halt) this.halt = f.halt;
    if (f.total !== undefined) this.total = f.total;
    if (replace) this.replace = replace;
  }

  /** The same failure, as replace()'s, whose entries went to a temporary set. */
  asReplace(context: ReplaceContext): IpsetBulkError {
    const verdict = { errno: this.errno, code: this.code, message: this.meaning, ...(this.kernelMessage ? { kernelMessage: this.kernelMessage } : {}) };
    return new IpsetBulkError(verdict, this.operation, context.set, this, context);
  }
}

function entries(n: number): string {
  return `${n} entr${n === 1 ? 'y' : 'ies'}`;
}

/**
 * The detail of "addMany s failed: IPSET_ERR_EXIST: entry 4999 (10.0.0.1,tcp:80)
 * was refused: the element is already in the set; 9999 of 10000 entries were
 * applied" and, when sending stopped early, why and how many were never attempted.
 */
function describe(init: IpsetErrorInit, f: BulkFailure & { failures: BulkEntryFailure[]; skipped: number[]; unconfirmed: number[] }, replace: ReplaceContext | undefined): string {
  const parts: string[] = [];
  if (f.index >= 0) {
    const which = `entry ${f.index} (${shown(f.entry)})`;
    const head = f.failures.length > 1 ? `${f.failures.length} entries were refused, the first being ${which}` : `${which} was refused`;
    parts.push(`${head}: ${init.meaning}`);
  } else {
    parts.push(`the request was refused: ${init.meaning}`);
  }
  const verb = f.applied === 1 ? 'was' : 'were';
  parts.push(f.total === undefined ? `${entries(f.applied)} ${verb} applied` : `${f.applied} of ${entries(f.total)} ${verb} applied`);
  const { skipped, unconfirmed } = f;
  if (skipped.length > 0) {
    const why = !f.halt || f.halt.errno === init.errno ? 'nothing more can go in' : `${f.halt.message} [${f.halt.code}]`;
    parts.push(`${entries(skipped.length)} ${skipped.length === 1 ? 'was' : 'were'} never attempted: sending stopped because ${why} (see .skipped)`);
  }
  if (unconfirmed.length > 0) {
    parts.push(
      `${entries(unconfirmed.length)} ${unconfirmed.length === 1 ? 'was' : 'were'} sent but never answered ` +
        `(${f.halt?.message ?? 'the conversation broke'}): they may or may not be in the set (see .unconfirmed)`,
    );
  }
  if (f.failures.length > 1) parts.push('every refused entry is in .failures');
  if (replace) parts.push(`replace ${replace.set} swapped nothing in: ${replace.set} is unchanged and the temporary set ${replace.temporary} is destroyed`);
  return parts.join('; ');
}
