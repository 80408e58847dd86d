// Shared by both consumers: a refusal from the kernel (destroying a set that
// does not exist: ENOENT, or EPERM without CAP_NET_ADMIN), made through one
// side's Ipset and checked against the other side's NetlinkError.
'use strict';
module.exports = async function refusal(Ipset, NetlinkError) {
  const set = await Ipset.open();
  try {
    await set.destroy('pkg-test-no-such-set');
    return { error: 'none' };
  } catch (e) {
    return { error: e.code, instanceofImported: e instanceof NetlinkError };
  } finally {
    set.close();
  }
};
