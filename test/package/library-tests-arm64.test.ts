/** The library's unit tests, installed with its arm64 prebuild, on Node.js 24 for arm64 under qemu-user (support/library-suites.ts). */
import t from 'tap';
import { readsResidentSet, suite, unit } from './support/library-suites.js';

// All but the file that opens a conntrack socket: qemu-user translates only
// the netlink protocols it knows (route, audit, uevent) and refuses
// NETLINK_NETFILTER with EPROTONOSUPPORT, whatever the library. (And those
// that read the resident set: support/library-suites.ts.)
const netfilterSocket = ['test/unit/conntrack-api.test.js'];
t.test('arm64 under qemu-user: the unit file left out is the one that opens a netfilter socket', async (t) => {
  t.same(unit.filter((f) => netfilterSocket.includes(f)), netfilterSocket);
});
suite('node24-arm64', unit.filter((f) => !netfilterSocket.includes(f) && !readsResidentSet(f)), 'unit tests');
