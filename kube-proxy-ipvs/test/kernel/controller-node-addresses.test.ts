/**
 * NodePort addresses and "already local" as kube-proxy's IPVS mode takes
 * them: every address on the node's interfaces except kube-ipvs0's (no
 * loopback, no IPv6 link-local), read with one rtnetlink dump at start and
 * at every resync, whatever the number of interfaces.
 */
import t from 'tap';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { Rtnl } from 'ipvs-netlink';
import { ipvsadmSave, kernelMatches, kubeIpvs0Addresses, startController } from '../support/controller-kernel.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { freshNetns, type Netns } from '../../../test/support/netns.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };

async function dummy(ns: Netns, name: string, ...addresses: string[]): Promise<void> {
  await ns.exec('ip', ['link', 'add', name, 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', name, 'up']);
  for (const a of addresses) await ns.exec('ip', ['addr', 'add', a, 'dev', name, ...(a.includes(':') ? ['nodad'] : [])]);
}

/** `ip -o addr show` as "device address" lines, sorted. */
async function ipAddrs(ns: Netns): Promise<string[]> {
  return (await ns.exec('ip', ['-o', 'addr', 'show']))
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [, dev, , cidr] = l.trim().split(/\s+/);
      return `${dev} ${cidr.split('/')[0]}`;
    })
    .sort();
}

const web = service('web', {
  type: 'NodePort',
  clusterIP: '10.96.0.20',
  // One externalIP that is on eth1 (not bound to kube-ipvs0), one that is not local.
  externalIPs: ['10.0.0.10', '203.0.113.10'],
  ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }],
});
const webSlice = slice('web', [endpoint('10.244.2.6', { node: 'node-b', ready: true })], [{ name: 'http', protocol: 'TCP', port: 8080 }]);

const nodePortVIPs = (lines: string[]) => lines.filter((l) => l.startsWith('-A ') && l.includes(':30080 ')).map((l) => l.split(' ')[2]).sort();

t.test('Rtnl.splitAddresses: one dump, the same addresses ip shows, split at the named link', async (t) => {
  const ns = await freshNetns(t, 'addr');
  await dummy(ns, 'eth0', '192.168.1.10/24', 'fd00:1::10/64');
  await dummy(ns, 'kube-ipvs0', '10.96.0.1/32');
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  const before = rt.counters();
  const { link, on, elsewhere } = await rt.splitAddresses('kube-ipvs0');
  const after = rt.counters();
  t.same({ messages: after.messagesSent - before.messagesSent, sendmsg: after.sendmsgCalls - before.sendmsgCalls }, { messages: 2, sendmsg: 1 }, 'the link lookup and one address dump, in one sendmsg');
  t.match(link, { name: 'kube-ipvs0', kind: 'dummy' });
  const names = new Map([[link!.index, 'kube-ipvs0']]);
  for (const l of (await ns.exec('ip', ['-o', 'link', 'show'])).split('\n').filter(Boolean)) {
    const [index, name] = l.split(': ');
    names.set(Number(index), name.split('@')[0]);
  }
  const listed = [...on, ...elsewhere].map((a) => `${names.get(a.index)} ${a.address}`).sort();
  t.same(listed, await ipAddrs(ns), 'every address ip shows, on the right link');
  t.ok(on.every((a) => a.index === link!.index && a.link === 'kube-ipvs0'), 'on: only kube-ipvs0 (named)');
  t.notOk(elsewhere.some((a) => a.index === link!.index), 'elsewhere: none of kube-ipvs0');
  t.same(await rt.splitAddresses('nosuch0').then((r) => ({ link: r.link, on: r.on.length, elsewhere: r.elsewhere.length })), { link: undefined, on: 0, elsewhere: listed.length }, 'a missing link: every address is elsewhere');
});

