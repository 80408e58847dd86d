/**
 * Leak checks for the addon: how much memory malloc has handed out and not
 * taken back (glibc's mallinfo2, read by the addon) grows over many
 * cycles. The resident set is no use here: page reuse moves it by
 * megabytes either way (in the sandbox it swung from -14 MB to +1.7 MB
 * over the same 3,000 leak-free cycles).
 *
 * Measured leak-free: within ±25 bytes per cycle (V8 and libuv keep a few
 * caches). The limit, 64 bytes per cycle, is ~3x that and far below any
 * real leak of a request, a reply or a socket buffer; every check first
 * proves it would see a leak, by retaining 256 bytes of malloc'd memory per
 * cycle and requiring the measure to show at least that.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { native } from '../../lib/netlink/binding.js';

export const LEAK_LIMIT_PER_CYCLE = 64;
const CONTROL_BYTES = 256;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** malloc'd bytes in use once garbage is collected and finalizers (which free native memory) have run. */
async function settledMalloc(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  return native.mallocInUse();
}

/** Growth of malloc'd memory over `cycles` runs of `run`, after `warmup` runs. */
export async function mallocGrowth(run: () => Promise<void>, warmup: number, cycles: number): Promise<number> {
  for (let i = 0; i < warmup; i++) await run();
  const before = await settledMalloc();
  for (let i = 0; i < cycles; i++) await run();
  return (await settledMalloc()) - before;
}

interface TapLike {
  ok(v: unknown, message: string): void;
}

/**
 * Asserts that `cycles` runs of `run` (after `warmup`) leave malloc'd memory
 * flat, after showing that the same measure catches a leak of 256 bytes
 * per cycle.
 */
export async function assertNoLeak(t: TapLike, run: () => Promise<void>, warmup: number, cycles: number): Promise<void> {
  const kept: Buffer[] = [];
  // Buffer.allocUnsafeSlow takes its memory from malloc, outside V8's heap.
  const leaky = async () => {
    await run();
    kept.push(Buffer.allocUnsafeSlow(CONTROL_BYTES));
  };
  const controlCycles = Math.min(cycles, 500);
  const control = await mallocGrowth(leaky, warmup, controlCycles);
  t.ok(
    control >= controlCycles * CONTROL_BYTES,
    `control: retaining ${CONTROL_BYTES} bytes per cycle shows as ${(control / controlCycles).toFixed(0)} bytes per cycle`,
  );
  kept.length = 0;
  const grew = await mallocGrowth(run, 0, cycles);
  t.ok(
    grew < cycles * LEAK_LIMIT_PER_CYCLE,
    `malloc'd memory grew ${grew} bytes over ${cycles} cycles (${(grew / cycles).toFixed(1)} per cycle; allowed ${LEAK_LIMIT_PER_CYCLE})`,
  );
}
