/**
 * nf_tables' refusals as errors. A transaction is all or nothing: when the
 * kernel refuses a change, nothing of the transaction is applied, and the
 * error names that change (its index in the caller's list, the element of
 * an element list, the attribute the kernel pointed at) with the kernel's
 * own explanation. A transaction computed at a generation that has since
 * moved is refused whole, with a GenerationChangedError.
 */
import { NetlinkError } from '../netlink/errors.js';
import type { NativeCommitResult } from './native.js';
import type { Change } from './types.js';

/** One change the kernel refused. */
export interface RefusedChange {
  /** Its index in the caller's list of changes. */
  index: number;
  /** For element changes: the element's index in the change's list. */
  element?: number;
  /** The kernel's errno, e.g. 2. */
  errno: number;
  /** Its name, e.g. `ENOENT`. */
  code: string;
  /** The kernel's extended-ack text, when it gave one. */
  kernelMessage?: string;
  /** The part of the change the kernel pointed at, e.g. `expressions[2](payload)`, `elements[3].key`. */
  attribute?: string;
}

/**
 * A change the addon reports refused, named by the caller's element:
 * `origins` (where the change's items are not its elements one for one)
 * maps the item the kernel pointed at to the element it came from.
 */
export function refusedChange(f: NativeCommitResult['failures'][number], origins: readonly number[] | undefined): RefusedChange {
  const element = f.element >= 0 && origins ? origins[f.element] : f.element;
  const path = f.path && element !== f.element ? f.path.replace(`elements[${f.element}]`, `elements[${element}]`) : f.path;
  return {
    index: f.change,
    ...(element >= 0 ? { element } : {}),
    errno: f.errno,
    code: f.code,
    ...(f.message ? { kernelMessage: f.message } : {}),
    ...(path ? { attribute: path } : {}),
  };
}

/** The kernel refused a transaction: nothing of it was applied. */
export class NftablesTransactionError extends NetlinkError {
  /** The first refused change's index in the caller's list; -1 when the transaction was refused as a whole. */
  readonly index: number;
  /** That change, as passed. */
  readonly change: Change | undefined;
  /** For an element change: the first refused element's index in the change's list. */
  readonly element: number | undefined;
  /** The part of that change the kernel pointed at, when it did (see RefusedChange.attribute). */
  readonly attribute: string | undefined;
  /** Every refused change, in order (a change after a refused one may fail only because of it). */
  readonly failures: RefusedChange[];

  constructor(changes: readonly Change[], failures: RefusedChange[], whole?: { errno: number; code: string; message: string; text: string }) {
    const first = failures[0];
    const errno = first?.errno ?? whole!.errno;
    const code = first?.code ?? whole!.code;
    const kernelMessage = first?.kernelMessage ?? (whole?.message || undefined);
    const change = first ? changes[first.index] : undefined;
    const where = first
      ? `change ${first.index} (${change?.op}${first.element !== undefined ? `, element ${first.element}` : ''}${first.attribute ? `, at ${first.attribute}` : ''})`
      : 'the transaction as a whole';
    // No subject: the change is `.change`, and an element list in a message could be 100,000 long.
    super({
      errno,
      code,
      operation: 'commit',
      kernelMessage,
      text: first ? undefined : whole?.text,
      detail: `the kernel refused ${where}; nothing of the ${changes.length} changes was applied`,
    });
    this.name = 'NftablesTransactionError';
    this.index = first ? first.index : -1;
    this.change = change;
    this.element = first?.element;
    this.attribute = first?.attribute;
    this.failures = failures;
  }
}

/** The ruleset changed after `expected` was read: nothing was applied; read again and recompute. */
export class GenerationChangedError extends NetlinkError {
  /** The generation the changes were computed at (CommitOptions.generation). */
  readonly expected: number;

  constructor(expected: number, operation = 'commit') {
    super({
      errno: 85,
      code: 'ERESTART',
      operation,
      detail:
        `the ruleset changed since generation ${expected} was read (another program committed changes); ` +
        'nothing was applied: read the ruleset again and recompute the changes',
    });
    this.name = 'GenerationChangedError';
    this.expected = expected;
  }
}
