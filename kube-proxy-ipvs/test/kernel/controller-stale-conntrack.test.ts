/**
 * Stale UDP conntrack entries deleted by the controller within the sync
 * that makes them stale, as kube-proxy's conntrack cleanup does, where the
 * kernel's own cleanup is not there: the test holds
 * net.ipv4.vs.expire_nodest_conn at 0 (the kernel's default before Linux
 * 5.9, where deleting a real server leaves its entries), and reads the
 * table with the conntrack tool. Real datagrams through a ClusterIP make
 * the entries, one answered by each pod. (A datagram to a service without
 * endpoints leaves no entry here: IPVS drops it before conntrack confirms
 * one.) Each sync's report, given to the proxy's metrics, moves the
 * deleted-entries counter by what the table shows gone. A deleted UDP
 * Service's entries go in the sync that deletes it, and a pod's entries
 * to a port it no longer serves at go when the port changes.
 */
import t from 'tap';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { startController } from '../support/controller-kernel.js';
import { node } from '../support/demo-objects.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import type { Netns } from '../../../test/support/netns.js';
import { nodeWithPods, PODS, startUdpServer, udpRequest } from '../support/traffic.js';

const VIP = '10.96.100.51';
const DELETED = 'kubeproxy_conntrack_reconciler_deleted_entries_total{ip_family="IPv4"}';

const dns = service('dns', { type: 'ClusterIP', clusterIP: VIP, ports: [{ name: 'dns', protocol: 'UDP', port: 80, targetPort: 8080 }] });
const endpointsOf = (pods: Array<keyof typeof PODS>) =>
  slice('dns', pods.map((p) => endpoint(PODS[p], { node: 'node-b', ready: true })), [{ name: 'dns', protocol: 'UDP', port: 8080 }]);

/** The reply source port of each UDP entry to the service, as `conntrack -L` lists them. */
async function replyPorts(ns: Netns): Promise<string[]> {
  const out = await ns.exec('conntrack', ['-L', '-p', 'udp', '--orig-dst', VIP]).catch((err: { stdout?: string }) => err.stdout ?? '');
  return out.split('\n').filter((l) => l.includes(`dst=${VIP}`)).map((l) => l.match(/sport=(\d+)/g)![1].slice(6)).sort();
}

/** The reply source of each UDP entry to the service, as `conntrack -L` lists them. */
async function replySources(ns: Netns): Promise<string[]> {
  const out = await ns.exec('conntrack', ['-L', '-p', 'udp', '--orig-dst', VIP]).catch((err: { stdout?: string }) => err.stdout ?? '');
  return out.split('\n').filter((l) => l.includes(`dst=${VIP}`)).map((l) => l.match(/src=(\S+)/g)![1].slice(4)).sort();
}

