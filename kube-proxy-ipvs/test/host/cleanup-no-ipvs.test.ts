/**
 * `kube-proxy-ipvs --cleanup` on a kernel without IPVS (this host's): as
 * upstream's cleanup, which leaves IPVS out where ip_vs cannot be loaded
 * and still removes the rest, it exits 0 having removed what the proxy and
 * kube-proxy's other modes left in a fresh namespace, checked with nft,
 * iptables-save, ipset and ip: the nftables mode's table, the iptables
 * mode's chains and the KUBE-* ipsets; someone else's chain, set and table
 * stay. A kube-ipvs0 that is no dummy link (this kernel makes none: a veth
 * stands in) stays, as upstream's DeleteDummyDevice leaves it.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { freshNetns, type Netns } from '../../../test/support/netns.js';
import { runBinary } from '../support/proxy-env.js';

const iptablesMode = readFileSync(new URL('../fixtures/iptables/iptables-mode.rules', import.meta.url), 'utf8');

async function state(ns: Netns) {
  const nft = JSON.parse(await ns.exec('nft', ['-j', 'list', 'tables'])) as { nftables: Array<{ table?: { family: string; name: string } }> };
  return {
    tables: nft.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort(),
    chains: (await ns.exec('iptables-save', [])).split('\n').filter((l) => l.startsWith(':') && !/^:(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(l)).map((l) => l.split(' ')[0]).sort(),
    sets: (await ns.exec('ipset', ['list', '-n'])).split('\n').filter(Boolean).sort(),
    links: (await ns.exec('ip', ['-o', 'link', 'show'])).split('\n').filter(Boolean).map((l) => l.split(':')[1].trim().split('@')[0]).sort(),
  };
}

t.test('--cleanup without IPVS removes the rest and exits 0', async (t) => {
  const ns = await freshNetns(t, 'cleanupnoipvs');
  await ns.exec('nft', ['-f', '-'], 'table ip kube-proxy {\n}\ntable ip theirs {\n}\n');
  await ns.exec('iptables-restore', [], iptablesMode);
  await ns.exec('iptables', ['-t', 'filter', '-N', 'THEIR-CHAIN']);
  await ns.exec('ipset', ['create', 'KUBE-CLUSTER-IP', 'hash:ip,port']);
  await ns.exec('ipset', ['create', 'THEIRS', 'hash:ip']);
  const before = await state(ns);
  t.ok(before.tables.includes('ip kube-proxy') && before.chains.some((c) => c.startsWith(':KUBE-SVC-')) && before.sets.includes('KUBE-CLUSTER-IP'), 'the leftovers are there');

  const r = await runBinary([], ['--cleanup', '--netns', ns.path, '--hostname-override', 'node-a']);
  t.equal(r.code, 0, `exits 0:\n${r.stderr.slice(-2000)}`);
  t.match(r.stderr, /"cleanup: this kernel has no IPVS; the rest is removed/, 'and says IPVS was left out');

  const after = await state(ns);
  t.same(after.tables, before.tables.filter((x) => x !== 'ip kube-proxy'), "the nftables mode's table went, the others stayed (iptables-nft's among them)");
  t.same(after.chains.filter((c) => c !== ':KUBE-FIREWALL'), [':THEIR-CHAIN'], "the iptables mode's chains went (the kubelet's KUBE-FIREWALL stays)");
  t.same(after.sets, ['THEIRS'], 'the KUBE-* ipset went');
});

t.test('a kube-ipvs0 that is no dummy link is not a proxy\'s: it stays, and the cleanup fails as upstream\'s', async (t) => {
  const ns = await freshNetns(t, 'cleanupveth');
  await ns.exec('ipset', ['create', 'KUBE-CLUSTER-IP', 'hash:ip,port']);
  await ns.exec('ip', ['link', 'add', 'kube-ipvs0', 'type', 'veth', 'peer', 'name', 'kube-ipvs0p']);
  const r = await runBinary([], ['--cleanup', '--netns', ns.path, '--hostname-override', 'node-a']);
  t.equal(r.code, 1, 'exit 1');
  t.match(r.stderr, /expect dummy device, got device type: veth/, "in upstream's words");
  t.match((await ns.exec('ip', ['-d', 'link', 'show', 'kube-ipvs0'])).split('\n')[2] ?? '', /^\s*veth\b/, 'ip -d link: the veth is still there');
  t.same((await state(ns)).sets, [], 'the rest was still removed (the KUBE-* ipset)');
});
