/**
 * A dual-stack node against the kernel: IPv4 and IPv6 ClusterIPs, an IPv6
 * NodePort, a dual-stack SCTP NodePort and an IPv6 LoadBalancer with
 * source ranges, checked with ipvsadm -Sn, ipset save (the KUBE-6- sets),
 * ip -6 addr show kube-ipvs0, and iptables-save / ip6tables-save (the
 * ip6tables payload is really applied, rule for rule).
 */
import t from 'tap';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { expectedIpsets, ipvsadmSave, kernelMatches, kubeIpsets, kubeIptables, startController } from '../support/controller-kernel.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { freshNetns } from '../../../test/support/netns.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10', 'fd00:1::10'] };

const api = service('api', {
  clusterIP: '10.96.10.40',
  clusterIPs: ['10.96.10.40', 'fd00:96::40'],
  ipFamilies: ['IPv4', 'IPv6'],
  ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
});
const web6 = service('web6', {
  type: 'NodePort',
  clusterIP: 'fd00:96::20',
  ipFamilies: ['IPv6'],
  ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30080 }],
});
const sig = service('sig', {
  type: 'NodePort',
  clusterIP: '10.96.10.50',
  clusterIPs: ['10.96.10.50', 'fd00:96::50'],
  ipFamilies: ['IPv4', 'IPv6'],
  ports: [{ name: 'diameter', protocol: 'SCTP', port: 3868, targetPort: 3868, nodePort: 30868 }],
});
const lb6 = service(
  'lb6',
  {
    type: 'LoadBalancer',
    clusterIP: 'fd00:96::60',
    ipFamilies: ['IPv6'],
    loadBalancerSourceRanges: ['2001:db8:1::/48'],
    ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: 8443, nodePort: 31443 }],
  },
  { loadBalancer: { ingress: [{ ip: '2001:db8::100' }] } },
);

const http = [{ name: 'http', protocol: 'TCP' as const, port: 8080 }];
const slices = [
  slice('api', [endpoint('10.244.2.40', { node: 'node-b', ready: true })], http, { name: 'api-v4' }),
  slice('api', [endpoint('fd00:244::40', { node: 'node-b', ready: true })], http, { name: 'api-v6', addressType: 'IPv6' }),
  slice('web6', [endpoint('fd00:244::20', { node: 'node-a', ready: true }), endpoint('fd00:244::21', { node: 'node-b', ready: true })], http, { addressType: 'IPv6' }),
  slice('sig', [endpoint('10.244.2.50', { node: 'node-b', ready: true })], [{ name: 'diameter', protocol: 'SCTP', port: 3868 }], { name: 'sig-v4' }),
  slice('sig', [endpoint('fd00:244::50', { node: 'node-b', ready: true })], [{ name: 'diameter', protocol: 'SCTP', port: 3868 }], { name: 'sig-v6', addressType: 'IPv6' }),
  slice('lb6', [endpoint('fd00:244::60', { node: 'node-b', ready: true })], [{ name: 'https', protocol: 'TCP', port: 8443 }], { addressType: 'IPv6' }),
];

