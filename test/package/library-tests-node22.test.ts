/** The library's unit tests and host ipset kernel tests, installed, on Node.js 22 (support/library-suites.ts). */
import t from 'tap';
import { files, hostIpset, suite, typeOnly, unit } from './support/library-suites.js';

t.test('the suites were found', async (t) => {
  t.same(files('test/unit').filter((f) => typeOnly.includes(f)), typeOnly, 'the unit files left out are the type checks');
  t.ok(unit.length >= 5, `unit test files: ${unit.join(' ')}`);
  t.ok(hostIpset.length >= 5, `host ipset test files: ${hostIpset.join(' ')}`);
});
suite('node22', unit, 'unit tests');
suite('node22', hostIpset, 'host ipset kernel tests');
