// An ESM program that uses the installed library both ways: `import` and,
// in the same process, `require` (Node's require of an ES module). Prints
// one JSON line of what it found.
import { createRequire } from 'node:module';
import * as lib from 'ipvs-netlink';
import { NetlinkError } from 'ipvs-netlink';
import { canonicalAddress } from 'ipvs-netlink/address';

const require = createRequire(import.meta.url);
const viaRequire = require('ipvs-netlink');
const report = {
  exports: Object.keys(viaRequire).sort(),
  sameClasses: Object.keys(lib).length === Object.keys(viaRequire).length && Object.keys(lib).every((k) => lib[k] === viaRequire[k]),
  address: canonicalAddress('FD00:0::1') === require('ipvs-netlink/address').canonicalAddress('fd00::1'),
};
// A refusal from the kernel, through the class `require` gave: it must be
// the class `import` gave (no second copy of the library was loaded).
Object.assign(report, await require('./refusal.cjs')(viaRequire.Ipset, NetlinkError));
console.log(JSON.stringify(report));
