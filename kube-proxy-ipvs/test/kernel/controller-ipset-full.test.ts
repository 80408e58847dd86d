/**
 * An ipset that reaches its maxelem (#129389) stops nothing else: the
 * other sets, the IPVS services and the addresses are programmed; the sync
 * result names the set, IPSET_ERR_HASH_FULL and the entries that are not
 * in the kernel; the mirror holds exactly what the kernel holds, so the
 * next syncs retry only the missing entries, and they go in once there is
 * room.
 */
import t from 'tap';
import type { Controller } from '../../lib/kernel/controller.js';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { expectedIpsets, expectedIpvsadm, ipvsadmSave, kernelMatches, kubeIpsets, kubeIpvs0Addresses, startController } from '../support/controller-kernel.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { freshNetns } from '../../../test/support/netns.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };
const MAX = 4;
const SERVICES = 6;

const svc = (i: number) => service(`svc-${i}`, { clusterIP: `10.96.0.${i}`, ports: [{ name: 'p', protocol: 'TCP', port: 80, targetPort: 8080 }] });
const eps = (i: number) => slice(`svc-${i}`, [endpoint(`10.244.1.${i}`, { node: 'node-b', ready: true })], [{ name: 'p', protocol: 'TCP', port: 8080 }]);

function ipsetSent(c: Controller): number {
  return c.counters().netlink.ipset!.messagesSent;
}

t.test('a full set fails alone and is retried entry by entry', async (t) => {
  const top = t;
  const ns = await freshNetns(t, 'full');
  await ns.exec('ip', ['link', 'add', 'eth0', 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', 'eth0', 'up']);
  await ns.exec('ip', ['addr', 'add', '192.168.1.10/24', 'dev', 'eth0']);
  const c = await startController(t, ns, { config: defaultProxyConfig({ ipsetMaxElem: { 'KUBE-CLUSTER-IP': MAX } }), node });
  for (let i = 1; i <= SERVICES; i++) {
    c.upsertService(svc(i));
    c.upsertEndpointSlice(eps(i));
  }

  const first = await c.sync();
  t.equal(first.ipsetFailures.length, 1, 'one ipset failure');
  const [failure] = first.ipsetFailures;
  t.match(failure, { set: 'KUBE-CLUSTER-IP', op: 'add', code: 'IPSET_ERR_HASH_FULL' }, 'it names the set and IPSET_ERR_HASH_FULL');
  t.match(failure.message, /KUBE-CLUSTER-IP/, 'the message names the set too');
  t.equal(failure.entries.length, SERVICES - MAX, 'the entries that did not fit');
  t.equal(first.failed, 1, 'nothing else failed');

  const sets = await kubeIpsets(ns);
  const wanted = expectedIpsets(c.desired);
  t.match(await ns.exec('ipset', ['list', '-t', 'KUBE-CLUSTER-IP']), /maxelem 4\b/, 'the set was created with the configured maxelem');
  t.equal(sets['KUBE-CLUSTER-IP'].length, MAX, 'the set is full');
  t.same([...sets['KUBE-CLUSTER-IP'], ...failure.entries].sort(), wanted['KUBE-CLUSTER-IP'], 'what is in the kernel plus what is reported missing is exactly what is wanted');
  t.same([...c.current.ipsets.get('KUBE-CLUSTER-IP')!.entries].sort(), sets['KUBE-CLUSTER-IP'], 'the mirror records exactly what the kernel holds');
  t.same({ ...sets, 'KUBE-CLUSTER-IP': [] }, { ...wanted, 'KUBE-CLUSTER-IP': [] }, 'every other set holds all its entries (ipset save)');
  t.same(await ipvsadmSave(ns), expectedIpvsadm(c.desired), 'every virtual and real server is programmed (ipvsadm -Sn)');
  t.same(await kubeIpvs0Addresses(ns), [...c.desired.boundAddresses].sort(), 'every address is bound');
  t.equal(c.counters().operations.iptables.ok, 1, 'the iptables rules were written');
  t.same(c.counters().ipsetFailures, [{ set: 'KUBE-CLUSTER-IP', code: 'IPSET_ERR_HASH_FULL', count: 1 }], 'counted for the metric');

  await t.test('the next sync retries only the missing entries', async (t) => {
    const before = ipsetSent(c);
    const again = await c.sync();
    t.match(again, { kind: 'incremental', planned: 1, failed: 1 }, 'one operation: the add of the missing entries');
    t.same(again.ipsetFailures.map((f) => ({ set: f.set, code: f.code, entries: f.entries })), [{ set: 'KUBE-CLUSTER-IP', code: 'IPSET_ERR_HASH_FULL', entries: failure.entries }], 'still full: the same entries reported');
    t.ok(ipsetSent(c) - before <= SERVICES - MAX, `ipset messages: ${ipsetSent(c) - before}, no more than one per missing entry`);
    t.same(await kubeIpsets(ns), sets, 'the kernel is unchanged');
  });

  await t.test('a resync plans the same retry, and nothing else', async (t) => {
    const r = await c.resync();
    t.match(r, { kind: 'resync', planned: 1, failed: 1 });
    t.same(r.ipsetFailures[0].entries, failure.entries);
  });

  await t.test('once there is room, the missing entries go in', async (t) => {
    // Two services whose entries are in the set go away: their entries are deleted (after the retry, which still finds the set full).
    const present = sets['KUBE-CLUSTER-IP'].slice(0, 2).map((e) => Number(e.split(',')[0].split('.')[3]));
    for (const i of present) {
      c.deleteService(service(`svc-${i}`, {}));
      c.deleteEndpointSlice(eps(i));
    }
    const freed = await c.sync();
    t.same(freed.ipsetFailures.map((f) => f.entries), [failure.entries], 'the retry came before the deletions made room');
    const filled = await c.sync();
    t.match(filled, { planned: 1, applied: 1, failed: 0, ipsetFailures: [] }, 'the next sync adds them');
    await kernelMatches(t, top, ns, c.desired, 'once everything fits');
  });
});
