// A CommonJS program: `require` first, then a dynamic `import` of the same
// package in the same process. Prints one JSON line of what it found.
'use strict';
const lib = require('ipvs-netlink');
const { canonicalAddress } = require('ipvs-netlink/address');

(async () => {
  const imported = await import('ipvs-netlink');
  const report = {
    exports: Object.keys(lib).sort(),
    sameClasses: Object.keys(lib).every((k) => lib[k] === imported[k]),
    address: canonicalAddress('10.0.0.1') === '10.0.0.1',
  };
  Object.assign(report, await require('./refusal.cjs')(imported.Ipset, lib.NetlinkError));
  console.log(JSON.stringify(report));
})().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
