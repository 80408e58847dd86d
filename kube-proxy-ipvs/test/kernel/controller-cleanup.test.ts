/**
 * cleanup() leaves the kernel as it found it: no virtual servers, KUBE
 * sets, kube-ipvs0 or KUBE-* chains (kube-proxy's iptables mode's included,
 * as upstream's --cleanup removes them), while someone else's ipset, a
 * virtual server inside excludeCIDRs and a foreign iptables chain stay
 * untouched.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { loadManifests } from '../../lib/kubernetes/manifests.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { freshNetns } from '../../../test/support/netns.js';
import { IPTABLES, ipvsadmSave, kubeIpsets, kubeIpvs0Addresses, kubeIptables, startController } from '../support/controller-kernel.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const manifests = loadManifests(path.join(here, '..', 'fixtures', 'manifests', 'cluster'));
const node = { name: 'node-a', addresses: ['192.168.1.10'] };
/**
 * What kube-proxy's iptables mode writes, without the kubelet's
 * KUBE-FIREWALL (which cleanup leaves) and the statistic match (the sandbox
 * kernel has no module for it).
 */
const iptablesMode = readFileSync(path.join(here, '..', 'fixtures', 'iptables', 'iptables-mode.rules'), 'utf8')
  .split('\n')
  .filter((l) => !l.includes('KUBE-FIREWALL'))
  .map((l) => l.replace(/-m statistic \S+ \S+ \S+ \S+ /, ''))
  .join('\n');

/**
 * iptables-save without comments, and without tables that hold nothing
 * but their built-in chains (reading or cleaning a table loads it, empty).
 */
function meaningful(save: string): string[] {
  const out: string[] = [];
  for (const section of save.split(/^(?=\*)/m)) {
    const lines = section.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    const empty = lines.every((l) => l.startsWith('*') || l === 'COMMIT' || /^:(PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) ACCEPT/.test(l));
    if (!empty) out.push(...lines);
  }
  return out;
}

t.test('cleanup removes what is ours and nothing else', async (t) => {
  const ns = await freshNetns(t, 'clean');
  await ns.exec('ip', ['link', 'add', 'eth0', 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', 'eth0', 'up']);
  await ns.exec('ip', ['addr', 'add', '192.168.1.10/24', 'dev', 'eth0']);
  await ns.exec('ip', ['route', 'add', '10.244.0.0/16', 'dev', 'eth0']);
  // Someone else's state.
  await ns.exec('ipset', ['create', 'my-set', 'hash:ip']);
  await ns.exec('ipset', ['add', 'my-set', '10.1.2.3']);
  await ns.exec('ipvsadm', ['-A', '-t', '10.200.0.1:80', '-s', 'wrr']);
  await ns.exec('ipvsadm', ['-a', '-t', '10.200.0.1:80', '-r', '10.244.9.9:80', '-m']);
  await ns.exec(IPTABLES.iptables, ['-t', 'filter', '-N', 'MY-CHAIN']);
  await ns.exec(IPTABLES.iptables, ['-t', 'filter', '-A', 'MY-CHAIN', '-s', '10.1.2.3', '-j', 'ACCEPT']);
  await ns.exec(IPTABLES.iptables, ['-t', 'filter', '-A', 'INPUT', '-j', 'MY-CHAIN']);
  const before = {
    ipvsadm: await ipvsadmSave(ns),
    ipset: await ns.exec('ipset', ['save']),
    links: (await ns.exec('ip', ['-o', 'link', 'show'])).split('\n').map((l) => l.split(':')[1]?.trim()).sort(),
    iptables: meaningful(await ns.exec(IPTABLES.save, [])),
  };

  t.ok(before.iptables.includes('-A MY-CHAIN -s 10.1.2.3/32 -j ACCEPT'), 'the foreign chain is in the comparison');
  const c = await startController(t, ns, { config: defaultProxyConfig({ excludeCIDRs: ['10.200.0.0/16'] }), node });
  for (const s of manifests.endpointSlices) c.upsertEndpointSlice(s);
  for (const s of manifests.services) c.upsertService(s);
  t.match(await c.sync(), { failed: 0 }, 'programmed');
  t.ok((await ipvsadmSave(ns)).length > before.ipvsadm.length, 'virtual servers were added');
  t.ok(Object.keys(await kubeIpsets(ns)).length > 0, 'KUBE sets exist');
  t.ok((await kubeIpvs0Addresses(ns))!.length > 0, 'kube-ipvs0 has addresses');
  t.ok((await kubeIptables(ns)).chains.length > 0, 'KUBE-* chains exist');

  // A switch from the iptables mode left its chains too.
  await ns.exec(IPTABLES.restore, ['--noflush'], iptablesMode);
  t.ok((await ns.exec(IPTABLES.save, [])).includes(':KUBE-SEP-'), "the iptables mode's chains are there");

  await c.cleanup();
  t.same(await ipvsadmSave(ns), before.ipvsadm, 'only the excluded virtual server is left, with its real server');
  t.same(await kubeIpsets(ns), {}, 'no KUBE set is left');
  t.equal(await kubeIpvs0Addresses(ns), undefined, 'kube-ipvs0 is gone');
  t.same(await kubeIptables(ns), { chains: [], rules: [], jumps: [] }, 'no KUBE-* chain or jump is left');
  t.equal(await ns.exec('ipset', ['save']), before.ipset, 'the foreign set is untouched, entries included');
  t.same((await ns.exec('ip', ['-o', 'link', 'show'])).split('\n').map((l) => l.split(':')[1]?.trim()).sort(), before.links, 'the links are as they were');
  t.same(meaningful(await ns.exec(IPTABLES.save, [])), before.iptables, 'iptables-save is as before (the foreign chain included)');
  t.same(c.counters().virtualServers, 0, 'the mirror is empty');

  await c.cleanup();
  t.pass('a second cleanup finds nothing to do and does not fail');
});
