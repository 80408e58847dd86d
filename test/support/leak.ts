/**
 * Leak checks for the addon: how much memory malloc has handed out and not
 * taken back (glibc's mallinfo2, read by the addon) grows over many
 * cycles. The resident set is no use here: page reuse moves it by
 * megabytes either way (in the sandbox it swung from -14 MB to +1.7 MB
 * over the same 3,000 leak-free cycles).
 *
 * Measured leak-free: a few bytes per cycle (V8 and libuv keep a few
 * caches), single stretches further either way (see assertNoLeak). The
 * limit, 64 bytes per cycle, is well clear of that and far below any real
 * leak of a request, a reply or a socket buffer; every check also proves
 * it would see a leak, by retaining 256 bytes of malloc'd memory per cycle
 * and requiring the measure to show at least that.
 */
import { native } from '../../lib/netlink/binding.js';
import { gc } from './gc.js';

export const LEAK_LIMIT_PER_CYCLE = 64;
const CONTROL_BYTES = 256;

/** Readings taken by settledMalloc(), and the pause between two. */
const READINGS = 5;
const READING_GAP_MS = 20;

/**
 * malloc'd bytes in use once garbage is collected and finalizers (which
 * free native memory) have run: the least of five readings over 100 ms,
 * as the process's other threads may be in the middle of their own work
 * (V8's background compiler and collector allocate as they go), which
 * only adds to a reading.
 */
async function settledMalloc(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  let least = native.mallocInUse();
  for (let i = 1; i < READINGS; i++) {
    await new Promise((r) => setTimeout(r, READING_GAP_MS));
    least = Math.min(least, native.mallocInUse());
  }
  return least;
}

/** How much malloc'd memory grew per cycle: the median of `stretches` equal stretches of `cycles`, and each stretch's own figure. */
export async function mallocGrowthPerCycle(run: () => Promise<void>, cycles: number, stretches: number): Promise<{ median: number; each: number[] }> {
  const per = Math.floor(cycles / stretches);
  const each: number[] = [];
  let before = await settledMalloc();
  for (let k = 0; k < stretches; k++) {
    for (let i = 0; i < per; i++) await run();
    const after = await settledMalloc();
    each.push((after - before) / per);
    before = after;
  }
  const sorted = [...each].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, each };
}

interface TapLike {
  ok(v: unknown, message: string): void;
}

/**
 * Asserts that `cycles` runs of `run` (after `warmup`) leave malloc'd memory
 * flat, and that the same measure catches a leak of 256 bytes per cycle.
 *
 * Judged by the median of eight stretches, not by one reading before and
 * one after: malloc'd memory also moves by steps that are not a leak. In
 * a process's first tens of seconds, at a moment that moves with the
 * machine's load, several hundred KiB to a few MiB are given back at once
 * (what it is is not known; not V8's collections' doing: the same drop
 * with them made memory-reducing, or with ArrayBuffer sweeping made
 * synchronous), and some tens of KiB come once as the process warms up
 * further. Each falls in one stretch, or two; a leak shows in every one.
 */
export async function assertNoLeak(t: TapLike, run: () => Promise<void>, warmup: number, cycles: number): Promise<void> {
  for (let i = 0; i < warmup; i++) await run();
  const grew = await mallocGrowthPerCycle(run, cycles, 8);
  const kept: Buffer[] = [];
  // Buffer.allocUnsafeSlow takes its memory from malloc, outside V8's heap.
  const leaky = async () => {
    await run();
    kept.push(Buffer.allocUnsafeSlow(CONTROL_BYTES));
  };
  const control = await mallocGrowthPerCycle(leaky, Math.min(cycles, 800), 8);
  kept.length = 0;
  t.ok(
    control.median >= CONTROL_BYTES,
    `control: retaining ${CONTROL_BYTES} bytes per cycle shows as ${control.median.toFixed(0)} bytes per cycle (the median of ${perCycle(control.each)})`,
  );
  t.ok(grew.median < LEAK_LIMIT_PER_CYCLE, `malloc'd memory grew ${grew.median.toFixed(1)} bytes per cycle over ${cycles} cycles (the median of ${perCycle(grew.each)}; allowed ${LEAK_LIMIT_PER_CYCLE})`);
}

const perCycle = (each: number[]) => each.map((x) => x.toFixed(0)).join(', ');
