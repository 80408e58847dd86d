/**
 * A full, compacting garbage collection after bulk work, so that the
 * proxy's resident set is what it keeps, not what its last big job threw
 * away.
 *
 * Why: a cold start or a periodic resync of a big cluster makes tens of
 * megabytes of short-lived objects among the long-lived ones (a resync of
 * 10,000 services reads 110,000 kernel records back). V8 lets garbage grow
 * to a multiple of the live heap before a major collection, an idle proxy
 * between resyncs allocates too little to trigger one, and even a major
 * collection leaves the heap's pages in place when the survivors are
 * scattered over them (it moves the objects of a few pages only): measured
 * at 10,000 x 10, 56 MiB of live objects held 111 MiB of heap after a
 * plain collection, and the resident set stayed there. A compacting
 * collection moves the survivors together and gives the emptied pages
 * back (benchmark 6: 188 -> 168 MiB resident). Made at the end of such a
 * run, never after an incremental sync: a plain collection (0.1-0.2 s at
 * that size in the sandbox, after a resync of 3-4 s), and a compacting one
 * (about 1 s there) only when the first left old space fragmented.
 *
 * Node offers no collection on demand without `--expose-gc`; as jest's
 * leak detector does, the flag is set at run time and `gc` taken from a
 * new context (the flag only adds the function to contexts made after
 * it). Compaction is V8's --compact-on-every-full-gc, which the collector
 * reads when it starts: set for this one collection and cleared after it.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Sent plus received netlink messages from which a run counts as bulk work (a resync of ~1,500 services). */
export const BULK_MESSAGES = 20_000;

let gc: (() => void) | undefined;

/**
 * Old space whose free part after a full collection exceeds this share of
 * its live objects (and 16 MiB) is compacted: below it, compacting would
 * move every survivor to give back little.
 */
const FRAGMENTATION_LIMIT = 0.25;

export interface Collection {
  /** A second, compacting collection was made: the first left old space fragmented. */
  compacted: boolean;
}

/**
 * Runs a full, synchronous garbage collection; if it leaves old space much
 * larger than what lives in it, a second one compacts it. A cold start
 * (parsing interleaves what stays with what goes) needs the compaction;
 * a resync after it usually does not (what it promotes dies together, and
 * its emptied pages are freed without moving anything).
 */
export function collectGarbage(): Collection {
  const collect = collector();
  collect();
  const old = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  if (old === undefined || old.space_size - old.space_used_size <= Math.max(old.space_used_size * FRAGMENTATION_LIMIT, 16 << 20)) return { compacted: false };
  setFlagsFromString('--compact-on-every-full-gc');
  try {
    collect();
  } finally {
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
  return { compacted: true };
}

function collector(): () => void {
  if (gc === undefined) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === 'function') gc = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    }
  }
  return gc;
}

/** Netlink messages a run sent and received, over every socket. */
export function messagesOf(netlink: Record<string, { messagesSent: number; messagesReceived: number }> | undefined): number {
  let n = 0;
  for (const s of Object.values(netlink ?? {})) n += s.messagesSent + s.messagesReceived;
  return n;
}
