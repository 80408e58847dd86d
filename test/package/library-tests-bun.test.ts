/** The library's unit tests and host ipset kernel tests, installed, on Bun (support/library-suites.ts). */
import t from 'tap';
import { hostIpset, readsResidentSet, suite, unit } from './support/library-suites.js';

suite('bun', unit.filter((f) => !readsResidentSet(f)), 'unit tests'); // (support/library-suites.ts says why not those)
// All but the leak test, which reads glibc's malloc and proves it would
// see a leak by holding Buffers: Bun's Buffers come from its own
// allocator, so its control could never show.
const leak = hostIpset.filter((f) => f.endsWith('ipset-leak.test.js'));
t.test('Bun: the one host ipset file left out is the malloc leak test', async (t) => {
  t.same(leak, ['test/kernel/ipset-leak.test.js']);
});
suite('bun', hostIpset.filter((f) => !leak.includes(f)), 'host ipset kernel tests but the malloc leak test');
