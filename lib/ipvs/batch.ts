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

/** How each batch op is written: the command and the parts it sends. */
const BATCH_OPS: Readonly<Record<OpName, (w: RequestWriter, op: Record<string, unknown>) => void>> = {
  addService: (w, o) => serviceOp(w, CMD.NEW_SERVICE, o.service),
  updateService: (w, o) => serviceOp(w, CMD.SET_SERVICE, o.service),
  deleteService: (w, o) => {
    w.begin(CMD.DEL_SERVICE);
    w.serviceKeyOnly(o.service, 'service');
  },
  addDestination: (w, o) => destinationOp(w, CMD.NEW_DEST, o.service, o.destination, false),
  updateDestination: (w, o) => destinationOp(w, CMD.SET_DEST, o.service, o.destination, false),
  deleteDestination: (w, o) => destinationOp(w, CMD.DEL_DEST, o.service, o.destination, true),
  listDestinations: (w, o) => listDestinationsOp(w, o.service),
};

const OP_NAMES = Object.keys(BATCH_OPS) as OpName[];

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
  BATCH_OPS[op](w, { service, destination });
}

/**
 * Writes every op. Each is one request, except reads (two): with reads,
 * the first request of each op is returned, for the results.
 */
export function writeBatch(w: RequestWriter, ops: readonly unknown[]): Uint32Array | undefined {
  const firstRequest = ops.some((o) => (o as { op?: unknown } | null)?.op === 'listDestinations') ? new Uint32Array(ops.length) : undefined;
  for (let i = 0; i < ops.length; i++) {
    if (firstRequest) firstRequest[i] = w.count;
    const o = ops[i];
    if (!isObject(o)) throw wrongType(`ops[${i}]`, 'an object', o);
    const write = typeof o.op === 'string' && Object.prototype.hasOwnProperty.call(BATCH_OPS, o.op) ? BATCH_OPS[o.op as OpName] : undefined;
    if (!write) throw notOneOf(o.op, OP_NAMES, `ops[${i}]`, 'op');
    try {
      write(w, o);
    } catch (err) {
      // The writers name fields from the op down (`service.port`): a
      // refused field's path is built only now.
      throw prefixField(err, `ops[${i}].`);
    }
  }
  return firstRequest;
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
