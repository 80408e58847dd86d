/**
 * The nftables backend's table on this host's kernel (nf_tables, no IPVS
 * needed), each test in a fresh network namespace, through the
 * controller's own code (desired state, planner, applier, reader) and
 * checked against nft, both ways: `nft -f` of the table written by hand
 * (test/fixtures/nft/) lists exactly as what the proxy programs; elements
 * nft adds read back as the entries they stand for; an incremental change
 * is element adds and deletes only (every handle stays); a refused
 * transaction changes nothing and the next sync makes the table whole;
 * cleanup removes our tables and nothing else.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import type { TapLike } from '../../../test/support/connection.js';
import { formatRule, Nftables } from 'ipvs-netlink';
import { planOutput } from '../../lib/plan/plan-json.js';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { Mirror } from '../../lib/plan/mirror.js';
import { plan } from '../../lib/plan/planner.js';
import type { Scope } from '../../lib/plan/scope.js';
import type { Operation } from '../../lib/plan/kernel-state.js';
import { Applier } from '../../lib/kernel/applier.js';
import type { Clients } from '../../lib/kernel/netlink-clients.js';
import { deleteNftTables, readNftTables } from '../../lib/kernel/nftables-tables.js';
import { detectNftablesFamilies } from '../../lib/kernel/host-families.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { freshNetns, type Netns } from '../../../test/support/netns.js';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/nft/${name}`, import.meta.url), 'utf8');
const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10', 'fd00::10'], families: ['inet', 'inet6'] };
/** The configuration test/fixtures/nft/table.nft and table6.nft are written for. */
const config = defaultProxyConfig({ rulesBackend: 'nftables', clusterCIDRs: ['10.244.0.0/16'] });
const silent = { warn: () => undefined, info: () => undefined, debug: () => undefined, trace: () => undefined };

/** `nft -j list ruleset`, without what differs between two namespaces holding the same rules (handles, the tool's version). */
async function listed(ns: Netns): Promise<unknown[]> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'ruleset'])) as { nftables: Array<Record<string, Record<string, unknown>>> };
  return out.nftables.filter((o) => !('metainfo' in o)).map((o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, { ...v, handle: undefined }])));
}

/** The proxy's pieces in `ns`: objects → desired → plan → applier, with the mirror a controller keeps. */
async function proxyIn(t: TapLike, ns: Netns) {
  const nft = await Nftables.open({ netns: ns.path });
  t.teardown(() => nft.close());
  const known = new KnownObjects(node, config);
  const applier = new Applier({ nftables: nft } as unknown as Clients, { apply: () => Promise.reject(new Error('no iptables')) }, silent);
  const mirror = new Mirror();
  const sync = async (scope?: Scope) => {
    const ops = plan(known.desired, mirror, scope ? { scope } : {}).filter((o): o is Extract<Operation, { kind: 'nftables' }> => o.kind === 'nftables');
    const report = await applier.apply(ops);
    mirror.record(report.applied);
    for (const f of report.failed) if (f.op.kind === 'nftables') mirror.forgetNftables(f.op.family);
    return { ops, report };
  };
  return { nft, known, mirror, sync };
}

const web = () => service('web', { type: 'NodePort', clusterIP: '10.96.0.10', ports: [{ name: 'http', protocol: 'TCP', port: 80, nodePort: 30080 }] });
const webSlice = (...addresses: string[]) => slice('web', addresses.map((a) => endpoint(a, { node: 'node-a' })), [{ name: 'http', protocol: 'TCP', port: 8080 }]);

t.test('what the proxy programs lists as the table nft -f makes from its text', async (t) => {
  const byNft = await freshNetns(t, 'nftfix');
  await byNft.exec('nft', ['-f', '-'], fixture('table.nft') + fixture('table6.nft'));
  const ours = await freshNetns(t, 'nftours');
  const p = await proxyIn(t, ours);
  const { ops, report } = await p.sync();
  t.same(ops.map((o) => o.op), ['table', 'table']);
  t.equal(report.failed.length, 0, 'one transaction, applied');
  t.same(await listed(ours), await listed(byNft), 'nft -j list ruleset: the same, rule for rule');
  // The other way: nft's table, read by the proxy, is the one it wants (a restart adopts it).
  const read = await readNftTables(p.nft, ['inet', 'inet6']);
  t.same([...read.nftables], [...p.known.desired.nftables!].map(([f, table]) => [f, table.fingerprint]), 'nft\'s table read back has the wanted shape');
  // What `plan` prints for the rules is nft's own text.
  const text = (await byNft.exec('nft', ['list', 'ruleset'])).split('\n').map((l) => l.trim());
  const planned = Object.values(planOutput(p.known.desired, formatRule).nftables!).flatMap((table) => Object.values(table.chains).flatMap((c) => c.rules));
  t.equal(planned.length, p.known.desired.nftables!.get('inet')!.rules.length * 2);
  t.same(planned.filter((r) => !text.includes(r)), [], 'every rule as nft list prints it');
});

