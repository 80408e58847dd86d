/**
 * ipset's answers as errors: a NetlinkError with the kernel's code
 * (IPSET_ERR_EXIST, ENOENT, ...) and a sentence saying what it means; for
 * bulk calls also which entry was refused and how many went in before it.
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

export interface BulkFailure {
  /** Position of the refused entry in the caller's list; -1 if the request failed as a whole. */
  index: number;
  /** The refused entry, as passed. */
  entry: unknown;
  /** How many entries were applied (all those before `index`). */
  applied: number;
}

/** A bulk add/del that the kernel stopped part-way. */
export class IpsetBulkError extends NetlinkError implements BulkFailure {
  readonly index: number;
  readonly entry: unknown;
  readonly applied: number;

  constructor(r: NativeIpsetResult, operation: string, setName: string, failure: BulkFailure) {
    const which =
      failure.index >= 0
        ? `entry ${failure.index} (${typeof failure.entry === 'string' ? failure.entry : JSON.stringify(failure.entry)})`
        : 'the request';
    super({
      errno: r.errno,
      code: r.code,
      operation,
      subject: setName,
      kernelMessage: r.kernelMessage,
      message:
        `${operation} ${setName}: ${which} was refused: ${r.message} [${r.code}]; ` +
        `${failure.applied} entr${failure.applied === 1 ? 'y was' : 'ies were'} applied, none after it`,
    });
    this.name = 'IpsetBulkError';
    this.index = failure.index;
    this.entry = failure.entry;
    this.applied = failure.applied;
  }
}
