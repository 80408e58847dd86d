/**
 * The nftables rules backend with real packets, in the QEMU kernel (IPVS
 * and nf_tables together), through the controller: what the iptables
 * path's traffic tests check (controller-traffic, proxy-traffic,
 * controller-programming, proxy-restart, proxy-cleanup), against what nft,
 * iptables-save and ipset show.
 *
 * - ClusterIP, NodePort, LoadBalancer and externalIP reach both pods;
 *   masquerade where kube-proxy masquerades (the node's own traffic,
 *   NodePorts, external paths with ETP=Cluster, hairpin), the client's
 *   address kept where it does not (ClusterIP from outside the pod CIDR
 *   without --cluster-cidr, ETP=Local); masqueradeAll and clusterCIDR;
 * - the IPVS filter keeps a host service off the VIPs; load balancer
 *   source ranges let the allowed client and the node in and keep the
 *   others (the node too, once outside the ranges) out;
 * - a change is element adds and deletes (every rule handle stays); a
 *   restart adopts the table (no transaction at all); a changed
 *   configuration makes it whole in one transaction;
 * - cleanup removes the table; no KUBE-* iptables chain or ipset exists
 *   at any point (nft-switch.test.ts switches between the backends).
 */
import t from 'tap';
import type { TapLike } from '../../../test/support/connection.js';
import { defaultProxyConfig, type NodeInfo, type ProxyConfig } from '../../lib/kubernetes/model.js';
import { Controller } from '../../lib/kernel/controller.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import type { Netns } from '../../../test/support/netns.js';
import { CLIENT_IP, httpd, iptablesLeftovers, NODE_IP, nftCluster, nftSet, nftTables, PODS, ruleHandles, who, whoMany } from './nft-support.js';

const node: NodeInfo = { name: 'node-a', addresses: [NODE_IP], families: ['inet'] };
const nft = (o: Partial<ProxyConfig> = {}) => defaultProxyConfig({ rulesBackend: 'nftables', ...o });
const port80 = [{ name: 'http', protocol: 'TCP' as const, port: 80, targetPort: 8080 }];

const api = service('api', { type: 'ClusterIP', clusterIP: '10.96.100.10', ports: port80 });
const web = service('web', { type: 'NodePort', clusterIP: '10.96.100.20', externalIPs: ['198.51.100.20'], ports: [{ ...port80[0], nodePort: 30080 }] });
const lb = (ranges?: string[]) =>
  service('lb', { type: 'LoadBalancer', clusterIP: '10.96.100.30', ...(ranges ? { loadBalancerSourceRanges: ranges } : {}), ports: [{ ...port80[0], nodePort: 30081 }] }, { loadBalancer: { ingress: [{ ip: '203.0.113.30' }] } });
const local = service('local', { type: 'LoadBalancer', clusterIP: '10.96.100.40', externalTrafficPolicy: 'Local', healthCheckNodePort: 32001, ports: [{ ...port80[0], nodePort: 30082 }] }, { loadBalancer: { ingress: [{ ip: '203.0.113.40' }] } });
/** be1 runs on this node (node-a), be2 on another. */
const endpointsOf = (name: string, pods: Array<keyof typeof PODS>) =>
  slice(name, pods.map((p) => endpoint(PODS[p], { node: p === 'be1' ? 'node-a' : 'node-b', ready: true })), [{ name: 'http', protocol: 'TCP', port: 8080 }]);

async function controller(t: TapLike, ns: Netns, config: ProxyConfig, withLb: Parameters<typeof lb>[0] = undefined): Promise<Controller> {
  const c = new Controller({ config, node, netns: ns.path });
  t.teardown(() => c.close());
  await c.start();
  for (const s of [api, web, lb(withLb), local]) c.upsertService(s);
  for (const name of ['api', 'web', 'lb']) c.upsertEndpointSlice(endpointsOf(name, ['be1', 'be2']));
  c.upsertEndpointSlice(endpointsOf('local', ['be1', 'be2']));
  return c;
}

/** Under emulation a test takes minutes, far past tap's default of 30 s (the file's, and each subtest's). */
const slow = { timeout: 1_500_000 };
t.setTimeout(3_000_000);

