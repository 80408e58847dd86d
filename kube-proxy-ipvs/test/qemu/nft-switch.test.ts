/**
 * Switching the rules backend in the QEMU kernel (IPVS and nf_tables
 * together), through the controller: from iptables to nftables no KUBE-*
 * chain, jump or ipset is left (iptables-save of both flavours, ipset
 * list), and back no table of ours (nft list tables); traffic through a
 * NodePort works after each switch. A start of either also removes what
 * kube-proxy's nftables mode left (its ip kube-proxy table, whose stale
 * DNAT would catch the NodePort), as upstream's IPVS mode does.
 */
import t from 'tap';
import { defaultProxyConfig, type NodeInfo, type ProxyConfig } from '../../lib/kubernetes/model.js';
import { Controller } from '../../lib/kernel/controller.js';
import type { TapLike } from '../../../test/support/connection.js';
import type { Netns } from '../../../test/support/netns.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { iptablesLeftovers, NODE_IP, nftCluster, nftTables, PODS, whoMany } from './nft-support.js';

const node: NodeInfo = { name: 'node-a', addresses: [NODE_IP], families: ['inet'] };
const nft = (o: Partial<ProxyConfig> = {}) => defaultProxyConfig({ rulesBackend: 'nftables', ...o });
const web = service('web', { type: 'NodePort', clusterIP: '10.96.100.20', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }] });
const webSlice = slice('web', (['be1', 'be2'] as const).map((p) => endpoint(PODS[p], { node: p === 'be1' ? 'node-a' : 'node-b', ready: true })), [{ name: 'http', protocol: 'TCP', port: 8080 }]);
const both = ['be1 from 10.244.1.1', 'be2 from 10.244.2.1'];

/** Under emulation a test takes minutes, far past tap's default of 30 s. */
const slow = { timeout: 1_500_000 };
t.setTimeout(3_000_000);

async function controller(t: TapLike, ns: Netns, config: ProxyConfig): Promise<Controller> {
  const c = new Controller({ config, node, netns: ns.path });
  t.teardown(() => c.close());
  await c.start();
  c.upsertService(web);
  c.upsertEndpointSlice(webSlice);
  return c;
}

t.test('switching backends leaves nothing of the other', slow, async (t) => {
  const { node: nodeNs, client } = await nftCluster(t);
  // kube-proxy's nftables mode ran here before: its table sends the NodePort to a pod long gone.
  await nodeNs.exec('nft', ['-f', '-'], 'table ip kube-proxy {\n chain nat-prerouting {\n  type nat hook prerouting priority dstnat\n  tcp dport 30080 dnat to 10.244.9.9:8080\n }\n}\n');
  const ipt = await controller(t, nodeNs, defaultProxyConfig());
  t.notOk((await nftTables(nodeNs)).includes('ip kube-proxy'), "the nftables mode's table is gone");
  t.match(await ipt.sync(), { failed: 0 }, 'the iptables backend');
  t.ok((await iptablesLeftovers(nodeNs)).length > 10, 'KUBE-* chains and ipsets');
  await ipt.close();

  const n = await controller(t, nodeNs, nft());
  t.match(await n.sync(), { failed: 0 }, 'then the nftables backend');
  t.same(await iptablesLeftovers(nodeNs), [], 'no KUBE-* chain, jump or ipset is left');
  t.same(await whoMany(client, `${NODE_IP}:30080`, 4), both, 'the NodePort, masqueraded');
  await n.close();

  const back = await controller(t, nodeNs, defaultProxyConfig());
  t.match(await back.sync(), { failed: 0 }, 'and back to iptables');
  t.same(await nftTables(nodeNs).then((x) => x.filter((name) => name.includes('kube-proxy-ipvs'))), [], 'our table is gone');
  t.same(await whoMany(client, `${NODE_IP}:30080`, 4), both, 'the NodePort, masqueraded');
});
