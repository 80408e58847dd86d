/** The library's unit tests and host ipset kernel tests, installed, on Bun (support/library-suites.ts). */
import t from 'tap';
import { hostIpset, readsResidentSet, suite, unit } from './support/library-suites.js';

suite('bun', unit.filter((f) => !readsResidentSet(f)), 'unit tests'); // (support/library-suites.ts says why not those)
// All but the leak test, whose memory measurement forces V8's garbage
// collector (v8.setFlagsFromString('--expose-gc')): Bun runs
// JavaScriptCore, which has no such flag, so there is nothing to measure with.
const leak = hostIpset.filter((f) => f.endsWith('ipset-leak.test.js'));
t.test('Bun: the one host ipset file left out is the V8 leak test', async (t) => {
  t.same(leak, ['test/kernel/ipset-leak.test.js']);
});
suite('bun', hostIpset.filter((f) => !leak.includes(f)), 'host ipset kernel tests but the V8 leak test');
