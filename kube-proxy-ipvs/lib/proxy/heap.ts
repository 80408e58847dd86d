/**
 * A full, memory-reducing garbage collection after bulk work, so that the
 * proxy's resident set is what it keeps, not what its last big job threw
 * away.
 *
 * Why: a cold start or a periodic resync of a big cluster makes tens of
 * megabytes of short-lived objects among the long-lived ones (a resync of
 * 10,000 services reads 110,000 kernel records back). V8 lets garbage grow
 * to a multiple of the live heap before a major collection, and an idle
 * proxy between resyncs allocates too little to trigger one: on Node.js 22
 * the garbage of each resync then stays, and the resident set with it.
 * Made at the end of such a run, never after an incremental sync (a few
 * tenths of a second in the sandbox, after a resync of seconds).
 *
 * A memory-reducing collection (V8's "last resort": what it runs when an
 * allocation fails), not a plain one. A plain full collection frees the
 * objects but leaves the emptied pages of V8's heap mapped and resident on
 * Node.js 22 and 24; only a memory-reducing collection compacts what
 * survives and unmaps the rest. V8 runs one by itself some seconds into an
 * idle stretch, but not reliably, and until it comes the emptied pages stay
 * resident. Its pause is longer than a plain collection's, paid once per
 * bulk run (figures: BENCHMARKS.md, "the collection after bulk work is a
 * memory-reducing one").
 *
 * Node offers no collection on demand without `--expose-gc`; as jest's
 * leak detector does, the flag is set at run time and `gc` taken from a
 * new context (the flag only adds the function to contexts made after it).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pinNativeHeapThresholds, trimNativeHeap } from 'ipvs-netlink';
import type { Logger } from 'pino';

/** Sent plus received netlink messages from which a run counts as bulk work (a resync of ~1,500 services). */
export const BULK_MESSAGES = 20_000;

/** The options of V8's gc() extension. */
interface GcOptions {
  type?: 'major' | 'minor';
  execution?: 'sync' | 'async';
  flavor?: 'regular' | 'last-resort';
}

let gc: ((options?: GcOptions) => void) | undefined;

/**
 * How long after a collection the C heap is trimmed: the buffers it found
 * dead are freed a little after it returns (on Node.js 20 on a later turn
 * of the event loop, measured; on 24 at once).
 */
export const TRIM_DELAY_MS = 1000;

/**
 * Runs a full, synchronous, memory-reducing garbage collection, and a
 * moment later gives the C heap's free pages back to the kernel
 * (ipvs-netlink's trimNativeHeap): the addon's worker threads leave a big
 * batch's freed buffers resident in their malloc arenas (about 20 MiB
 * after a resync of 10,000 services).
 */
export function collectGarbage(): void {
  collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  setTimeout(trimNativeHeap, TRIM_DELAY_MS).unref();
}

function collector(): (options?: GcOptions) => void {
  if (gc === undefined) {
    const exposed = (globalThis as { gc?: (options?: GcOptions) => void }).gc;
    if (typeof exposed === 'function') gc = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as (options?: GcOptions) => void;
    }
  }
  return gc;
}

/**
 * The C heap's free pages back to the kernel, on their own: the proxy does
 * this after every periodic resync that was not bulk work. Under steady
 * churn, with no bulk work to end in collectGarbage(), the malloc arenas of
 * the addon's and V8's worker threads otherwise keep what earlier syncs
 * freed. Measured under the churn test at ten times its rate for 15
 * minutes: the arenas grew from 2 to 13 MiB resident untrimmed, to 8 MiB
 * trimmed every 15 s, and the process's growth over the steady phase
 * halved (11.5 to 5.3 MiB fitted). A trim costs microseconds.
 */
export { trimNativeHeap };

/**
 * For the proxy's whole life, glibc's mmap and trim thresholds held at
 * their starting values (ipvs-netlink's pinNativeHeapThresholds). Left to
 * itself, glibc raises them as the first big batch's buffers are freed;
 * after that each worker thread that decoded a resync's dump keeps its
 * buffers' megabytes resident in its arena, and trimNativeHeap() cannot
 * reach them (measured in user-mode-linux at 10,000 Services: BENCHMARKS.md).
 */
export { pinNativeHeapThresholds };

/** The garbage of a cold start or a big resync, collected now rather than held until the heap reaches V8's next limit; a debug line says what it freed. */
export function collectAfterBulk(kind: string, log: Pick<Logger, 'debug'>, collect: () => void = collectGarbage): void {
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  collect();
  const mib = (b: number) => Math.round(b / 2 ** 17) / 8;
  log.debug(
    { kind, gcMs: Math.round((performance.now() - t0) * 10) / 10, heapUsedMiBBefore: mib(heapBefore), heapUsedMiBAfter: mib(process.memoryUsage().heapUsed) },
    'garbage collected after bulk work',
  );
}

/** Netlink messages a run sent and received, over every socket. */
export function messagesOf(netlink: Record<string, { messagesSent: number; messagesReceived: number }> | undefined): number {
  let n = 0;
  for (const s of Object.values(netlink ?? {})) n += s.messagesSent + s.messagesReceived;
  return n;
}
