/**
 * What kube-proxy's other modes leave, removed on this host's kernel
 * (nf_tables and iptables-nft, no IPVS needed), each test in a fresh
 * network namespace, checked with nft and iptables-save: the nftables
 * mode's `kube-proxy` tables in the ip and ip6 families go and nothing else
 * does; the iptables mode's chains (test/fixtures/iptables/, as that mode
 * writes them) go with the jumps to them, and the kubelet's KUBE-FIREWALL
 * and someone else's chain stay.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { Nftables } from 'ipvs-netlink';
import { execIn } from '../../lib/kernel/exec.js';
import { DEFAULT_IPTABLES, IptablesRunner } from '../../lib/kernel/iptables-runner.js';
import { removeNftablesModeTables } from '../../lib/kernel/other-modes.js';
import { freshNetns, type Netns } from '../../../test/support/netns.js';

const iptablesMode = readFileSync(new URL('../fixtures/iptables/iptables-mode.rules', import.meta.url), 'utf8');

/** `nft -j list tables` as "family name". */
async function tables(ns: Netns): Promise<string[]> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'tables'])) as { nftables: Array<{ table?: { family: string; name: string } }> };
  return out.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort();
}

/** iptables-save's chain and rule lines, without comments, counters or the tables' built-in chains. */
async function saved(ns: Netns): Promise<string[]> {
  return (await ns.exec('iptables-save', []))
    .split('\n')
    .filter((l) => l.startsWith('-A ') || (l.startsWith(':') && !/^:(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) /.test(l)))
    .map((l) => (l.startsWith(':') ? l.split(' ')[0] : l));
}

t.test("the nftables mode's tables go, in ip and ip6 only", async (t) => {
  const ns = await freshNetns(t, 'nftmode');
  // What a switch from nftables mode leaves: a NodePort still caught before IPVS sees it.
  await ns.exec('nft', ['-f', '-'], `
table ip kube-proxy {
  chain nat-prerouting {
    type nat hook prerouting priority dstnat
    tcp dport 30080 dnat to 10.244.9.9:8080
  }
}
table ip6 kube-proxy {
  chain nat-prerouting {
    type nat hook prerouting priority dstnat
  }
}
table inet kube-proxy {
}
table ip kube-proxy-ipvs {
}
table ip filter {
}
`);
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  t.equal(await removeNftablesModeTables(nft), true, 'there were some');
  t.same(await tables(ns), ['inet kube-proxy', 'ip filter', 'ip kube-proxy-ipvs'], 'an inet table of that name, ours and a foreign one stay');
  t.equal(await removeNftablesModeTables(nft), false, 'a second pass finds none');
});

t.test("the iptables mode's chains go with the jumps to them", async (t) => {
  const ns = await freshNetns(t, 'iptmode');
  await ns.exec('iptables-restore', [], iptablesMode);
  await ns.exec('iptables', ['-t', 'filter', '-N', 'MY-CHAIN']);
  await ns.exec('iptables', ['-t', 'filter', '-A', 'MY-CHAIN', '-s', '10.1.2.3/32', '-j', 'ACCEPT']);
  await ns.exec('iptables', ['-t', 'filter', '-A', 'INPUT', '-j', 'MY-CHAIN']);
  const before = await saved(ns);
  t.ok(before.some((l) => l.startsWith(':KUBE-SEP-')) && before.some((l) => l.includes('-j KUBE-EXTERNAL-SERVICES')), 'the iptables mode is programmed');

  const runner = new IptablesRunner(execIn(ns.path), DEFAULT_IPTABLES);
  await runner.cleanup('inet', { iptablesMode: true });
  const kubelet = before.filter((l) => l === ':KUBE-FIREWALL' || l.startsWith('-A KUBE-FIREWALL ') || l.endsWith('-j KUBE-FIREWALL'));
  const foreign = before.filter((l) => l.includes('MY-CHAIN'));
  t.equal(kubelet.length, 4, "the kubelet's chain, its rule and two jumps");
  t.same(await saved(ns), [...kubelet, ...foreign].sort((a, b) => before.indexOf(a) - before.indexOf(b)), "only the kubelet's KUBE-FIREWALL and the foreign chain are left");

  await runner.cleanup('inet', { iptablesMode: true });
  t.pass('a second pass finds nothing to do and does not fail');
});
