/**
 * ipset's answers as errors: a NetlinkError with the kernel's code
 * (IPSET_ERR_EXIST, ENOENT, ...) and a sentence saying what it means; for
 * bulk calls also what became of every entry.
 */
import type { NativeIpsetResult } from '../netlink/binding.js';
import { NetlinkError } from '../netlink/errors.js';

export function ipsetError(r: NativeIpsetResult, operation: string, subject?: unknown): NetlinkError {
  const about = subject === undefined ? '' : ` ${typeof subject === 'string' ? subject : JSON.stringify(subject)}`;
  const kernel = r.kernelMessage ? ` (kernel: ${r.kernelMessage})` : '';
  return new NetlinkError({
    errno: r.errno,
    code: r.code,
    operation,
    subject,
    kernelMessage: r.kernelMessage,
    message: `${operation}${about} failed: ${r.message} [${r.code}]${kernel}`,
  });
}

/** One entry the kernel refused. */
export interface BulkEntryFailure {
  /** Its position in the caller's list. */
  index: number;
  /** The entry, as passed. */
  entry: unknown;
  errno: number;
  /** IPSET_ERR_EXIST, IPSET_ERR_HASH_FULL, ERANGE, ... */
  code: string;
  /** What the code means for this set and command. */
  message: string;
  kernelMessage?: string;
}

/** Why a bulk call stopped sending before every entry was attempted. */
export interface BulkHalt {
  errno: number;
  code: string;
  message: string;
  kernelMessage?: string;
}

export interface BulkFailure {
  /** Position of the first refused entry in the caller's list; -1 if none was refused (the request failed as a whole). */
  index: number;
  /** The entry at `index`, as passed. */
  entry: unknown;
  /** How many entries the kernel took: exactly those neither in `failures`, `skipped` nor `unconfirmed`. */
  applied: number;
  /** Every refused entry, in the caller's order. */
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

/**
 * A bulk add/del that did not fully go in. Every entry was attempted once
 * unless something meant nothing more could go in (the set is full or gone,
 * or an error every entry would hit); the entries after that are `skipped`.
 */
export class IpsetBulkError extends NetlinkError implements BulkFailure {
  readonly index: number;
  readonly entry: unknown;
  readonly applied: number;
  readonly failures: BulkEntryFailure[];
  readonly skipped: number[];
  readonly unconfirmed: number[];
  readonly halt: BulkHalt | undefined;

  constructor(r: NativeIpsetResult, operation: string, setName: string, failure: BulkFailure) {
    const failures =
      failure.failures ??
      (failure.index >= 0
        ? [{ index: failure.index, entry: failure.entry, errno: r.errno, code: r.code, message: r.message, kernelMessage: r.kernelMessage }]
        : []);
    const skipped = failure.skipped ?? [];
    const unconfirmed = failure.unconfirmed ?? [];
    super({
      errno: r.errno,
      code: r.code,
      operation,
      subject: setName,
      kernelMessage: r.kernelMessage,
      message: describe(r, operation, setName, failure, failures, skipped, unconfirmed),
    });
    this.name = 'IpsetBulkError';
    this.index = failure.index;
    this.entry = failure.entry;
    this.applied = failure.applied;
    this.failures = failures;
    this.skipped = skipped;
    this.unconfirmed = unconfirmed;
    this.halt = failure.halt;
  }
}

function shown(entry: unknown): string {
  return typeof entry === 'string' ? entry : JSON.stringify(entry);
}

function entries(n: number): string {
  return `${n} entr${n === 1 ? 'y' : 'ies'}`;
}

/**
 * "addMany s: entry 4999 (10.0.0.1,tcp:80) was refused: the element is
 * already in the set [IPSET_ERR_EXIST]; 9999 of 10000 entries were applied"
 * and, when sending stopped early, why and how many were never attempted.
 */
function describe(
  r: NativeIpsetResult,
  operation: string,
  setName: string,
  f: BulkFailure,
  failures: BulkEntryFailure[],
  skipped: number[],
  unconfirmed: number[],
): string {
  const kernel = r.kernelMessage ? ` (kernel: ${r.kernelMessage})` : '';
  const parts: string[] = [];
  if (f.index >= 0) {
    const which = `entry ${f.index} (${shown(f.entry)})`;
    const head = failures.length > 1 ? `${failures.length} entries were refused, the first being ${which}` : `${which} was refused`;
    parts.push(`${operation} ${setName}: ${head}: ${r.message} [${r.code}]${kernel}`);
  } else {
    parts.push(`${operation} ${setName}: the request was refused: ${r.message} [${r.code}]${kernel}`);
  }
  const total = f.total;
  const verb = f.applied === 1 ? 'was' : 'were';
  const noun = f.applied === 1 && (total === undefined || total === 1) ? 'entry' : 'entries';
  parts.push(`${total === undefined ? f.applied : `${f.applied} of ${total}`} ${noun} ${verb} applied`);
  if (skipped.length > 0) {
    const why = !f.halt || f.halt.errno === r.errno ? 'nothing more can go in' : `${f.halt.message} [${f.halt.code}]`;
    parts.push(`${entries(skipped.length)} ${skipped.length === 1 ? 'was' : 'were'} never attempted: sending stopped because ${why} (see .skipped)`);
  }
  if (unconfirmed.length > 0) {
    parts.push(
      `${entries(unconfirmed.length)} ${unconfirmed.length === 1 ? 'was' : 'were'} sent but never answered ` +
        `(${f.halt?.message ?? 'the conversation broke'}): they may or may not be in the set (see .unconfirmed)`,
    );
  }
  if (failures.length > 1) parts.push('every refused entry is in .failures');
  return parts.join('; ');
}
