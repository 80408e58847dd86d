/**
 * The applier against fake clients: how planned operations become calls
 * (one IPVS batch per run, one bulk call per set, one address batch),
 * per-operation outcomes, partial ipset failures, and that the mirror and
 * the retry scope see exactly what succeeded and what failed.
 */
import t from 'tap';
import { pino } from 'pino';
import { Applier, runs, splitBulk } from '../../lib/kernel/applier.js';
import type { Clients } from '../../lib/kernel/netlink-clients.js';
import { Mirror } from '../../lib/plan/mirror.js';
import { defaultProxyConfig, type NodeInfo } from '../../lib/kubernetes/model.js';
import { scopeOf } from '../../lib/plan/scope.js';
import { plan } from '../../lib/plan/planner.js';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { withLines } from '../../lib/kernel/iptables-runner.js';
import { connReuseMode, ensureSysctls, kubeProxySysctls } from '../../lib/kernel/sysctls.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { idleCounters } from '../support/fake-controller.js';
import { IpsetBulkError, NetlinkError } from 'ipvs-netlink';
import { endpoint, service, slice } from '../support/k8s-objects.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };
const silent = pino({ level: 'silent' });

function fakes(opts: { failIpvs?: (op: string) => boolean; refuseEntry?: string } = {}) {
  const calls: string[] = [];
  const clients = {
    ipvs: {
      async apply(ops: Array<{ op: string }>) {
        calls.push(`ipvs.apply(${ops.length})`);
        return ops.map((o) => (opts.failIpvs?.(o.op) ? { ok: false, error: new NetlinkError({ errno: 17, code: 'EEXIST', operation: o.op }) } : { ok: true }));
      },
    },
    ipset: {
      async create(name: string) {
        calls.push(`ipset.create(${name})`);
      },
      async addMany(name: string, entries: string[]) {
        calls.push(`ipset.addMany(${name},${entries.length})`);
        const i = opts.refuseEntry === undefined ? -1 : entries.indexOf(opts.refuseEntry);
        if (i >= 0) throw new IpsetBulkError({ errno: 1, code: 'IPSET_ERR_X', message: 'refused' }, 'addMany', name, { index: i, entry: entries[i], applied: i });
        return entries.length;
      },
      async delMany(name: string, entries: string[]) {
        calls.push(`ipset.delMany(${name},${entries.length})`);
        return entries.length;
      },
    },
    rtnl: {
      async addAddresses(_link: string, addresses: string[]) {
        calls.push(`rtnl.addAddresses(${addresses.length})`);
        return addresses.map((address) => ({ address, ok: true }));
      },
      async deleteAddresses(_link: string, addresses: string[]) {
        calls.push(`rtnl.deleteAddresses(${addresses.length})`);
        return addresses.map((address) => ({ address, ok: false, error: new NetlinkError({ errno: 99, code: 'EADDRNOTAVAIL', operation: 'deleteAddresses' }) }));
      },
    },
  } as unknown as Clients;
  const iptables = {
    async apply(family: string) {
      calls.push(`iptables(${family})`);
    },
  };
  return { calls, applier: new Applier(clients, iptables, silent) };
}

function cluster() {
  const state = new KnownObjects(node, defaultProxyConfig());
  state.upsertService(service('a', { clusterIP: '10.96.0.1', ports: [{ name: 'p', protocol: 'TCP', port: 80 }] }));
  state.upsertEndpointSlice(slice('a', [endpoint('10.244.1.1'), endpoint('10.244.1.2')], [{ name: 'p', protocol: 'TCP', port: 8080 }]));
  state.upsertService(service('b', { type: 'NodePort', clusterIP: '10.96.0.2', ports: [{ name: 'p', protocol: 'TCP', port: 80, nodePort: 30001 }] }));
  state.upsertEndpointSlice(slice('b', [endpoint('10.244.2.1')], [{ name: 'p', protocol: 'TCP', port: 8080 }]));
  return state;
}

