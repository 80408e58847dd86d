/**
 * A restarted controller (a new instance) adopts the kernel: nothing is
 * flushed or re-added, an established connection keeps working, and a
 * real server a previous run left at weight 0 is served again.
 */
import t from 'tap';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { ipvsadmSave, kubeIpsets, kubeIpvs0Addresses, startController } from '../support/controller-kernel.js';
import { api, API_VIP, endpointsOf, node, web } from '../support/demo-objects.js';
import { nodeWithPods, openConnection, PODS } from '../support/traffic.js';

t.test('a restart interrupts nothing', async (t) => {
  const { node: nodeNs, client } = await nodeWithPods(t);
  const objects = () => [api, web];
  const slices = () => [endpointsOf('api', ['be1', 'be2']), endpointsOf('web', ['be1', 'be2'])];
  const config = defaultProxyConfig();

  const first = await startController(t, nodeNs, { config, node });
  for (const s of slices()) first.upsertEndpointSlice(s);
  for (const s of objects()) first.upsertService(s);
  t.match(await first.sync(), { failed: 0 }, 'the first instance programmed the services');
  const conn = await openConnection(t, client, API_VIP, 80);
  const pod = await conn.ask();
  t.ok(pod === 'be1' || pod === 'be2', `a connection is open to ${pod}`);
  first.close();

  // A leftover of an interrupted graceful termination (#92019): a wanted real server at weight 0.
  await nodeNs.exec('ipvsadm', ['-e', '-t', `${API_VIP}:80`, '-r', `${PODS.be2}:8080`, '-m', '-w', '0']);
  const before = { ipvsadm: await ipvsadmSave(nodeNs), ipsets: await kubeIpsets(nodeNs), addresses: await kubeIpvs0Addresses(nodeNs) };

  const second = await startController(t, nodeNs, { config, node });
  const found = before.ipvsadm.filter((l) => l.startsWith('-A ')).length;
  // api's ClusterIP, web's ClusterIP, and web's NodePort on each of the node's three interface addresses.
  t.equal(found, 5, 'the first instance programmed five virtual servers');
  t.equal(second.counters().virtualServers, found, 'start() adopted every virtual server it found');
  t.same(await ipvsadmSave(nodeNs), before.ipvsadm, 'start() changed nothing');
  for (const s of slices()) second.upsertEndpointSlice(s);
  for (const s of objects()) second.upsertService(s);
  const r = await second.sync();
  t.match(r, { kind: 'full', failed: 0 }, 'the first sync after the restart is a full one');
  const ops = second.counters().operations;
  t.same(
    { ipvs: ops.ipvs.ok, ipset: ops.ipset.ok, address: ops.address.ok },
    { ipvs: 1, ipset: 0, address: 0 },
    'the only netlink change is the weight reset: no virtual server, set entry or address was removed or re-added',
  );
  t.same(
    await ipvsadmSave(nodeNs),
    before.ipvsadm.map((l) => (l.includes(`${PODS.be2}:8080`) && l.includes(API_VIP) ? l.replace('-w 0', '-w 1') : l)),
    'ipvsadm shows the same services, the leftover back at weight 1',
  );
  t.same(await kubeIpsets(nodeNs), before.ipsets, 'the sets are unchanged');
  t.same(await kubeIpvs0Addresses(nodeNs), before.addresses, 'the bound addresses are unchanged');
  t.equal(await conn.ask(), pod, 'the established connection still works');
  await conn.close();
});
