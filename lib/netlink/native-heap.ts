/**
 * The addon's C heap, as a long-running process sees it.
 */
import { integer } from '../util/check.js';
import { native } from './binding.js';

/**
 * Gives the C heap's free pages back to the kernel (glibc's malloc_trim),
 * in every malloc arena. The addon's worker threads allocate a big batch's
 * request and reply buffers in their own arenas, and glibc returns freed
 * memory there only when it lies at an arena's top: after a cold start of
 * tens of thousands of operations a process can keep tens of megabytes
 * resident that nothing uses. A daemon calls this after bulk work
 * (kube-proxy-ipvs does, after its garbage collection): it walks the whole
 * heap, so not after every call. Returns whether any pages were released.
 */
export function trimNativeHeap(): boolean {
  return native.trimMalloc();
}

/** glibc's own starting value for both thresholds. */
const GLIBC_DEFAULT_THRESHOLD = 128 * 1024;

/**
 * Keeps the C heap from holding on to big freed blocks, for the rest of the
 * process: glibc's mmap and trim thresholds fixed at `bytes` (its own
 * starting value by default), where glibc would otherwise raise them as big
 * blocks are freed. Once raised, a worker thread that decoded one big dump
 * keeps megabytes resident in its arena for good, and trimNativeHeap()
 * cannot give them back (it does not trim a thread arena's top). The price:
 * every block of `bytes` or more is mapped fresh and unmapped when freed.
 * Process-wide, so for a program to call (kube-proxy-ipvs does, at start),
 * not a library. Returns whether glibc took the values.
 */
export function pinNativeHeapThresholds(bytes: number = GLIBC_DEFAULT_THRESHOLD): boolean {
  // glibc takes an mmap threshold of at most 32 MiB (HEAP_MAX_SIZE / 2 on 64 bits).
  return native.pinMallocThresholds(integer(bytes, 'bytes', 4096, 32 * 2 ** 20));
}