t.test('a first sync is one IPVS batch, one call per set, one address batch, one restore', async (t) => {
  const state = cluster();
  const ops = plan(state.desired, new Mirror());
  const { calls, applier } = fakes();
  const report = await applier.apply(ops);
  t.equal(report.applied.length, ops.length, 'everything applied');
  t.same(report.failed, []);
  t.equal(calls.filter((c) => c.startsWith('ipvs.apply')).length, 1, 'one ipvs.apply');
  t.same(calls.filter((c) => c.startsWith('ipvs.apply')), [`ipvs.apply(${ops.filter((o) => o.kind === 'ipvs').length})`], 'holding every IPVS op');
  t.same(calls.filter((c) => c.startsWith('rtnl')), ['rtnl.addAddresses(2)'], 'both ClusterIPs bound in one batch');
  t.same(calls.filter((c) => c.startsWith('iptables')), ['iptables(inet)']);
  const addCalls = calls.filter((c) => c.startsWith('ipset.addMany'));
  t.equal(addCalls.length, new Set(addCalls.map((c) => c.split(',')[0])).size, 'at most one addMany per set');
  t.same(Object.fromEntries(Object.entries(applier.counts).map(([k, v]) => [k, v.failed])), { ipvs: 0, ipset: 0, address: 0, iptables: 0, nftables: 0 }, 'no failure counted');
  t.equal(applier.counts.ipvs.ok, ops.filter((o) => o.kind === 'ipvs').length, 'IPVS successes counted per operation');
});

t.test('only what succeeded is recorded; failures become the retry scope', async (t) => {
  const state = cluster();
  const ops = plan(state.desired, new Mirror());
  const { applier } = fakes({ failIpvs: (op) => op === 'addDestination', refuseEntry: '10.96.0.2,tcp:80' });
  const report = await applier.apply(ops);
  const mirror = new Mirror();
  mirror.record(report.applied);
  t.equal(mirror.virtualServers.size, 3, 'the virtual servers went in');
  t.equal([...mirror.virtualServers.values()].reduce((n, v) => n + v.destinations.length, 0), 0, 'no real server is recorded');
  t.same([...mirror.ipsets.get('KUBE-CLUSTER-IP')!.entries], ['10.96.0.1,tcp:80'], 'the entry before the refused one is recorded, the refused one is not');
  t.equal(applier.counts.ipvs.failed, 4, 'the four failed real servers counted');

  const retry = scopeOf(report.failed.map((f) => f.op));
  t.same([...retry.virtualServers].sort(), ['tcp/10.96.0.1/80', 'tcp/10.96.0.2/80', 'tcp/192.168.1.10/30001'], 'the failed real servers\' virtual servers are retried');
  t.same([...retry.setEntries.get('KUBE-CLUSTER-IP')!], ['10.96.0.2,tcp:80'], 'the refused entry and those after it are retried');
  const again = plan(state.desired, mirror, { scope: retry });
  t.same(again.map((o) => (o.kind === 'ipvs' ? o.batch.op : `${o.kind}:${'op' in o ? o.op : ''}`)).sort(), ['addDestination', 'addDestination', 'addDestination', 'addDestination', 'ipset:add'], 'the retry plans exactly the failed work');
});

/** An IpsetBulkError as the ipset client makes it, optionally with the per-entry fields of the continuing bulk calls. */
function bulkError(set: string, index: number, applied: number, extra: { failures?: number[]; skipped?: number[]; unconfirmed?: number[] } = {}, entries: string[] = []) {
  return new IpsetBulkError({ errno: 4103, code: 'IPSET_ERR_HASH_FULL', message: 'Hash is full' } as never, 'addMany', set, {
    index,
    entry: entries[index],
    applied,
    failures: (extra.failures ?? (index >= 0 ? [index] : [])).map((i) => ({ index: i, entry: entries[i], errno: 4103, code: 'IPSET_ERR_HASH_FULL', message: 'Hash is full' })),
    skipped: extra.skipped,
    unconfirmed: extra.unconfirmed,
  });
}