t.test('elements: as nft lists them, and nft\'s read back as entries', async (t) => {
  const ns = await freshNetns(t, 'nftelem');
  const p = await proxyIn(t, ns);
  p.known.upsertService(web());
  p.known.upsertEndpointSlice(webSlice('10.244.1.5'));
  const lb = service('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.20', loadBalancerSourceRanges: ['198.51.100.0/24', '192.168.1.0/24'], ports: [{ name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 }] }, { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } });
  p.known.upsertService(lb);
  await p.sync();
  const set = async (name: string) => {
    const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'set', 'ip', 'kube-proxy-ipvs', name])) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
    // Hash sets list in no particular order.
    return (out.nftables.find((o) => o.set)?.set?.elem ?? []).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  };
  t.same(await set('cluster-ip'), [{ concat: ['10.96.0.10', 'tcp', 80] }, { concat: ['10.96.0.20', 'udp', 53] }]);
  t.same(await set('loop-back'), [{ concat: ['10.244.1.5', 'tcp', 8080, '10.244.1.5'] }]);
  t.same((await set('node-port-tcp')), [30080]);
  t.same((await set('node-port-udp')), [30053]);
  t.same(await set('load-balancer-source-cidr'), [
    { concat: ['192.0.2.1', 'udp', 53, { prefix: { addr: '192.168.1.0', len: 24 } }] },
    { concat: ['192.0.2.1', 'udp', 53, { prefix: { addr: '198.51.100.0', len: 24 } }] },
  ]);
  t.same(await set('load-balancer-source-ip'), [{ concat: ['192.0.2.1', 'udp', 53, '192.0.2.1'] }], 'the node is inside a range: its traffic from the VIP passes');
  t.same(await set('ipvs-ips'), ['10.96.0.10', '10.96.0.20', '192.0.2.1']);

  // nft writes, the proxy reads: the entries they stand for, drift repaired element by element.
  await ns.exec('nft', ['add', 'element', 'ip', 'kube-proxy-ipvs', 'cluster-ip', '{ 10.96.9.9 . sctp . 9 }']);
  await ns.exec('nft', ['delete', 'element', 'ip', 'kube-proxy-ipvs', 'ipvs-ips', '{ 10.96.0.20 }']);
  const read = await readNftTables(p.nft, ['inet', 'inet6']);
  const entries = new Map(read.ipsets.map((s) => [s.name, s.entries]));
  t.same(entries.get('KUBE-CLUSTER-IP')?.sort(), ['10.96.0.10,tcp:80', '10.96.0.20,udp:53', '10.96.9.9,sctp:9']);
  t.same(entries.get('KUBE-LOAD-BALANCER-SOURCE-CIDR')?.sort(), ['192.0.2.1,udp:53,192.168.1.0/24', '192.0.2.1,udp:53,198.51.100.0/24']);
  const adopted = Mirror.fromKernel({ virtualServers: [], ipsets: read.ipsets, boundAddresses: [], nftables: read.nftables }, p.known.desired);
  const repair = plan(p.known.desired, adopted).filter((o) => o.kind === 'nftables');
  t.same(repair.map((o) => (o.op === 'add' || o.op === 'del' ? `${o.op} ${o.set} ${o.entries.join(' ')}` : o.op)), ['add KUBE-IPVS-IPS 10.96.0.20', 'del KUBE-CLUSTER-IP 10.96.9.9,sctp:9']);
});

