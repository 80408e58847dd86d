/**
 * trimNativeHeap(): memory the C heap got back from its callers, given back
 * to the kernel. Buffers' memory comes from malloc, as the addon's own
 * buffers do; freed below a buffer still held, glibc keeps it resident.
 * It reads the resident set, so the ASan run leaves it out (its allocator
 * is not glibc's: scripts/asan-test.sh).
 */
import t from 'tap';
import { trimNativeHeap } from '../../lib/index.js';
import { gc } from '../support/gc.js';

const MiB = 2 ** 20;

t.test('the free pages of the C heap go back to the kernel', async (t) => {
  // 64 KiB each: under malloc's mmap threshold, so they come from its heap.
  let garbage: Buffer[] | undefined = Array.from({ length: 1600 }, () => Buffer.allocUnsafeSlow(64 * 1024).fill(1));
  const held = Buffer.allocUnsafeSlow(64 * 1024).fill(2); // above them: the heap's top is not free
  garbage = undefined;
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20)); // backing stores are freed after the collection
  }
  const before = process.memoryUsage().rss;
  t.equal(trimNativeHeap(), true, 'pages were released');
  const after = process.memoryUsage().rss;
  t.ok(before - after > 64 * MiB, `resident set ${(before / MiB).toFixed(0)} → ${(after / MiB).toFixed(0)} MiB (the 100 MiB freed, less what malloc reused)`);
  t.equal(held[0], 2, 'what is held is untouched');
  t.equal(garbage, undefined);
});