t.test('splitBulk: which entries are in the kernel, with and without the per-entry fields', async (t) => {
  const entries = ['a', 'b', 'c', 'd', 'e'];
  t.same(splitBulk(entries, bulkError('S', 2, 4, {}, entries)), { done: ['a', 'b', 'd', 'e'], undone: ['c'] }, 'one refused entry: the others went in');
  t.same(splitBulk(entries, bulkError('S', -1, 0, {}, entries)), { done: [], undone: entries }, 'failed as a whole: none is in');
  t.same(splitBulk(entries, bulkError('S', 1, 2, { failures: [1], unconfirmed: [3, 4] }, entries)), { done: ['a', 'c'], undone: ['b', 'd', 'e'] }, 'unconfirmed entries are retried');
  t.same(splitBulk(entries, bulkError('S', 1, 1, { failures: [1] }, entries)), { done: [], undone: entries }, 'lists that do not add up to applied: all retried');
  t.same(
    splitBulk(entries, bulkError('S', 1, 2, { failures: [1], skipped: [3, 4] }, entries)),
    { done: ['a', 'c'], undone: ['b', 'd', 'e'] },
    'new shape: refused and skipped entries are not in, the others are, wherever they are',
  );
  t.same(splitBulk(entries, bulkError('S', 3, 4, { failures: [3] }, entries)), { done: ['a', 'b', 'c', 'e'], undone: ['d'] }, 'an entry after a refused one went in');
});

t.test('a set that fills up fails alone: the other sets, IPVS and addresses are applied; only what is in the kernel is recorded', async (t) => {
  const state = cluster();
  const ops = plan(state.desired, new Mirror());
  const { calls, applier } = fakes();
  // KUBE-CLUSTER-IP takes one entry and is then full (the continuing client reports the rest as skipped).
  const ipset = (applier as unknown as { clients: Clients }).clients.ipset;
  if (!ipset) throw new Error('the fake clients have no ipset handle');
  const realAddMany = ipset.addMany;
  ipset.addMany = (async (name: string, entries: string[], o: object) => {
    if (name !== 'KUBE-CLUSTER-IP') return realAddMany.call(ipset, name, entries, o as never);
    calls.push(`ipset.addMany(${name},${entries.length})`);
    throw bulkError(name, 1, 1, { skipped: entries.slice(1).map((_, i) => i + 1) }, entries);
  }) as typeof ipset.addMany;
  const report = await applier.apply(ops);
  t.same(report.failed.map((f) => f.op), [{ kind: 'ipset', op: 'add', set: 'KUBE-CLUSTER-IP', entries: ['10.96.0.2,tcp:80'] }], 'one failure: the entry that did not fit');
  t.equal((report.failed[0].error as NetlinkError).code, 'IPSET_ERR_HASH_FULL');
  t.ok(calls.includes('rtnl.addAddresses(2)') && calls.includes('iptables(inet)') && calls.some((c) => c.startsWith('ipvs.apply')), 'IPVS, addresses and iptables went ahead');
  t.ok(calls.includes('ipset.addMany(KUBE-IPVS-IPS,2)'), 'and the other sets');
  const mirror = new Mirror();
  mirror.record(report.applied);
  t.same([...mirror.ipsets.get('KUBE-CLUSTER-IP')!.entries], ['10.96.0.1,tcp:80'], 'the mirror holds exactly what went in');
  t.same([...mirror.ipsets.get('KUBE-IPVS-IPS')!.entries].sort(), ['10.96.0.1', '10.96.0.2']);
  const retry = plan(state.desired, mirror, { scope: scopeOf(report.failed.map((f) => f.op)) });
  t.same(retry, [{ kind: 'ipset', op: 'add', set: 'KUBE-CLUSTER-IP', entries: ['10.96.0.2,tcp:80'] }], 'the next sync retries only the missing entry');
});

t.test('refused ipset operations are exported as kubeproxy_ipvs_netlink_ipset_failures_total{set,code}', async (t) => {
  const metrics = new ProxyMetrics(() => idleCounters({ ipsetFailures: [{ set: 'KUBE-CLUSTER-IP', code: 'IPSET_ERR_HASH_FULL', count: 3 }] }), { defaultMetrics: false });
  t.match(await metrics.registry.metrics(), /^kubeproxy_ipvs_netlink_ipset_failures_total\{set="KUBE-CLUSTER-IP",code="IPSET_ERR_HASH_FULL"\} 3$/m);
});

t.test('an address already gone counts as unbound', async (t) => {
  const { applier } = fakes();
  const report = await applier.apply([{ kind: 'address', op: 'unbind', device: 'kube-ipvs0', address: '10.96.0.9' }]);
  t.equal(report.applied.length, 1);
  t.equal(report.failed.length, 0);
});