t.test('dual-stack, IPv6 and SCTP: the kernel holds exactly the plan', async (t) => {
  const top = t;
  const ns = await freshNetns(t, 'ds');
  await ns.exec('ip', ['link', 'add', 'eth0', 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', 'eth0', 'up']);
  await ns.exec('ip', ['addr', 'add', '192.168.1.10/24', 'dev', 'eth0']);
  await ns.exec('ip', ['addr', 'add', 'fd00:1::10/64', 'dev', 'eth0', 'nodad']);
  const c = await startController(t, ns, { config: defaultProxyConfig(), node });
  for (const s of slices) c.upsertEndpointSlice(s);
  for (const s of [api, web6, sig, lb6]) c.upsertService(s);
  const r = await c.sync();
  t.comment(JSON.stringify(r));
  t.match(r, { kind: 'full', failed: 0, ipsetFailures: [] }, 'nothing was refused');
  t.same(c.desired.families, ['inet', 'inet6']);

  const ipvs = await ipvsadmSave(ns);
  for (const line of [
    '-A -t [fd00:96::40]:80 -s rr',
    '-a -t [fd00:96::40]:80 -r [fd00:244::40]:8080 -m -w 1',
    '-A -t [fd00:1::10]:30080 -s rr',
    '-A --sctp-service 10.96.10.50:3868 -s rr',
    '-a --sctp-service 10.96.10.50:3868 -r 10.244.2.50:3868 -m -w 1',
    '-A --sctp-service 192.168.1.10:30868 -s rr',
    '-A --sctp-service [fd00:96::50]:3868 -s rr',
    '-A --sctp-service [fd00:1::10]:30868 -s rr',
    '-A -t [2001:db8::100]:443 -s rr',
  ]) {
    t.ok(ipvs.includes(line), `ipvsadm -Sn: ${line}`);
  }
  t.notOk(ipvs.some((l) => l.includes('[fe80:')), 'no NodePort on the IPv6 link-local address');

  const sets = await kubeIpsets(ns);
  t.same(sets['KUBE-6-CLUSTER-IP'], ['fd00:96::20,tcp:80', 'fd00:96::40,tcp:80', 'fd00:96::50,sctp:3868', 'fd00:96::60,tcp:443'], 'KUBE-6-CLUSTER-IP');
  t.same(sets['KUBE-6-NODE-PORT-SCTP-HASH'], ['fd00:1::10,sctp:30868'], 'KUBE-6-NODE-PORT-SCTP-HASH: one entry per IPv6 node address');
  t.same(sets['KUBE-NODE-PORT-SCTP-HASH'], ['192.168.1.10,sctp:30868'], 'and the IPv4 one');
  t.same(sets['KUBE-6-NODE-PORT-TCP'], ['30080', '31443'], 'KUBE-6-NODE-PORT-TCP');
  t.same(sets['KUBE-6-LOAD-BALANCER-SOURCE-CID'], ['2001:db8::100,tcp:443,2001:db8:1::/48'], 'KUBE-6-LOAD-BALANCER-SOURCE-CID (cut to 31 characters)');
  t.same(sets['KUBE-6-LOOP-BACK'], ['fd00:244::20,tcp:8080,fd00:244::20'], 'KUBE-6-LOOP-BACK: the local IPv6 endpoint');
  t.match(await ns.exec('ipset', ['list', '-t', 'KUBE-6-CLUSTER-IP']), /family inet6/, 'the KUBE-6- hash sets are inet6');
  t.same(sets, expectedIpsets(c.desired), 'ipset save holds every set of both families with exactly its entries');

  const v6 = (await ns.exec('ip', ['-6', '-o', 'addr', 'show', 'kube-ipvs0']))
    .split('\n')
    .filter((l) => l.includes(' scope global'))
    .map((l) => l.trim().split(/\s+/)[3])
    .sort();
  t.same(v6, ['2001:db8::100/128', 'fd00:96::20/128', 'fd00:96::40/128', 'fd00:96::50/128', 'fd00:96::60/128'], 'ip -6 addr show kube-ipvs0: the IPv6 ClusterIPs and the LB VIP, as /128');

  const ip6 = await kubeIptables(ns, 'inet6');
  t.ok(ip6.rules.some((l) => l.includes('KUBE-6-CLUSTER-IP')), 'ip6tables-save: rules match the KUBE-6- sets');
  t.ok(ip6.rules.some((l) => l.startsWith('filter -A KUBE-IPVS-OUT-FILTER -s 2001:db8::100/128')), 'ip6tables-save: the node may not reach the LB VIP outside its source ranges');
  t.ok(ip6.rules.some((l) => l.includes('-s ::1/128 -j RETURN')), 'ip6tables-save: IPv6 loopback returns');
  await kernelMatches(t, top, ns, c.desired, 'dual-stack');

  await t.test('changes apply per family; a resync with nothing changed writes nothing in either', async (t) => {
    const more = slice('web6', [endpoint('fd00:244::20', { node: 'node-a', ready: true }), endpoint('fd00:244::21', { node: 'node-b', ready: true }), endpoint('fd00:244::22', { node: 'node-b', ready: true })], http, { addressType: 'IPv6' });
    c.upsertEndpointSlice(more);
    t.match(await c.sync(), { kind: 'incremental', planned: 2, applied: 2, failed: 0 }, 'ClusterIP and NodePort each get the new IPv6 real server');
    t.ok((await ipvsadmSave(ns)).includes('-a -t [fd00:1::10]:30080 -r [fd00:244::22]:8080 -m -w 1'));
    const iptablesWrites = c.counters().operations.iptables.ok;
    t.match(await c.resync(), { kind: 'resync', planned: 0, failed: 0 }, 'the resync finds nothing to repair');
    t.equal(c.counters().operations.iptables.ok, iptablesWrites, 'neither iptables-restore nor ip6tables-restore ran');
    await ns.exec('ip6tables-legacy', ['-t', 'filter', '-F', 'KUBE-IPVS-OUT-FILTER']);
    t.match(await c.resync(), { planned: 1, applied: 1, failed: 0 }, 'a flushed ip6tables chain is noticed and rewritten (and only that family)');
    await kernelMatches(t, top, ns, c.desired, 'after the resync');
  });
});