t.test('a change is element adds and deletes in one transaction: every handle stays', async (t) => {
  const ns = await freshNetns(t, 'nftincr');
  const p = await proxyIn(t, ns);
  p.known.upsertService(web());
  p.known.upsertEndpointSlice(webSlice('10.244.1.5'));
  await p.sync();
  const handles = async () => (await p.nft.ruleset({ family: 'ip', table: 'kube-proxy-ipvs' })).rules.map((r) => `${r.chain}/${r.handle}`);
  const before = await handles();
  const generation = await p.nft.generation();
  const { ops } = await p.sync(p.known.upsertEndpointSlice(webSlice('10.244.1.5', '10.244.1.6')));
  t.same(ops.map((o) => o.op), ['add']);
  t.equal(await p.nft.generation(), generation + 1, 'one transaction');
  t.same(await handles(), before, 'no rule was rewritten');
  t.match(await ns.exec('nft', ['list', 'set', 'ip', 'kube-proxy-ipvs', 'loop-back']), /10\.244\.1\.6 \. tcp \. 8080 \. 10\.244\.1\.6/);
  const { ops: gone } = await p.sync(p.known.deleteService('default', 'web'));
  t.same(gone.map((o) => o.op), ['del', 'del', 'del', 'del']);
  t.same(await handles(), before);
  t.notMatch(await ns.exec('nft', ['list', 'table', 'ip', 'kube-proxy-ipvs']), /10\.96\.0\.10|30080|10\.244\.1/, 'nothing of the service is left');
});

t.test('a refused transaction applies nothing; the next sync makes the table whole', async (t) => {
  const ns = await freshNetns(t, 'nftfail');
  const p = await proxyIn(t, ns);
  p.known.upsertService(web());
  await p.sync();
  // Someone deletes an element the mirror believes is there: deleting it again is refused.
  await ns.exec('nft', ['delete', 'element', 'ip', 'kube-proxy-ipvs', 'cluster-ip', '{ 10.96.0.10 . tcp . 80 }']);
  await ns.exec('nft', ['add', 'rule', 'ip', 'kube-proxy-ipvs', 'services', 'counter']);
  const generation = await p.nft.generation();
  const { report } = await p.sync(p.known.deleteService('default', 'web'));
  t.equal(report.failed.length, 3, 'every change of the transaction is reported failed');
  t.match(String(report.failed[0].error), /ENOENT|No such file/);
  t.equal(await p.nft.generation(), generation, 'nothing was applied');
  t.match(await ns.exec('nft', ['list', 'set', 'ip', 'kube-proxy-ipvs', 'ipvs-ips']), /10\.96\.0\.10/, 'the other elements are still there');
  const { ops, report: again } = await p.sync();
  t.same(ops.map((o) => `${o.op} ${o.family}`), ['table inet'], 'made whole');
  t.equal(again.failed.length, 0);
  const fixtureNs = await freshNetns(t, 'nftfix2');
  await fixtureNs.exec('nft', ['-f', '-'], fixture('table.nft'));
  t.same((await listed(ns)).filter((o) => JSON.stringify(o).includes('"ip"')), await listed(fixtureNs), 'the foreign rule is gone, the sets are empty again');
});

t.test('cleanup removes our tables and nothing else', async (t) => {
  const ns = await freshNetns(t, 'nftclean');
  const p = await proxyIn(t, ns);
  await p.sync();
  await ns.exec('nft', ['add', 'table', 'ip', 'someone-else']);
  await ns.exec('nft', ['add', 'table', 'inet', 'kube-proxy-ipvs']);
  await deleteNftTables(p.nft);
  t.same((await p.nft.listTables()).map((x) => `${x.family} ${x.name}`).sort(), ['inet kube-proxy-ipvs', 'ip someone-else']);
  const read = await readNftTables(p.nft, ['inet', 'inet6']);
  t.same({ ipsets: read.ipsets, nftables: [...read.nftables] }, { ipsets: [], nftables: [] }, 'read back: no table of ours, no entries (an inet table of that name is not ours)');
});

t.test('the families served, as nftables (not iptables) works for them', async (t) => {
  const ns = await freshNetns(t, 'nftfam');
  t.same(await detectNftablesFamilies(ns.path, () => true), { families: ['inet', 'inet6'], missing: [] }, 'this kernel has nf_tables for both');
  t.same(await detectNftablesFamilies(ns.path, () => false), { families: ['inet'], missing: [{ family: 'inet6', message: 'No kernel support for family' }] }, 'IPv6 needs the kernel\'s IPv6 too');
});
