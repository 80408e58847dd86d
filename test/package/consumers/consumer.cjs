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
  const set = await imported.Ipset.open();
  try {
    await set.destroy('pkg-test-no-such-set');
    report.error = 'none';
  } catch (e) {
    report.error = e.code;
    report.instanceofImported = e instanceof lib.NetlinkError;
  } finally {
    set.close();
  }
  console.log(JSON.stringify(report));
})().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
