/**
 * apply()'s two halves around the kernel: each op written as its requests
 * (checked as it is written; a refused one named `ops[i]....`), and the
 * kernel's answers turned into one result per op, in order.
 */
import { isObject, notOneOf, prefixField, wrongType } from '../util/check.js';
import { CMD } from './constants.js';
import { errorOf } from './errors.js';
import { FLAG } from './records.js';
import { type NativeReplies, ReplyRecords } from './reply-reader.js';
import type { RequestWriter } from './request-writer.js';
import type { BatchOp, BatchResult } from './types.js';

type OpName = BatchOp['op'];

/** The ops a batch takes, for the error that names them. */
const OP_NAMES: readonly OpName[] = ['addService', 'updateService', 'deleteService', 'addDestination', 'updateDestination', 'deleteDestination', 'listDestinations'];

/**
 * Writes one op as its requests; false when `name` is no op. One switch,
 * not a table of closures: a batch's loop stays one monomorphic call.
 */
function writeNamed(w: RequestWriter, name: unknown, service: unknown, destination: unknown): boolean {
  switch (name) {
    case 'addDestination': destinationOp(w, CMD.NEW_DEST, service, destination, false); return true;
    case 'addService': serviceOp(w, CMD.NEW_SERVICE, service); return true;
    case 'deleteDestination': destinationOp(w, CMD.DEL_DEST, service, destination, true); return true;
    case 'updateDestination': destinationOp(w, CMD.SET_DEST, service, destination, false); return true;
    case 'updateService': serviceOp(w, CMD.SET_SERVICE, service); return true;
    case 'deleteService':
      w.begin(CMD.DEL_SERVICE);
      w.serviceKeyOnly(service, 'service');
      return true;
    case 'listDestinations': listDestinationsOp(w, service); return true;
    default: return false;
  }
}

/**
 * Two requests: the kernel answers a destination dump for a missing
 * service with an empty list, so the service is looked up first and a
 * missing one fails with ESRCH.
 */
export function listDestinationsOp(w: RequestWriter, service: unknown): void {
  w.begin(CMD.GET_SERVICE);
  w.serviceKeyOnly(service, 'service');
  w.begin(CMD.GET_DEST, FLAG.dump);
  w.serviceKeyOnly(service, 'service');
}

function serviceOp(w: RequestWriter, cmd: number, spec: unknown): void {
  w.begin(cmd);
  w.serviceSpec(spec, 'service');
}

function destinationOp(w: RequestWriter, cmd: number, service: unknown, destination: unknown, keyOnly: boolean): void {
  w.begin(cmd);
  const af = w.serviceKeyOnly(service, 'service');
  if (keyOnly) w.destinationKey(destination, 'destination');
  else w.destinationSpec(destination, af, 'destination');
}

/** One op written on its own (the single-op methods); its field names are not prefixed. */
export function writeOp(w: RequestWriter, op: OpName, service: unknown, destination?: unknown): void {
  writeNamed(w, op, service, destination);
}

/**
 * Writes every op. Each is one request, except reads (two): with reads,
 * the first request of each op is returned, for the results.
 */
export function writeBatch(w: RequestWriter, ops: readonly unknown[]): Uint32Array | undefined {
  // Until the first read, op i is request i; the table is made only then.
  let firstRequest: Uint32Array | undefined;
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i];
    if (!isObject(o)) throw wrongType(`ops[${i}]`, 'an object', o);
    const name = o.op;
    if (firstRequest) firstRequest[i] = w.count;
    else if (name === 'listDestinations') firstRequest = readsFrom(ops.length, i);
    let written: boolean;
    try {
      written = writeNamed(w, name, o.service, o.destination);
    } catch (err) {
      // The writers name fields from the op down (`service.port`): a
      // refused field's path is built only now.
      throw prefixField(err, `ops[${i}].`);
    }
    if (!written) throw notOneOf(name, OP_NAMES, `ops[${i}]`, 'op');
  }
  return firstRequest;
}

/** The first request of each op, for a batch whose first read is op `first` (every op before it one request). */
function readsFrom(count: number, first: number): Uint32Array {
  const t = new Uint32Array(count);
  for (let i = 0; i <= first; i++) t[i] = i;
  return t;
}

/** Every successful batch op shares this result. */
const OK: BatchResult = Object.freeze({ ok: true as const });

/** One result per op, in order: `firstRequest` as writeBatch() returned it. */
export function batchResults(ops: readonly BatchOp[], firstRequest: Uint32Array | undefined, r: NativeReplies): BatchResult[] {
  return firstRequest ? readResults(ops, firstRequest, r) : opResults(ops, r);
}

/** One request per op: failures map straight to their ops. */
function opResults(ops: readonly BatchOp[], r: NativeReplies): BatchResult[] {
  const results: BatchResult[] = new Array(ops.length).fill(OK);
  for (const f of r.failures) results[f.index] = { ok: false, error: errorOf(f, ops[f.index].op, subjectOf(ops[f.index])) };
  return results;
}

/** A batch with reads: op i sent requests firstRequest[i]..; a read's destinations answer its second one. */
function readResults(ops: readonly BatchOp[], firstRequest: Uint32Array, r: NativeReplies): BatchResult[] {
  const results: BatchResult[] = new Array(ops.length).fill(OK);
  let op = 0;
  for (const f of r.failures) {
    while (op + 1 < ops.length && firstRequest[op + 1] <= f.index) op++;
    // A read whose service lookup failed fails once, with the lookup's error.
    if (!results[op].ok) continue;
    results[op] = { ok: false, error: errorOf(f, ops[op].op, subjectOf(ops[op])) };
  }
  let replies: ReplyRecords | undefined;
  for (let i = 0; i < ops.length; i++) {
    if (ops[i].op !== 'listDestinations' || !results[i].ok) continue;
    replies ??= new ReplyRecords(r.records, r.strings);
    results[i] = { ok: true, destinations: replies.destinationsOf(firstRequest[i] + 1) };
  }
  return results;
}

function subjectOf(op: BatchOp): unknown {
  return 'destination' in op ? { service: op.service, destination: op.destination } : op.service;
}
