/** The library's unit tests that reach the addon, installed with its arm64 prebuild, on Node.js 24 for arm64 under qemu-user (support/library-suites.ts). */
import t from 'tap';
import { plainJavaScript, readsResidentSet, suite, unit } from './support/library-suites.js';

// All but the file that opens a conntrack socket: qemu-user translates only
// the netlink protocols it knows (route, audit, uevent) and refuses
// NETLINK_NETFILTER with EPROTONOSUPPORT, whatever the library. (And those
// that read the resident set: support/library-suites.ts.)
const netfilterSocket = ['test/unit/conntrack-api.test.js'];
t.test('arm64 under qemu-user: the unit file left out is the one that opens a netfilter socket', async (t) => {
  t.same(unit.filter((f) => netfilterSocket.includes(f)), netfilterSocket);
});
// Nor the files of the library's plain JavaScript (support/library-suites.ts):
// arm64 is here for its prebuild; under qemu-user's emulation their
// exhaustive sweeps were much of the suite's time, testing V8's arm64 port.
const plain = unit.filter(plainJavaScript);
t.test('arm64 under qemu-user: the plain JavaScript files left out are the address and check ones', async (t) => {
  t.same(plain, ['test/unit/address-cidr.test.js', 'test/unit/address-text.test.js', 'test/unit/util-check.test.js']);
});
suite('node24-arm64', unit.filter((f) => !netfilterSocket.includes(f) && !readsResidentSet(f) && !plain.includes(f)), 'unit tests');