const both = (from: string) => [`be1 from ${from === 'pod' ? '10.244.1.1' : from}`, `be2 from ${from === 'pod' ? '10.244.2.1' : from}`];

t.test('traffic through the nftables backend', slow, async (t) => {
  const { node: nodeNs, client, pods } = await nftCluster(t);
  const c = await controller(t, nodeNs, nft(), [`${NODE_IP}/30`]);
  t.match(await c.sync(), { kind: 'full', failed: 0 }, 'programmed');

  t.same(await nftTables(nodeNs).then((x) => x.filter((name) => name.includes('kube-proxy-ipvs'))), ['ip kube-proxy-ipvs'], 'one table (IPv4 served)');
  t.same(await iptablesLeftovers(nodeNs), [], 'no KUBE-* iptables chain, no ipset');
  t.same(await nftSet(nodeNs, 'ip', 'cluster-ip'), ['10.96.100.10', '10.96.100.20', '10.96.100.30', '10.96.100.40'].map((a) => JSON.stringify({ concat: [a, 'tcp', 80] })).sort());
  t.same(await nftSet(nodeNs, 'ip', 'node-port-tcp'), ['30080', '30081', '30082']);
  t.same(await nftSet(nodeNs, 'ip', 'node-port-local-tcp'), ['30082']);
  t.same(await nftSet(nodeNs, 'ip', 'load-balancer-local'), [JSON.stringify({ concat: ['203.0.113.40', 'tcp', 80] })]);

  await t.test('every way in reaches the pods, masqueraded exactly where kube-proxy masquerades', slow, async (t) => {
    t.same(await whoMany(client, '10.96.100.10', 6), both(CLIENT_IP), 'ClusterIP from outside the pods: both, the client address kept (no cluster CIDR given)');
    t.same(await whoMany(nodeNs, '10.96.100.10', 6), both('pod'), 'ClusterIP from the node: masqueraded (its source is a VIP)');
    t.same(await whoMany(client, `${NODE_IP}:30080`, 6), both('pod'), 'NodePort: masqueraded');
    t.same(await whoMany(client, '198.51.100.20', 6), both('pod'), 'externalIP: masqueraded');
    t.same(await whoMany(client, '203.0.113.40', 4), [`be1 from ${CLIENT_IP}`], 'LoadBalancer ETP=Local: only the local pod, which sees the client');
    t.same(await whoMany(client, `${NODE_IP}:30082`, 4), [`be1 from ${CLIENT_IP}`], 'NodePort ETP=Local: the same');
    t.same(await whoMany(pods.be1, '10.96.100.40', 6), ['be1 from 10.244.1.1', `be2 from ${PODS.be1}`], 'hairpin: a pod reaching itself through a VIP is masqueraded (loop-back), the other pod sees it');
  });

  await t.test('the IPVS filter and the source ranges', slow, async (t) => {
    await httpd(t, nodeNs, 'host', 9090);
    t.equal(await who(client, `${NODE_IP}:9090`), `host from ${CLIENT_IP}`, 'a host service on the node address');
    t.equal(await who(client, '10.96.100.10:9090'), 7, 'the same port on a ClusterIP is rejected (KUBE-IPVS-FILTER)');
    t.same(await whoMany(client, '203.0.113.30', 4), both('pod'), 'LB with source ranges: the client inside them gets in');
    t.same(await whoMany(nodeNs, '203.0.113.30', 4), both('pod'), 'and the node, inside them too');
    c.upsertService(lb(['198.51.100.0/24']));
    const before = await ruleHandles(nodeNs);
    t.match(await c.sync(), { kind: 'incremental', failed: 0 });
    t.equal(await ruleHandles(nodeNs), before, 'element changes only: every rule handle stays');
    t.same(await nftSet(nodeNs, 'ip', 'load-balancer-out-drop'), [JSON.stringify({ concat: ['203.0.113.30', '203.0.113.30', 'tcp', 80] })]);
    t.equal(await who(client, '203.0.113.30'), 28, 'a client outside the ranges is dropped');
    t.equal(await who(nodeNs, '203.0.113.30'), 28, 'so is the node (KUBE-IPVS-OUT-FILTER)');
  });

  await t.test('an endpoint leaves and comes back: elements, not rules', slow, async (t) => {
    const before = await ruleHandles(nodeNs);
    c.upsertEndpointSlice(endpointsOf('api', ['be2']));
    t.match(await c.sync(), { kind: 'incremental', failed: 0 });
    t.same(await nftSet(nodeNs, 'ip', 'loop-back'), [JSON.stringify({ concat: [PODS.be1, 'tcp', 8080, PODS.be1] })], 'loop-back still lists be1, an endpoint of the other services');
    t.same(await whoMany(client, '10.96.100.10', 4), [`be2 from ${CLIENT_IP}`]);
    c.deleteService(local);
    t.match(await c.sync(), { kind: 'incremental', failed: 0 });
    t.same(await nftSet(nodeNs, 'ip', 'node-port-local-tcp'), [], 'the Local NodePort is gone');
    t.same(await nftSet(nodeNs, 'ip', 'load-balancer-local'), []);
    t.equal(await ruleHandles(nodeNs), before);
  });

  await t.test('a restart adopts the table: no transaction at all', slow, async (t) => {
    await c.close();
    const ruleset = await nodeNs.exec('nft', ['-j', 'list', 'ruleset']);
    const handles = await ruleHandles(nodeNs);
    const again = new Controller({ config: nft(), node, netns: nodeNs.path });
    t.teardown(() => again.close());
    await again.start();
    for (const s of [api, web, lb(['198.51.100.0/24'])]) again.upsertService(s);
    again.upsertEndpointSlice(endpointsOf('api', ['be2']));
    for (const name of ['web', 'lb']) again.upsertEndpointSlice(endpointsOf(name, ['be1', 'be2']));
    t.match(await again.sync(), { kind: 'full', failed: 0, planned: 0 }, 'nothing to do');
    t.equal(await ruleHandles(nodeNs), handles, 'the same rules');
    t.equal(await nodeNs.exec('nft', ['-j', 'list', 'ruleset']), ruleset, 'the same ruleset, handles and elements');
    t.same(await whoMany(client, `${NODE_IP}:30080`, 4), both('pod'));

    // Another configuration: the table is made whole in one transaction, and masqueradeAll masquerades the client too.
    await again.close();
    const all = new Controller({ config: nft({ masqueradeAll: true }), node, netns: nodeNs.path });
    t.teardown(() => all.close());
    await all.start();
    all.upsertService(api);
    all.upsertEndpointSlice(endpointsOf('api', ['be1', 'be2']));
    t.match(await all.sync(), { kind: 'full', failed: 0 });
    t.match(await nodeNs.exec('nft', ['list', 'chain', 'ip', 'kube-proxy-ipvs', 'services']), /\n\s*ip daddr \. meta l4proto \. th dport @cluster-ip jump mark-for-masquerade\n/, 'rebuilt with the masqueradeAll rule');
    t.same(await whoMany(client, '10.96.100.10', 6), both('pod'), 'masqueradeAll: the client is masqueraded');
    const cidr = new Controller({ config: nft({ clusterCIDRs: ['10.244.0.0/16'] }), node, netns: nodeNs.path });
    await all.close();
    t.teardown(() => cidr.close());
    await cidr.start();
    cidr.upsertService(api);
    cidr.upsertEndpointSlice(endpointsOf('api', ['be1', 'be2']));
    t.match(await cidr.sync(), { failed: 0 });
    t.same(await whoMany(client, '10.96.100.10', 6), both('pod'), 'clusterCIDR: from outside it, masqueraded');
    t.same(await whoMany(pods.be2, '10.96.100.10', 8).then((a) => a.filter((x) => String(x).startsWith('be1'))), [`be1 from ${PODS.be2}`], 'from a pod inside it: not');

    await cidr.cleanup();
    t.same(await nftTables(nodeNs).then((x) => x.filter((name) => name.includes('kube-proxy-ipvs'))), [], 'cleanup removes the table');
    t.type(await who(client, '10.96.100.10'), 'number', 'nothing answers');
  });
});
