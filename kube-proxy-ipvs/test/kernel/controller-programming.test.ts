/**
 * The controller programs a sandbox kernel from the fixture manifests, and
 * the kernel holds exactly the plan (ipvsadm, ipset, kube-ipvs0,
 * iptables-save); then object changes, incremental cost, graceful
 * termination, drift repair.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { Controller } from '../../lib/kernel/controller.js';
import { loadManifests } from '../../lib/kubernetes/manifests.js';
import { defaultProxyConfig, type EndpointSlice, type Service } from '../../lib/kubernetes/model.js';
import { freshNetns, type Netns } from '../../../test/support/netns.js';
import { ipvsadmSave, kernelMatches, expectedIpvsadm, kubeIpvs0Addresses, startController } from '../support/controller-kernel.js';
import { service } from '../support/k8s-objects.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const manifests = loadManifests(path.join(here, '..', 'fixtures', 'manifests', 'cluster'));
const node = { name: 'node-a', addresses: ['192.168.1.10'], labels: { 'topology.kubernetes.io/zone': 'zone-a' } };
const config = defaultProxyConfig();

/** The node's uplink, so the node address is local and the pod network routed. */
async function nodeNetns(t: Parameters<typeof freshNetns>[0]): Promise<Netns> {
  const ns = await freshNetns(t, 'node');
  await ns.exec('ip', ['link', 'add', 'eth0', 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', 'eth0', 'up']);
  await ns.exec('ip', ['addr', 'add', '192.168.1.10/24', 'dev', 'eth0']);
  await ns.exec('ip', ['route', 'add', '10.244.0.0/16', 'dev', 'eth0']);
  return ns;
}

function clone<T>(x: T): T {
  return structuredClone(x);
}

function sliceOf(name: string): EndpointSlice {
  return clone(manifests.endpointSlices.find((s) => s.metadata.labels?.['kubernetes.io/service-name'] === name)!);
}

function serviceOf(name: string): Service {
  return clone(manifests.services.find((s) => s.metadata.name === name)!);
}

function sent(c: Controller) {
  const n = c.counters().netlink;
  return { ipvs: n.ipvs!.messagesSent, ipset: n.ipset!.messagesSent, rtnl: n.rtnl!.messagesSent };
}

t.test('the kernel holds exactly the plan, through changes, drift and graceful termination', async (t) => {
  const top = t;
  const ns = await nodeNetns(t);
  const c = await startController(t, ns, { config, node });
  for (const s of manifests.endpointSlices) c.upsertEndpointSlice(s);
  for (const s of manifests.services) c.upsertService(s);

  const first = await c.sync();
  t.comment(`first sync: ${JSON.stringify(first)}`);
  t.match(first, { kind: 'full', failed: 0 }, 'the first sync is a full one and nothing fails');
  t.ok(first.applied > 0, 'it applied the plan');
  await kernelMatches(t, top, ns, c.desired, 'after the first sync');
  t.equal((await c.sync()).planned, 0, 'a sync with no change plans nothing');
  const counts = c.counters();
  t.equal(counts.virtualServers, c.desired.virtualServers.size, 'the virtual server counter matches the plan');
  t.equal(counts.realServers, [...c.desired.virtualServers.values()].reduce((n, v) => n + v.destinations.length, 0), 'the real server counter matches');
  t.equal(counts.ipsetEntries, [...c.desired.ipsets.values()].reduce((n, s) => n + s.entries.size, 0), 'the ipset entry counter matches');

  const web = sliceOf('web');
  await t.test('an added endpoint costs a handful of netlink messages', async (t) => {
    web.endpoints.push({ addresses: ['10.244.1.21'], nodeName: 'node-a' }); // local: ClusterIP + NodePort (ETP=Local) + hairpin entry
    const before = sent(c);
    c.upsertEndpointSlice(web);
    const r = await c.sync();
    const after = sent(c);
    const delta = { ipvs: after.ipvs - before.ipvs, ipset: after.ipset - before.ipset, rtnl: after.rtnl - before.rtnl };
    t.match(r, { kind: 'incremental', planned: 3, applied: 3, failed: 0 }, 'two real servers and one ipset entry');
    t.same(delta, { ipvs: 2, ipset: 1, rtnl: 0 }, 'one IPVS batch of two messages, one ipset message, no dumps');
    t.ok(delta.ipvs + delta.ipset + delta.rtnl <= 4, 'at most 4 messages');
    t.match(r.netlink, { ipvs: { messagesSent: 2, sendmsgCalls: 1 }, ipset: { messagesSent: 1, sendmsgCalls: 1 }, rtnl: { messagesSent: 0, sendmsgCalls: 0 } }, 'the sync result reports the same traffic, with its sendmsg calls');
    await kernelMatches(t, top, ns, c.desired, 'after adding an endpoint');
  });

  await t.test('a removed idle TCP endpoint is quiesced, read back idle and deleted in the same sync', async (t) => {
    web.endpoints = web.endpoints.filter((e) => e.addresses[0] !== '10.244.2.20');
    const before = sent(c);
    c.upsertEndpointSlice(web);
    // 10.244.2.20 is remote: it was only in the ClusterIP virtual server (the ETP=Local NodePort has local endpoints).
    const r = await c.sync();
    const after = sent(c);
    t.match(r, { kind: 'incremental', planned: 2, applied: 2, failed: 0 }, 'weight 0 first (a count read while it can be scheduled is stale), then deleteDestination');
    t.notOk((await ipvsadmSave(ns)).some((l) => l.includes('10.244.2.20')), 'no real server left for it, not even at weight 0');
    t.same({ ipvs: after.ipvs - before.ipvs, ipset: after.ipset - before.ipset, rtnl: after.rtnl - before.rtnl }, { ipvs: 4, ipset: 0, rtnl: 0 }, "the weight-0 update, one read of that virtual server's destinations (GET_SERVICE + GET_DEST dump), one delete");
    t.match(r.netlink, { ipvs: { messagesSent: 4, sendmsgCalls: 2 }, ipset: { messagesSent: 0 }, rtnl: { messagesSent: 0 } }, 'reported by the sync: 4 messages in 2 sendmsg (the read rides with the update)');
    t.same(c.counters().lastSync, { kind: 'incremental', netlink: r.netlink }, 'and kept as the last sync for the metrics');
    t.match(await c.drain(), { kind: 'drain', planned: 0 }, 'nothing left to drain');
    await kernelMatches(t, top, ns, c.desired, 'after the removal');
  });

  await t.test('a changed port and a deleted service', async (t) => {
    const svc = serviceOf('web');
    svc.spec.ports![0].port = 8081;
    c.upsertService(svc);
    t.match(await c.sync(), { failed: 0 });
    const lines = await ipvsadmSave(ns);
    t.ok(lines.includes('-A -t 10.96.10.20:8081 -s rr'), 'the new port is served');
    t.notOk(lines.some((l) => l.includes('10.96.10.20:80 ')), 'the old one is gone');
    await kernelMatches(t, top, ns, c.desired, 'after a port change');

    c.deleteService(service('kube-dns', {}, undefined, 'kube-system'));
    t.match(await c.sync(), { failed: 0 });
    t.notOk((await ipvsadmSave(ns)).some((l) => l.includes('10.96.0.10')), 'kube-dns is gone');
    await kernelMatches(t, top, ns, c.desired, 'after a service deletion');
  });

  await t.test('resync repairs what was changed behind the controller', async (t) => {
    await ns.exec('ipvsadm', ['-D', '-t', '10.96.10.20:8081']);
    await ns.exec('ipvsadm', ['-e', '-t', '10.96.10.30:443', '-r', '10.244.3.30:8443', '-m', '-w', '0']);
    await ns.exec('ipset', ['del', 'KUBE-CLUSTER-IP', '10.96.10.30,tcp:443']);
    await ns.exec('ip', ['addr', 'del', '10.96.10.30/32', 'dev', 'kube-ipvs0']);
    await ns.exec('ip', ['addr', 'add', '10.96.99.99/32', 'dev', 'kube-ipvs0']);
    await ns.exec('iptables-legacy', ['-t', 'nat', '-D', 'OUTPUT', '-m', 'comment', '--comment', 'kubernetes service portals', '-j', 'KUBE-SERVICES']);
    t.equal((await c.sync()).planned, 0, 'an incremental sync does not read the kernel, so it sees no drift');
    const r = await c.resync();
    t.match(r, { kind: 'resync', failed: 0 }, 'the resync succeeds');
    t.ok(r.applied >= 6, 'it repaired each change (and rewrote the iptables chains)');
    await kernelMatches(t, top, ns, c.desired, 'after resync');
  });
});

t.test('a kube-ipvs0 that is no dummy link is used as it is, as upstream does', async (t) => {
  const ns = await nodeNetns(t);
  // Someone else's link of that name (one end of a veth pair, left down):
  // upstream's EnsureDummyDevice only looks the name up, and binds to what it finds.
  await ns.exec('ip', ['link', 'add', 'kube-ipvs0', 'type', 'veth', 'peer', 'name', 'kube-ipvs0-peer']);
  const c = await startController(t, ns, { config, node });
  for (const s of manifests.endpointSlices) c.upsertEndpointSlice(s);
  for (const s of manifests.services) c.upsertService(s);
  t.match(await c.sync(), { kind: 'full', failed: 0 }, 'the first sync succeeds');
  t.match(await c.resync(), { kind: 'resync', failed: 0 }, 'so does a resync, which reads the link again');
  const link = await ns.exec('ip', ['-d', '-o', 'link', 'show', 'dev', 'kube-ipvs0']);
  t.match(link, /\bveth\b/, 'ip -d link: still a veth');
  t.match(link, /state DOWN/, 'ip -d link: still down');
  t.same(await kubeIpvs0Addresses(ns), [...c.desired.boundAddresses].sort(), 'ip addr: it holds exactly the bound addresses');
  t.same(await ipvsadmSave(ns), expectedIpvsadm(c.desired).sort(), 'ipvsadm -Sn holds the plan');
});