t.test('NodePorts on every interface address but kube-ipvs0; externalIPs already local are not bound; resync follows address changes', async (t) => {
  const top = t;
  const ns = await freshNetns(t, 'node');
  await dummy(ns, 'eth0', '192.168.1.10/24', 'fe80::10/64');
  await dummy(ns, 'eth1', '10.0.0.10/24', 'fd00:1::10/64'); // a second interface; its IPv6 address is not of this IPv4 node's family
  const c = await startController(t, ns, { config: defaultProxyConfig(), node });
  c.upsertService(web);
  c.upsertEndpointSlice(webSlice);
  t.match(await c.sync(), { kind: 'full', failed: 0 });

  const lines = await ipvsadmSave(ns);
  t.same(nodePortVIPs(lines), ['10.0.0.10:30080', '192.168.1.10:30080'], 'a NodePort virtual server on eth0 and on eth1; none on lo or on kube-ipvs0 (ClusterIP, externalIP)');
  t.same(await kubeIpvs0Addresses(ns), ['10.96.0.20', '203.0.113.10'], 'the externalIP on eth1 is not bound to kube-ipvs0, the other one is');
  t.ok(lines.includes('-A -t 10.0.0.10:80 -s rr'), 'the local externalIP still gets its virtual server');
  await kernelMatches(t, top, ns, c.desired, 'after the first sync');

  await t.test('an address added to an interface: the next resync serves NodePorts on it, with one address dump', async (t) => {
    await ns.exec('ip', ['addr', 'add', '10.0.1.10/24', 'dev', 'eth1']);
    await dummy(ns, 'eth2', '172.16.0.10/24');
    for (let i = 3; i < 8; i++) await dummy(ns, `eth${i}`); // more interfaces: still one dump
    t.equal((await c.sync()).planned, 0, 'an incremental sync reads no addresses');
    const before = c.counters().netlink.rtnl!;
    const r = await c.resync();
    const after = c.counters().netlink.rtnl!;
    t.match(r, { kind: 'resync', failed: 0 });
    t.same({ messages: after.messagesSent - before.messagesSent, sendmsg: after.sendmsgCalls - before.sendmsgCalls }, { messages: 2, sendmsg: 1 }, 'rtnetlink: the kube-ipvs0 lookup and one address dump, whatever the number of interfaces');
    t.same(nodePortVIPs(await ipvsadmSave(ns)), ['10.0.0.10:30080', '10.0.1.10:30080', '172.16.0.10:30080', '192.168.1.10:30080']);
    await kernelMatches(t, top, ns, c.desired, 'after the addresses were added');
  });

  await t.test('an address removed, and one added to kube-ipvs0 by hand: neither serves NodePorts after the resync', async (t) => {
    await ns.exec('ip', ['addr', 'del', '172.16.0.10/24', 'dev', 'eth2']);
    await ns.exec('ip', ['addr', 'add', '10.96.99.99/32', 'dev', 'kube-ipvs0']);
    t.match(await c.resync(), { failed: 0 });
    t.same(nodePortVIPs(await ipvsadmSave(ns)), ['10.0.0.10:30080', '10.0.1.10:30080', '192.168.1.10:30080']);
    t.same(await kubeIpvs0Addresses(ns), ['10.96.0.20', '203.0.113.10'], 'the stray kube-ipvs0 address was removed, not taken as a node address');
    await kernelMatches(t, top, ns, c.desired, 'after the removal');
  });

  await t.test('--nodeport-addresses narrows the interface addresses', async (t) => {
    c.close();
    const narrowed = await startController(t, ns, { config: defaultProxyConfig({ nodePortAddresses: ['10.0.0.0/16'] }), node });
    narrowed.upsertService(web);
    narrowed.upsertEndpointSlice(webSlice);
    t.match(await narrowed.sync(), { kind: 'full', failed: 0 });
    t.same(nodePortVIPs(await ipvsadmSave(ns)), ['10.0.0.10:30080', '10.0.1.10:30080'], 'only the addresses inside 10.0.0.0/16');
    await kernelMatches(t, top, ns, narrowed.desired, 'narrowed');
  });
});
