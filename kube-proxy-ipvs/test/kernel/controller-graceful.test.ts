/**
 * Graceful termination as kube-proxy's GracefulDeleteRS, with real
 * connections through the controller's services: a leaving UDP real server
 * is deleted at once; a TCP one goes to weight 0 first, its connections are
 * read in the same batch, and it is deleted at once when it has none (read
 * at weight 0, the count cannot be overtaken by a new connection). One with
 * an established connection stays at weight 0, keeps serving it while new
 * connections go elsewhere, comes back to weight 1 if its endpoint
 * returns, and is deleted by the drain pass once the connection is gone.
 */
import t from 'tap';
import type { Controller } from '../../lib/kernel/controller.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { ipvsadmSave, startController } from '../support/controller-kernel.js';
import { node } from '../support/demo-objects.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import type { Netns } from '../../../test/support/netns.js';
import { nodeWithPods, openConnection, PODS, requests, startUdpServer, udpRequest } from '../support/traffic.js';

type Pod = keyof typeof PODS;

function clusterIP(name: string, vip: string, protocol: 'TCP' | 'UDP' = 'TCP') {
  return service(name, { type: 'ClusterIP', clusterIP: vip, ports: [{ name: 'p', protocol, port: 80, targetPort: 8080 }] });
}

function endpointsOf(name: string, pods: Pod[], protocol: 'TCP' | 'UDP' = 'TCP') {
  return slice(name, pods.map((p) => endpoint(PODS[p], { node: 'node-b', ready: true })), [{ name: 'p', protocol, port: 8080 }]);
}

/** ActiveConn + InActConn of a real server, as `ipvsadm -Ln` prints them; undefined when it is not there. */
async function connections(ns: Netns, flag: '-t' | '-u', vip: string, pod: Pod): Promise<number | undefined> {
  const out = await ns.exec('ipvsadm', ['-Ln', flag, `${vip}:80`]);
  const line = out.split('\n').find((l) => l.includes(`-> ${PODS[pod]}:8080`));
  if (!line) return undefined;
  const [, , , , active, inactive] = line.trim().split(/\s+/); // -> address Masq weight active inactive
  return Number(active) + Number(inactive);
}

function ipvsSent(c: Controller): number {
  return c.counters().netlink.ipvs!.messagesSent;
}

