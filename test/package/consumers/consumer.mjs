// An ESM program that uses the installed library both ways: `import` and,
// in the same process, `require` (Node's require of an ES module). Prints
// one JSON line of what it found.
import { createRequire } from 'node:module';
import { Ipset, IpsetBulkError, Ipvs, NetlinkError, Rtnl, formatList, keyOf } from 'ipvs-netlink';
import { canonicalAddress } from 'ipvs-netlink/address';

const require = createRequire(import.meta.url);
const viaRequire = require('ipvs-netlink');
const report = {
  exports: Object.keys(viaRequire).sort(),
  sameClasses: [Ipset, IpsetBulkError, Ipvs, NetlinkError, Rtnl, formatList, keyOf].every((x) => Object.values(viaRequire).includes(x)),
  address: canonicalAddress('FD00:0::1') === require('ipvs-netlink/address').canonicalAddress('fd00::1'),
};
// A refusal from the kernel, through the class `require` gave: it must be
// the class `import` gave (no second copy of the library was loaded).
Object.assign(report, await require('./refusal.cjs')(viaRequire.Ipset, NetlinkError));
console.log(JSON.stringify(report));
