/**
 * The nftables backend without a kernel: the table each configuration
 * asks for, set entries as nft keys and back, and the planner's
 * operations: the table made whole once, then only element adds and
 * deletes for a change, in one run (one transaction), and nothing after a
 * restart that finds the table as wanted.
 */
import t from 'tap';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { elementKey, entryOfKey, nftSetMembers } from '../../lib/desired/nftables-elements.js';
import { tableFingerprint } from '../../lib/desired/nftables-fingerprint.js';
import { nftTable, OUT_DROP_SET } from '../../lib/desired/nftables-table.js';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import type { NftablesOp, Operation } from '../../lib/plan/kernel-state.js';
import { Mirror } from '../../lib/plan/mirror.js';
import { plan } from '../../lib/plan/planner.js';
import { runs } from '../../lib/kernel/applier.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { formatRule } from 'ipvs-netlink';
import { planOutput } from '../../lib/plan/plan-json.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10', 'fd00::10'], families: ['inet', 'inet6'] };
const config = defaultProxyConfig({ rulesBackend: 'nftables', clusterCIDRs: ['10.244.0.0/16'] });

const web = () => service('web', { type: 'NodePort', clusterIP: '10.96.0.10', externalIPs: ['203.0.113.7'], ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }] });
const webEndpoints = (...addresses: string[]) =>
  slice('web', addresses.map((a) => endpoint(a, { node: 'node-a' })), [{ name: 'http', protocol: 'TCP', port: 8080 }]);
const lb = () =>
  service(
    'lb',
    { type: 'LoadBalancer', clusterIP: '10.96.0.20', loadBalancerSourceRanges: ['198.51.100.0/24'], ports: [{ name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 }] },
    { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } },
  );

const nftOps = (ops: Operation[]) => ops.filter((o): o is NftablesOp => o.kind === 'nftables');
const summary = (ops: NftablesOp[]) => ops.map((o) => (o.op === 'add' || o.op === 'del' ? `${o.op} ${o.set} ${o.entries.join(' ')}` : `${o.op} ${o.family}`));

t.test('the table per configuration: only the rules that depend on it change', async (t) => {
  const rule = (c: Parameters<typeof nftTable>[1]) => JSON.stringify(nftTable('inet', c).rules.filter((r) => r.chain === 'services')[2].expressions);
  const cidr = rule(config);
  const all = rule({ ...config, masqueradeAll: true });
  const none = rule({ ...config, clusterCIDRs: [] });
  t.not(cidr, all, 'masqueradeAll drops the pod-CIDR condition');
  t.not(cidr, none);
  t.match(none, /"offset":12/, 'without a cluster CIDR the cluster-ip set is matched on the source (src,dst)');
  t.not(tableFingerprint(nftTable('inet', config)), tableFingerprint(nftTable('inet', { ...config, masqueradeBit: 15 })), 'the mark bit is part of the shape');
  const v6 = nftTable('inet6', config);
  t.equal(v6.table.family, 'ip6');
  t.same(v6.sets.find((s) => s.name === 'cluster-ip')?.type, ['ipv6_addr', 'inet_proto', 'inet_service']);
  t.equal(new Set(v6.rules.map((r) => r.chain)).size, v6.chains.length, 'every chain has rules');
  const jumps = v6.rules.flatMap((r) => r.expressions.flatMap((e) => (e.type === 'verdict' && e.chain ? [e.chain] : [])));
  t.same(v6.chains.filter((c) => !c.hook && !jumps.includes(c.name)), [], 'every regular chain is jumped to');
  const lookups = v6.rules.flatMap((r) => r.expressions.flatMap((e) => (e.type === 'lookup' ? [e.set] : [])));
  t.same(v6.sets.filter((s) => !lookups.includes(s.name)).map((s) => s.name), [], 'every set is used by a rule');
});

