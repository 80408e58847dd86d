/**
 * What syncs cost, counted on the netlink sockets (counters()): a periodic
 * resync with nothing changed reads a fixed set of things and writes
 * nothing; one endpoint added costs the same few messages with 20 and with
 * 2,000 services programmed.
 */
import t, { type Test } from 'tap';

import type { Controller } from '../../lib/kernel/controller.js';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import type { SocketCounters } from 'ipvs-netlink';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { freshNetns } from '../../../test/support/netns.js';
import { startController } from '../support/controller-kernel.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };
const SETS = 17; // kube-proxy's IPv4 sets, all created (empty or not)

const clusterIP = (i: number) => `10.96.${i >> 8}.${i & 255}`;
const svc = (i: number) => service(`svc-${i}`, { clusterIP: clusterIP(i), ports: [{ name: 'p', protocol: 'TCP', port: 80, targetPort: 8080 }] });
const eps = (i: number, n = 1) =>
  slice(`svc-${i}`, Array.from({ length: n }, (_, k) => endpoint(`10.${100 + k}.${i >> 8}.${i & 255}`, { node: 'node-b', ready: true })), [{ name: 'p', protocol: 'TCP', port: 8080 }]);

type Family = 'ipvs' | 'ipset' | 'rtnl';
type Cost = Record<Family, { messages: number; sendmsg: number }>;

function snapshot(c: Controller): Record<Family, SocketCounters> {
  const n = c.counters().netlink;
  return { ipvs: { ...n.ipvs! }, ipset: { ...n.ipset! }, rtnl: { ...n.rtnl! } };
}

async function cost(c: Controller, fn: () => Promise<unknown>): Promise<Cost> {
  const before = snapshot(c);
  await fn();
  const after = snapshot(c);
  const d = (f: Family) => ({ messages: after[f].messagesSent - before[f].messagesSent, sendmsg: after[f].sendmsgCalls - before[f].sendmsgCalls });
  return { ipvs: d('ipvs'), ipset: d('ipset'), rtnl: d('rtnl') };
}

function writes(c: Controller) {
  const o = c.counters().operations;
  return o.ipvs.ok + o.ipvs.failed + o.ipset.ok + o.ipset.failed + o.address.ok + o.address.failed + o.iptables.ok + o.iptables.failed;
}

t.test('read cost and size independence', async (t) => {
  const ns = await freshNetns(t, 'cost');
  await ns.exec('ip', ['link', 'add', 'eth0', 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', 'eth0', 'up']);
  await ns.exec('ip', ['addr', 'add', '192.168.1.10/24', 'dev', 'eth0']);
  const c = await startController(t, ns, { config: defaultProxyConfig(), node });
  const add = (from: number, to: number) => {
    for (let i = from; i <= to; i++) {
      c.upsertService(svc(i));
      c.upsertEndpointSlice(eps(i));
    }
  };

  add(1, 20);
  t.match(await c.sync(), { kind: 'full', failed: 0 });

  const resyncAt = async (t: Test, services: number) => {
    const written = writes(c);
    let result: Awaited<ReturnType<Controller['resync']>> | undefined;
    const spent = await cost(c, async () => (result = await c.resync()));
    t.match(result, { kind: 'resync', planned: 0, applied: 0, failed: 0 }, 'nothing to repair');
    t.equal(writes(c), written, 'nothing written: no IPVS, ipset, address or iptables operation');
    // A netlink socket runs one dump at a time (the kernel answers EBUSY to a second), so each dump is its own sendmsg.
    t.same(spent.ipvs, { messages: 1 + services, sendmsg: 1 + services }, `IPVS: one service dump and one destination dump per service (${services})`);
    t.same(spent.ipset, { messages: 1 + SETS, sendmsg: 1 + SETS }, 'ipset: the name list and one list per owned set');
    t.same(spent.rtnl, { messages: 2, sendmsg: 1 }, 'rtnetlink: the kube-ipvs0 lookup and one address dump, together');
  };

  await t.test('a resync with nothing changed, 20 services', (t) => resyncAt(t, 20));

  const endpointAdded = async (t: Test, i: number): Promise<Cost> => {
    let result: Awaited<ReturnType<Controller['sync']>> | undefined;
    const spent = await cost(c, async () => {
      c.upsertEndpointSlice(eps(i, 2));
      result = await c.sync();
    });
    t.match(result, { kind: 'incremental', planned: 1, applied: 1, failed: 0 }, 'one operation');
    t.ok((await ns.exec('ipvsadm', ['-Ln', '-t', `${clusterIP(i)}:80`])).includes(`10.101.${i >> 8}.${i & 255}:8080`), 'the real server is there');
    return spent;
  };

  let small: Cost | undefined;
  await t.test('one endpoint added, 20 services', async (t) => {
    small = await endpointAdded(t, 7);
    t.same(small, { ipvs: { messages: 1, sendmsg: 1 }, ipset: { messages: 0, sendmsg: 0 }, rtnl: { messages: 0, sendmsg: 0 } }, 'one IPVS message, nothing else');
  });

  add(21, 2000);
  const big = await c.sync();
  t.match(big, { kind: 'incremental', failed: 0 }, '1,980 more services programmed');
  t.equal(c.counters().virtualServers, 2000);

  await t.test('one endpoint added, 2,000 services: the same cost', async (t) => {
    t.same(await endpointAdded(t, 1500), small, 'exactly the messages and sendmsg calls it cost with 20 services');
  });

  await t.test('a resync with nothing changed, 2,000 services', (t) => resyncAt(t, 2000));
});