t.test('graceful termination with real connections', async (t) => {
  const { node: nodeNs, client, pods } = await nodeWithPods(t);
  await startUdpServer(t, pods.be1, 'be1');
  await startUdpServer(t, pods.be2, 'be2');
  const c = await startController(t, nodeNs, { config: defaultProxyConfig(), node });

  await t.test('an idle TCP real server is quiesced and deleted in the same sync; one with (inactive) connections stays at weight 0', async (t) => {
    const vip = '10.96.100.31';
    c.upsertService(clusterIP('idle', vip));
    c.upsertEndpointSlice(endpointsOf('idle', ['be1']));
    t.match(await c.sync(), { failed: 0 });
    t.same(await requests(client, `http://${vip}/`, 2), ['be1', 'be1'], 'be1 served two requests');
    c.upsertEndpointSlice(endpointsOf('idle', ['be1', 'be2']));
    t.match(await c.sync(), { planned: 1, failed: 0 }, 'be2 added');
    t.equal(await connections(nodeNs, '-t', vip, 'be2'), 0, 'be2 has had no connection');
    t.ok((await connections(nodeNs, '-t', vip, 'be1'))! > 0, 'be1 has connections (closed ones linger in TIME_WAIT)');

    let before = ipvsSent(c);
    c.upsertEndpointSlice(endpointsOf('idle', ['be1']));
    t.match(await c.sync(), { kind: 'incremental', planned: 2, applied: 2, failed: 0 }, 'weight 0, then the delete');
    t.equal(ipvsSent(c) - before, 4, 'the weight change with a read of that virtual server behind it (GET_SERVICE + GET_DEST dump), then one delete');
    t.notOk((await ipvsadmSave(nodeNs)).some((l) => l.includes(`${vip}:80 -r ${PODS.be2}`)), 'be2 is deleted at once, not left at weight 0');

    before = ipvsSent(c);
    c.upsertEndpointSlice(endpointsOf('idle', []));
    t.match(await c.sync(), { planned: 1, applied: 1, failed: 0 });
    t.equal(ipvsSent(c) - before, 3, 'the weight change and the same read; no delete');
    t.ok((await ipvsadmSave(nodeNs)).includes(`-a -t ${vip}:80 -r ${PODS.be1}:8080 -m -w 0`), 'be1, with connections, stays at weight 0');
  });

  await t.test('a UDP real server is deleted at once even with connections, without reading anything', async (t) => {
    const vip = '10.96.100.53';
    c.upsertService(clusterIP('dns', vip, 'UDP'));
    c.upsertEndpointSlice(endpointsOf('dns', ['be1', 'be2'], 'UDP'));
    t.match(await c.sync(), { failed: 0 });
    const answers = [await udpRequest(client, vip, 80), await udpRequest(client, vip, 80)];
    t.same(answers.sort(), ['be1', 'be2'], 'both pods answered over UDP');
    t.ok((await connections(nodeNs, '-u', vip, 'be1'))! > 0, 'be1 has a UDP connection');

    const before = ipvsSent(c);
    c.upsertEndpointSlice(endpointsOf('dns', ['be2'], 'UDP'));
    t.match(await c.sync(), { planned: 1, applied: 1, failed: 0 });
    t.equal(ipvsSent(c) - before, 1, 'one delete, no read');
    const lines = await ipvsadmSave(nodeNs);
    t.notOk(lines.some((l) => l.includes(`${vip}:80 -r ${PODS.be1}`)), 'be1 is gone');
    t.ok(lines.includes(`-a -u ${vip}:80 -r ${PODS.be2}:8080 -m -w 1`), 'be2 stays');
    t.same([await udpRequest(client, vip, 80), await udpRequest(client, vip, 80)], ['be2', 'be2'], 'new datagrams go to be2');
  });

  await t.test('an established TCP connection: weight 0, still served; its endpoint returns (weight 1) and leaves again; deleted once it is gone', async (t) => {
    const vip = '10.96.100.41';
    c.upsertService(clusterIP('busy', vip));
    c.upsertEndpointSlice(endpointsOf('busy', ['be1', 'be2']));
    t.match(await c.sync(), { failed: 0 });
    const conn = await openConnection(t, client, vip, 80);
    const first = (await conn.ask()) as Pod;
    t.ok(first === 'be1' || first === 'be2', `the connection reached ${first}`);
    const other: Pod = first === 'be1' ? 'be2' : 'be1';
    const draining = `-a -t ${vip}:80 -r ${PODS[first]}:8080 -m -w 0`;

    c.upsertEndpointSlice(endpointsOf('busy', [other]));
    t.match(await c.sync(), { planned: 1, applied: 1, failed: 0 }, 'one operation');
    t.ok((await ipvsadmSave(nodeNs)).includes(draining), `${first} is at weight 0`);
    t.equal(await conn.ask(), first, 'the established connection still reaches it');
    t.same(await requests(client, `http://${vip}/`, 3), [other, other, other], 'new connections go elsewhere');
    t.match(await c.drain(), { kind: 'drain', planned: 0 }, 'the drain pass keeps it while it has connections');

    c.upsertEndpointSlice(endpointsOf('busy', ['be1', 'be2']));
    t.match(await c.sync(), { planned: 1, applied: 1, failed: 0 });
    t.ok((await ipvsadmSave(nodeNs)).includes(`-a -t ${vip}:80 -r ${PODS[first]}:8080 -m -w 1`), 'its endpoint came back: weight 1 again');
    t.equal(await conn.ask(), first, 'the connection never noticed');

    c.upsertEndpointSlice(endpointsOf('busy', [other]));
    t.match(await c.sync(), { planned: 1, failed: 0 });
    t.ok((await ipvsadmSave(nodeNs)).includes(draining), 'removed again: weight 0 again');

    // RST: IPVS moves the connection to CLOSE (10 s), after which the counts reach 0.
    await conn.reset();
    let deleted = false;
    for (let i = 0; i < 30 && !deleted; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      const r = await c.drain();
      deleted = r.applied === 1;
    }
    t.ok(deleted, 'a drain pass deleted it once the connection had expired');
    t.notOk((await ipvsadmSave(nodeNs)).some((l) => l.includes(`${vip}:80 -r ${PODS[first]}`)), 'ipvsadm no longer shows it');
  });
});
