/**
 * Real packets through services the controller programmed: a client
 * namespace reaches a ClusterIP and a NodePort, requests spread over pods
 * in other namespaces, and an established connection survives the removal
 * of its endpoint (weight 0) while new connections go elsewhere.
 */
import t from 'tap';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { ipvsadmSave, startController } from '../support/controller-kernel.js';
import { api, API_VIP, endpointsOf, node, NODE_PORT, web } from '../support/demo-objects.js';
import { nodeWithPods, NODE_IP, openConnection, PODS, requests } from '../support/traffic.js';

const count = (answers: string[], name: string) => answers.filter((a) => a === name).length;

t.test('traffic through the controller', async (t) => {
  const { node: nodeNs, client } = await nodeWithPods(t);
  const c = await startController(t, nodeNs, { config: defaultProxyConfig(), node });
  c.upsertService(api);
  c.upsertService(web);
  c.upsertEndpointSlice(endpointsOf('api', ['be1', 'be2']));
  c.upsertEndpointSlice(endpointsOf('web', ['be1', 'be2']));
  t.match(await c.sync(), { failed: 0 }, 'programmed');

  await t.test('a ClusterIP and a NodePort spread requests over both pods', async (t) => {
    for (const url of [`http://${API_VIP}:80/`, `http://${NODE_IP}:${NODE_PORT}/`]) {
      const answers = await requests(client, url, 6);
      t.same(answers.filter((a) => a !== 'be1' && a !== 'be2'), [], `${url}: every request was answered by a pod`);
      // Round robin, one new connection per request.
      t.equal(count(answers, 'be1'), 3, `${url}: be1 answered half`);
      t.equal(count(answers, 'be2'), 3, `${url}: be2 answered half`);
    }
  });

  await t.test('an established connection outlives its endpoint; new ones go elsewhere', async (t) => {
    const conn = await openConnection(t, client, API_VIP, 80);
    const first = await conn.ask();
    t.ok(first === 'be1' || first === 'be2', `the connection reached a pod (${first})`);
    // Everything after depends on which pod answered.
    if (first !== 'be1' && first !== 'be2') return;
    const other = first === 'be1' ? 'be2' : 'be1';

    c.upsertEndpointSlice(endpointsOf('api', [other]));
    t.match(await c.sync(), { kind: 'incremental', planned: 1, failed: 0 }, 'one operation: the real server goes to weight 0');
    t.ok((await ipvsadmSave(nodeNs)).includes(`-a -t ${API_VIP}:80 -r ${PODS[first]}:8080 -m -w 0`), 'ipvsadm shows it at weight 0');

    t.equal(await conn.ask(), first, 'the established connection still reaches its pod');
    const fresh = await requests(client, `http://${API_VIP}:80/`, 4);
    t.same(fresh, Array(4).fill(other), 'every new connection goes to the remaining pod');
    t.equal(await conn.ask(), first, 'and the old connection still works after them');

    t.match(await c.drain(), { planned: 0 }, 'the drain pass keeps a real server that still has a connection');
    t.ok((await ipvsadmSave(nodeNs)).includes(`-a -t ${API_VIP}:80 -r ${PODS[first]}:8080 -m -w 0`), 'it is still there');
    await conn.close();
  });
});