t.test('runs keep plan order and split binds from unbinds', async (t) => {
  const bind = { kind: 'address', op: 'bind', device: 'kube-ipvs0', address: '10.0.0.1' } as const;
  const unbind = { ...bind, op: 'unbind' } as const;
  const ipvs = { kind: 'ipvs', batch: { op: 'deleteService', service: { protocol: 'tcp', address: '10.0.0.2', port: 80 } } } as const;
  t.same(runs([ipvs, ipvs, bind, bind, unbind, ipvs]).map((r) => `${r.kind}${r.ops.length}`), ['ipvs2', 'address2', 'address1', 'ipvs1']);
});

t.test('jump rules go into their table section of the restore', async (t) => {
  const payload = '*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n*filter\n:KUBE-FORWARD - [0:0]\nCOMMIT\n';
  t.equal(
    withLines(payload, [{ table: 'filter', line: '-I FORWARD -j KUBE-FORWARD' }, { table: 'nat', line: '-I OUTPUT -j KUBE-SERVICES' }]),
    '*nat\n:KUBE-SERVICES - [0:0]\n-I OUTPUT -j KUBE-SERVICES\nCOMMIT\n*filter\n:KUBE-FORWARD - [0:0]\n-I FORWARD -j KUBE-FORWARD\nCOMMIT\n',
  );
  t.equal(withLines(payload, []), payload, 'nothing missing: the payload as is');
});

t.test('sysctls follow kube-proxy: conn_reuse_mode only on 4.1 to 5.8, ARP only with strictARP', async (t) => {
  const keys = (release: string, strictARP = false) => kubeProxySysctls({ strictARP }, release).map((s) => `${s.key}=${s.value}`);
  t.same(keys('6.1.0'), ['net.ipv4.vs.conntrack=1', 'net.ipv4.vs.expire_nodest_conn=1', 'net.ipv4.vs.expire_quiescent_template=1', 'net.ipv4.ip_forward=1']);
  t.ok(keys('5.4.0-100-generic').includes('net.ipv4.vs.conn_reuse_mode=0'), '5.4 sets conn_reuse_mode');
  t.notOk(keys('5.9.0').includes('net.ipv4.vs.conn_reuse_mode=0'), '5.9 does not');
  t.notOk(keys('4.0.9').includes('net.ipv4.vs.conn_reuse_mode=0'), '4.0 does not');
  t.same(keys('6.1.0', true).slice(-2), ['net.ipv4.conf.all.arp_ignore=1', 'net.ipv4.conf.all.arp_announce=2']);
  t.same(['4.0.9', '4.1.0', '5.8.18', '5.9.0', '6.1.0-37-amd64', 'unreadable'].map(connReuseMode), ['unsupported', 'set', 'set', 'left', 'left', 'left'], "conn_reuse_mode's three cases, as NewProxier tells them apart");
});

t.test("sysctls are written only where they differ, as kube-proxy's EnsureSysctl", async (t) => {
  const access = (values: Record<string, number>, writable = true) => {
    const written: string[] = [];
    return {
      written,
      read: async (keys: readonly string[]) => new Map(keys.filter((k) => k in values).map((k) => [k, values[k]] as [string, number])),
      write: async (sysctls: readonly { key: string; value: number }[]) => {
        if (!writable) throw new Error(`could not set ${sysctls.map((s) => `${s.key}=${s.value}: EROFS`).join('; ')}`);
        for (const s of sysctls) written.push(`${s.key}=${s.value}`);
      },
    };
  };
  const wanted = [{ key: 'a', value: 1 }, { key: 'b', value: 2 }, { key: 'c', value: 1 }];
  const partly = access({ a: 1, b: 0 });
  t.same(await ensureSysctls(partly, wanted), [{ key: 'b', before: 0, after: 2 }, { key: 'c', before: undefined, after: 1 }], 'the differing one and the unreadable one are changed, with what was read before');
  t.same(partly.written, ['b=2', 'c=1'], 'and only they are written');
  const readOnly = access({ a: 1, b: 2, c: 1 }, false);
  t.same(await ensureSysctls(readOnly, wanted), [], 'all as wanted: nothing written, so a read-only /proc/sys passes');
  await t.rejects(ensureSysctls(access({ a: 1, b: 2, c: 0 }, false), wanted), /could not set c=1: EROFS$/, 'one differing where nothing can be written: it alone is named');
});