t.test('entries as nft keys and back, for every kind of set', async (t) => {
  const cases: Array<[string, string, unknown]> = [
    ['KUBE-CLUSTER-IP', '10.96.0.10,tcp:80', ['10.96.0.10', 'tcp', 80]],
    ['KUBE-6-CLUSTER-IP', 'fd00::10,udp:53', ['fd00::10', 'udp', 53]],
    ['KUBE-LOOP-BACK', '10.244.1.5,tcp:8080,10.244.1.5', ['10.244.1.5', 'tcp', 8080, '10.244.1.5']],
    ['KUBE-LOAD-BALANCER-SOURCE-CIDR', '192.0.2.1,udp:53,198.51.100.0/24', ['192.0.2.1', 'udp', 53, '198.51.100.0/24']],
    ['KUBE-NODE-PORT-TCP', '30080', 30080],
    ['KUBE-IPVS-IPS', '10.96.0.10', '10.96.0.10'],
    [OUT_DROP_SET, '192.0.2.1,udp:53', ['192.0.2.1', '192.0.2.1', 'udp', 53]],
  ];
  const members = new Map([...nftSetMembers('inet'), ...nftSetMembers('inet6')]);
  for (const [set, entry, key] of cases) {
    const base = members.get(set)!.base;
    t.same(elementKey(base, entry), key, `${set} ${entry}`);
    t.equal(entryOfKey(base, key as never), entry, `${set} ${entry} read back`);
  }
  t.equal(entryOfKey('KUBE-LOAD-BALANCER-SOURCE-CIDR', ['192.0.2.1', 'udp', 53, '198.51.100.7/32']), '192.0.2.1,udp:53,198.51.100.7', 'a host network reads as ipset prints it');
  t.equal(entryOfKey(OUT_DROP_SET, ['192.0.2.1', '192.0.2.9', 'udp', 53]), undefined, 'a key this proxy never writes');
});

t.test('the desired state: no iptables rules, one table per family, the out-drop set', async (t) => {
  const known = new KnownObjects(node, config);
  known.upsertService(lb());
  const d = known.desired;
  t.equal(d.iptables.size, 0);
  t.same([...d.nftables!.keys()], ['inet', 'inet6']);
  t.same([...d.ipsets.get(OUT_DROP_SET)!.entries], ['192.0.2.1,udp:53'], 'the node is outside the source ranges: its traffic to the VIP is dropped');
  t.ok(d.ipsets.has('KUBE-6-LOAD-BALANCER-OUT-DROP'));
  const overlapping = lb();
  overlapping.spec.loadBalancerSourceRanges = ['10.1.0.0/16', '10.0.0.0/8', '192.168.1.10/32', '10.0.0.0/8'];
  known.upsertService(overlapping);
  t.same([...known.desired.ipsets.get('KUBE-LOAD-BALANCER-SOURCE-CIDR')!.entries].sort(), ['192.0.2.1,udp:53,10.0.0.0/8', '192.0.2.1,udp:53,192.168.1.10'], 'an interval set takes no overlapping ranges: the inner ones are left out');
});

t.test('plans: the table whole once, then element changes only, in one run', async (t) => {
  const known = new KnownObjects(node, config);
  known.upsertService(web());
  known.upsertEndpointSlice(webEndpoints('10.244.1.5'));
  const mirror = new Mirror();
  const first = plan(known.desired, mirror);
  t.same(summary(nftOps(first)), ['table inet', 'table inet6'], 'a missing table is made whole');
  const table = nftOps(first)[0] as Extract<NftablesOp, { op: 'table' }>;
  t.same(table.entries.get('KUBE-CLUSTER-IP'), ['10.96.0.10,tcp:80']);
  t.same(table.entries.get('KUBE-LOOP-BACK'), ['10.244.1.5,tcp:8080,10.244.1.5']);
  t.same(table.entries.get('KUBE-NODE-PORT-TCP'), ['30080']);
  t.notOk(first.some((o) => o.kind === 'ipset' || o.kind === 'iptables'), 'no ipset or iptables operation');
  mirror.record(first);
  t.same(plan(known.desired, mirror), [], 'then nothing');

  const scope = known.upsertEndpointSlice(webEndpoints('10.244.1.5', '10.244.1.6'));
  const second = plan(known.desired, mirror, { scope });
  t.same(summary(nftOps(second)), ['add KUBE-LOOP-BACK 10.244.1.6,tcp:8080,10.244.1.6'], 'a local endpoint: one element');
  mirror.record(second);

  const gone = known.deleteService('default', 'web');
  const third = plan(known.desired, mirror, { scope: gone });
  t.same(summary(nftOps(third)), [
    'del KUBE-CLUSTER-IP 10.96.0.10,tcp:80',
    'del KUBE-EXTERNAL-IP 203.0.113.7,tcp:80',
    'del KUBE-IPVS-IPS 10.96.0.10 203.0.113.7',
    'del KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5 10.244.1.6,tcp:8080,10.244.1.6',
    'del KUBE-NODE-PORT-TCP 30080',
  ]);
  t.equal(runs(third).filter((r) => r.kind === 'nftables').length, 1, 'all of it in one run: one transaction');
  t.ok(third.findIndex((o) => o.kind === 'nftables') < third.findIndex((o) => o.kind === 'ipvs'), 'before IPVS, as kube-proxy syncs its sets first');
  mirror.record(third);
  t.same(plan(known.desired, mirror), []);
});

