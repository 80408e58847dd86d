/**
 * A full garbage collection after bulk work, so that the proxy's resident
 * set is what it keeps, not what its last big job threw away.
 *
 * Why: a cold start or a periodic resync of a big cluster makes tens of
 * megabytes of short-lived objects (a resync of 10,000 services reads
 * 110,000 kernel records back). V8 lets garbage grow to a multiple of the
 * live heap before a major collection (up to 4x with node's default heap
 * limit), and between resyncs an idle proxy allocates too little to
 * trigger one: measured at 10,000 x 10, 58 MiB of live objects sat in a
 * 140 MiB heap after the first resync, and the resident set varied by
 * 30 MiB from run to run with the collector's timing. One collection at
 * the end of such a run costs tens of milliseconds on a real machine, next
 * to a run that took seconds, and is never made after an incremental sync.
 *
 * Node offers no collection on demand without `--expose-gc`; as jest's
 * leak detector does, the flag is set at run time and `gc` taken from a
 * new context (the flag only adds the function to contexts made after
 * it; it changes nothing else).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Sent plus received netlink messages from which a run counts as bulk work (a resync of ~1,500 services). */
export const BULK_MESSAGES = 20_000;

let gc: (() => void) | undefined;

/** Runs a full, synchronous garbage collection. */
export function collectGarbage(): void {
  if (gc === undefined) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === 'function') gc = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    }
  }
  gc();
}

/** Netlink messages a run sent and received, over every socket. */
export function messagesOf(netlink: Record<string, { messagesSent: number; messagesReceived: number }> | undefined): number {
  let n = 0;
  for (const s of Object.values(netlink ?? {})) n += s.messagesSent + s.messagesReceived;
  return n;
}
