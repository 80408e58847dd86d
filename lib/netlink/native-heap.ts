/**
 * The addon's C heap, as a long-running process sees it.
 */
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