t.test('adoption: a table read back as wanted plans nothing; one of another shape is made whole', async (t) => {
  const known = new KnownObjects(node, config);
  known.upsertService(web());
  const d = known.desired;
  const ipsets = [...d.ipsets].map(([name, s]) => ({ name, type: s.type, entries: [...s.entries] }));
  const fingerprints = new Map([...d.nftables!].map(([f, table]) => [f, table.fingerprint]));
  const adopted = Mirror.fromKernel({ virtualServers: [], ipsets, boundAddresses: [], nftables: fingerprints }, d);
  t.same(nftOps(plan(d, adopted)), [], 'same shape, same elements');

  const drifted = Mirror.fromKernel({ virtualServers: [], ipsets: ipsets.map((s) => (s.name === 'KUBE-CLUSTER-IP' ? { ...s, entries: ['10.96.9.9,tcp:1'] } : s)), boundAddresses: [], nftables: fingerprints }, d);
  t.same(summary(nftOps(plan(d, drifted))), ['add KUBE-CLUSTER-IP 10.96.0.10,tcp:80', 'del KUBE-CLUSTER-IP 10.96.9.9,tcp:1'], 'drift is repaired element by element');

  const other = Mirror.fromKernel({ virtualServers: [], ipsets, boundAddresses: [], nftables: new Map([['inet', 'old'], ['inet6', fingerprints.get('inet6')!]]) }, d);
  t.same(summary(nftOps(plan(d, other))), ['table inet'], 'another shape (an upgrade, a changed flag): that family made whole');

  const v4only = new KnownObjects({ ...node, families: ['inet'] }, config);
  v4only.upsertService(web());
  t.same(summary(nftOps(plan(v4only.desired, adopted))), ['deleteTable inet6'], 'a family no longer served loses its table');

  adopted.forgetNftables('inet');
  t.same(summary(nftOps(plan(d, adopted))), ['table inet'], 'after a refused transaction the table is made whole');
});

t.test('plan prints the tables: elements as nft keys, rules in nft\'s text, no ipsets', async (t) => {
  const known = new KnownObjects(node, config);
  known.upsertService(web());
  known.upsertEndpointSlice(webEndpoints('10.244.1.5'));
  const out = planOutput(known.desired, formatRule);
  t.same(out.ipsets, {}, 'no ipset is programmed');
  t.notOk(out.iptables);
  t.same(Object.keys(out.nftables!), ['ip kube-proxy-ipvs', 'ip6 kube-proxy-ipvs']);
  const v4 = out.nftables!['ip kube-proxy-ipvs'];
  t.same(v4.sets['cluster-ip'].elements, ['10.96.0.10 . tcp . 80']);
  t.same(v4.sets['node-port-tcp'].elements, ['30080']);
  t.same(v4.chains['nat-prerouting'], { type: 'nat', hook: 'prerouting', priority: -100, policy: 'accept', rules: ['jump services'] });
  t.same(v4.chains['mark-for-masquerade'].rules, ['meta mark set meta mark | 0x00004000']);
  t.same(v4.chains['services'].rules[2], 'ip daddr . meta l4proto . th dport @cluster-ip ip saddr != 10.244.0.0/16 jump mark-for-masquerade');
  t.same(planOutput(new KnownObjects(node, defaultProxyConfig()).desired, formatRule).nftables, undefined, 'the iptables backend prints no table');
});