t.test('stale UDP conntrack entries go in the sync that makes them stale', async (t) => {
  const { node: nodeNs, client, pods } = await nodeWithPods(t);
  await startUdpServer(t, pods.be1, 'be1');
  await startUdpServer(t, pods.be2, 'be2');
  const c = await startController(t, nodeNs, { config: defaultProxyConfig(), node });
  // The proxy's metrics, given each sync's cleanup as the proxy gives them.
  const metrics = new ProxyMetrics(() => undefined, { defaultMetrics: false });
  const counted = async () => Number((await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${DELETED} `))?.split(' ')[1] ?? 0);
  // A UDP entry with one reply lives 30 s by default, which a slow kernel's run of this test can outlast.
  await nodeNs.exec('sysctl', ['-qw', 'net.ipv4.vs.expire_nodest_conn=0', 'net.netfilter.nf_conntrack_udp_timeout=600']);

  c.upsertService(dns);
  c.upsertEndpointSlice(endpointsOf(['be1', 'be2']));
  const first = await c.sync();
  t.match(first, { failed: 0 }, 'the service, with two endpoints');
  metrics.conntrackReconciler.observe(first.staleConntrack);

  t.same([await udpRequest(client, VIP, 80), await udpRequest(client, VIP, 80)].sort(), ['be1', 'be2'], 'both pods answered');
  t.same(await replySources(nodeNs), [PODS.be1, PODS.be2], 'an entry to each pod');

  const before = (await replySources(nodeNs)).length;
  const countedBefore = await counted();
  c.upsertEndpointSlice(endpointsOf(['be2']));
  const r = await c.sync();
  metrics.conntrackReconciler.observe(r.staleConntrack);
  t.match(r.staleConntrack!.families, [{ family: 'inet', deleted: 1 }], 'per family: the IPv4 cleanup deleted one entry');
  t.equal(r.staleConntrack!.families.length, 1, 'no IPv6 cleanup: no IPv6 UDP service');
  t.ok(r.staleConntrack!.families[0].seconds > 0, 'and took some time');
  t.equal((await counted()) - countedBefore, before - (await replySources(nodeNs)).length, 'the deleted-entries counter moved by what conntrack -L shows gone');
  t.match(r, { kind: 'incremental', failed: 0, staleConntrack: { listed: 2, deleted: 1, failed: 0 } }, 'be1 leaves: two entries listed, one deleted');
  t.match(r.staleConntrack!.netlink, { messagesSent: 2, sendmsgCalls: 2 }, 'in two messages: the UDP dump and one delete');
  t.same(await replySources(nodeNs), [PODS.be2], 'be1\'s entry is deleted, be2\'s kept');
  t.equal(await nodeNs.exec('sysctl', ['-n', 'net.ipv4.vs.expire_nodest_conn']).then((s) => s.trim()), '0', 'with the kernel\'s own cleanup off all along');

  c.upsertEndpointSlice(endpointsOf([]));
  const none = await c.sync();
  metrics.conntrackReconciler.observe(none.staleConntrack);
  t.match(none, { kind: 'incremental', failed: 0, staleConntrack: { listed: 1, deleted: 1, failed: 0 } }, 'no endpoints left: be2\'s entry listed and deleted');
  t.same(await replySources(nodeNs), [], 'a service without endpoints keeps no entry to a pod that served it, as kube-proxy does');
  t.equal(await counted(), countedBefore + 2, 'the counter has both deletions');

  // The Service is deleted while a flow to a pod it had is live: that flow is stale too.
  c.upsertEndpointSlice(endpointsOf(['be1']));
  await c.sync();
  t.equal(await udpRequest(client, VIP, 80), 'be1', 'be1 serves again');
  t.same(await replySources(nodeNs), [PODS.be1], 'an entry to be1');
  c.deleteService(dns);
  const deleted = await c.sync();
  t.match(deleted, { kind: 'incremental', failed: 0, staleConntrack: { listed: 1, deleted: 1, failed: 0 } }, 'the Service deleted: its entry listed and deleted');
  t.same(await replySources(nodeNs), [], 'no entry to the deleted Service\'s address is left, as kube-proxy cleans a deleted UDP Service');
});

t.test('the port changes and the pod stays: its entries to the old port go, as kube-proxy judges them since 1.34', async (t) => {
  const { node: nodeNs, client, pods } = await nodeWithPods(t);
  await startUdpServer(t, pods.be1, 'be1');
  await startUdpServer(t, pods.be1, 'be1 at 8081', 8081);
  const c = await startController(t, nodeNs, { config: defaultProxyConfig(), node });
  await nodeNs.exec('sysctl', ['-qw', 'net.ipv4.vs.expire_nodest_conn=0', 'net.netfilter.nf_conntrack_udp_timeout=600']);
  c.upsertService(dns);
  c.upsertEndpointSlice(endpointsOf(['be1']));
  t.match(await c.sync(), { failed: 0 });
  t.equal(await udpRequest(client, VIP, 80), 'be1', 'be1 answers at 8080');
  t.same(await replyPorts(nodeNs), ['8080'], 'an entry answered from 8080');

  c.upsertEndpointSlice(slice('dns', [endpoint(PODS.be1, { node: 'node-b', ready: true })], [{ name: 'dns', protocol: 'UDP', port: 8081 }]));
  const moved = await c.sync();
  t.match(moved, { kind: 'incremental', failed: 0, staleConntrack: { listed: 1, deleted: 1, failed: 0 } }, 'the pod still serves, at another port: its entry is stale');
  t.same(await replyPorts(nodeNs), [], 'conntrack -L shows it gone');
  t.equal(await udpRequest(client, VIP, 80), 'be1 at 8081', 'and the service answers from the new port');
});
