/**
 * The planner on updates: one change → exactly that change's operations,
 * whatever the cluster size; graceful termination; resync against drift;
 * excludeCIDRs; restart adoption.
 */
import t from 'tap';
import { Mirror } from '../../lib/plan/mirror.js';
import { defaultProxyConfig, type EndpointSlice, type NodeInfo } from '../../lib/kubernetes/model.js';
import { gracefulRemovals, plan, planDrainedDeletions } from '../../lib/plan/planner.js';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { compareDestinations, destinationKey, type CurrentDestination, type Operation } from '../../lib/plan/kernel-state.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';

const node: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'] };
const config = defaultProxyConfig({ excludeCIDRs: ['10.200.0.0/16'] });

/** Service i: 10.96.<hi>.<lo>:80; its endpoint k is 10.<100+k>.<hi>.<lo>:8080 (on no node: remote). */
function clusterIP(i: number): string {
  return `10.96.${i >> 8}.${i & 255}`;
}
function svc(i: number, protocol: 'TCP' | 'UDP' = 'TCP', port = 80) {
  return service(`svc-${i}`, { clusterIP: clusterIP(i), ports: [{ name: 'p', protocol, port }] });
}
function endpoints(i: number, count: number, protocol: 'TCP' | 'UDP' = 'TCP'): EndpointSlice {
  const eps = Array.from({ length: count }, (_, k) => endpoint(`10.${100 + k}.${i >> 8}.${i & 255}`));
  return slice(`svc-${i}`, eps, [{ name: 'p', protocol, port: 8080 }]);
}

/** A cluster of `n` services, programmed: the mirror holds what the first sync applied. */
function programmed(n: number, protocolOf: (i: number) => 'TCP' | 'UDP' = () => 'TCP') {
  const state = new KnownObjects(node, config);
  for (let i = 1; i <= n; i++) {
    state.upsertService(svc(i, protocolOf(i)));
    state.upsertEndpointSlice(endpoints(i, 2, protocolOf(i)));
  }
  const mirror = new Mirror();
  mirror.record(plan(state.desired, mirror, { excludeCIDRs: config.excludeCIDRs }));
  t.same(plan(state.desired, mirror), [], 'a second full plan is empty');
  return { state, mirror };
}

function ipvsOps(ops: Operation[]) {
  return ops.map((o) => (o.kind === 'ipvs' ? o.batch : o));
}

const tcp = (i: number) => ({ protocol: 'tcp' as const, address: clusterIP(i), port: 80 });

t.test('one endpoint added to one of 1,000 services → exactly one addDestination', async (t) => {
  const { state, mirror } = programmed(1000);
  const scope = state.upsertEndpointSlice(endpoints(500, 3));
  const ops = plan(state.desired, mirror, { scope });
  t.strictSame(ipvsOps(ops), [{ op: 'addDestination', service: tcp(500), destination: { address: '10.102.1.244', port: 8080, weight: 1 } }]);
  t.equal(scope.virtualServers.size, 1, 'only that service was looked at');
});

t.test('one endpoint removed: TCP → weight 0 (graceful), UDP → deleted at once; it comes back → weight 1', async (t) => {
  const { state, mirror } = programmed(1000, (i) => (i % 2 ? 'TCP' : 'UDP'));
  let ops = plan(state.desired, mirror, { scope: state.upsertEndpointSlice(endpoints(501, 1)) });
  t.strictSame(ipvsOps(ops), [{ op: 'updateDestination', service: tcp(501), destination: { address: '10.101.1.245', port: 8080, weight: 0 } }]);
  mirror.record(ops);

  ops = plan(state.desired, mirror, { scope: state.upsertEndpointSlice(endpoints(502, 1, 'UDP')) });
  t.strictSame(ipvsOps(ops), [
    { op: 'deleteDestination', service: { protocol: 'udp', address: clusterIP(502), port: 80 }, destination: { address: '10.101.1.246', port: 8080 } },
  ]);
  mirror.record(ops);

  // Unrelated update of the same service: the draining server is not touched again.
  t.strictSame(plan(state.desired, mirror, { scope: state.upsertEndpointSlice(endpoints(501, 1)) }), []);

  ops = plan(state.desired, mirror, { scope: state.upsertEndpointSlice(endpoints(501, 2)) });
  t.strictSame(ipvsOps(ops), [{ op: 'updateDestination', service: tcp(501), destination: { address: '10.101.1.245', port: 8080, weight: 1 } }]);
});

t.test('GracefulDeleteRS: a TCP real server is quiesced first whatever its count; once at weight 0, an idle one is deleted, a busy one drains', async (t) => {
  const { state, mirror } = programmed(1000, (i) => (i % 2 ? 'TCP' : 'UDP'));
  const scope = state.upsertEndpointSlice(endpoints(501, 0)); // both endpoints of a TCP service leave
  const first = plan(state.desired, mirror, { scope });
  t.strictSame([...gracefulRemovals(first)], [['tcp/10.96.1.245/80', tcp(501)]], 'gracefulRemovals names the one virtual server to read');

  // Counts read while the real servers can still be chosen are stale by the time a delete lands:
  // even an idle one is quiesced, not deleted.
  const connections = new Map([['tcp/10.96.1.245/80', new Map([['10.100.1.245/8080', 0], ['10.101.1.245/8080', 3]])]]);
  const quiesce = [
    { op: 'updateDestination', service: tcp(501), destination: { address: '10.100.1.245', port: 8080, weight: 0 } },
    { op: 'updateDestination', service: tcp(501), destination: { address: '10.101.1.245', port: 8080, weight: 0 } },
  ];
  t.strictSame(ipvsOps(first), quiesce, 'without counts: both quiesced');
  t.strictSame(ipvsOps(plan(state.desired, mirror, { scope, connections })), quiesce, 'with counts read at weight 1: both quiesced all the same');

  mirror.record(first);
  t.strictSame(ipvsOps(plan(state.desired, mirror, { scope, connections })), [
    { op: 'deleteDestination', service: tcp(501), destination: { address: '10.100.1.245', port: 8080 } },
  ], 'at weight 0: the idle one is deleted, the one with connections drains');

  const udpScope = state.upsertEndpointSlice(endpoints(502, 1, 'UDP'));
  const udpConnections = new Map([['udp/10.96.1.246/80', new Map([['10.101.1.246/8080', 5]])]]);
  t.strictSame(ipvsOps(plan(state.desired, mirror, { scope: udpScope, connections: udpConnections })), [
    { op: 'deleteDestination', service: { protocol: 'udp', address: '10.96.1.246', port: 80 }, destination: { address: '10.101.1.246', port: 8080 } },
  ], 'UDP is deleted at once whatever its connections');
  t.equal(gracefulRemovals(plan(state.desired, mirror, { scope: udpScope })).size, 0, 'so nothing is read for UDP');
});

t.test('SCTP real servers are deleted at once (IsRsGracefulTerminationNeeded)', async (t) => {
  const state = new KnownObjects(node, config);
  const sctp = service('sig', { clusterIP: '10.96.7.7', ports: [{ name: 'p', protocol: 'SCTP', port: 3868 }] });
  state.upsertService(sctp);
  state.upsertEndpointSlice(slice('sig', [endpoint('10.244.1.1'), endpoint('10.244.1.2')], [{ name: 'p', protocol: 'SCTP', port: 3868 }]));
  const mirror = new Mirror();
  mirror.record(plan(state.desired, mirror));
  const ops = plan(state.desired, mirror, { scope: state.upsertEndpointSlice(slice('sig', [endpoint('10.244.1.1')], [{ name: 'p', protocol: 'SCTP', port: 3868 }])) });
  t.strictSame(ipvsOps(ops), [{ op: 'deleteDestination', service: { protocol: 'sctp', address: '10.96.7.7', port: 3868 }, destination: { address: '10.244.1.2', port: 3868 } }]);
});

t.test('a resync finds a weight-0 leftover nobody wants with no connections: deleted; with connections: left draining', async (t) => {
  const { state, mirror } = programmed(3);
  const kernel = structuredCloneMirror(mirror);
  withDestination(kernel, 'tcp/10.96.0.3/80', { address: '10.9.9.9', port: 8080, weight: 0, activeConns: 0, inactiveConns: 0 });
  withDestination(kernel, 'tcp/10.96.0.2/80', { address: '10.9.9.8', port: 8080, weight: 0, activeConns: 1, inactiveConns: 0 });
  const connections = new Map([
    ['tcp/10.96.0.3/80', new Map([['10.9.9.9/8080', 0]])],
    ['tcp/10.96.0.2/80', new Map([['10.9.9.8/8080', 1]])],
  ]);
  t.strictSame(ipvsOps(plan(state.desired, kernel, { connections })), [{ op: 'deleteDestination', service: tcp(3), destination: { address: '10.9.9.9', port: 8080 } }]);
});

t.test('drained TCP real servers are deleted once their connections are gone', async (t) => {
  const { state, mirror } = programmed(3);
  mirror.record(plan(state.desired, mirror, { scope: state.upsertEndpointSlice(endpoints(2, 1)) }));
  const dest = mirror.virtualServers.get('tcp/10.96.0.2/80')!.destinations.find((d) => destinationKey(d) === '10.101.0.2/8080')!;
  t.equal(dest.weight, 0);
  Object.assign(dest, { activeConns: 1, inactiveConns: 0 });
  t.strictSame(planDrainedDeletions(state.desired, mirror), [], 'still has a connection');
  Object.assign(dest, { activeConns: 0, inactiveConns: 0 });
  t.strictSame(ipvsOps(planDrainedDeletions(state.desired, mirror)), [
    { op: 'deleteDestination', service: tcp(2), destination: { address: '10.101.0.2', port: 8080 } },
  ]);
});

t.test("a service's port changes: new virtual server and set entry in, old ones out; the address stays", async (t) => {
  const { state, mirror } = programmed(1000);
  const ops = plan(state.desired, mirror, { scope: state.upsertService(svc(7, 'TCP', 8080)) });
  const vs8080 = { protocol: 'tcp' as const, address: '10.96.0.7', port: 8080 };
  t.strictSame(ipvsOps(ops), [
    { kind: 'ipset', op: 'add', set: 'KUBE-CLUSTER-IP', entries: ['10.96.0.7,tcp:8080'] },
    { op: 'addService', service: { ...vs8080, scheduler: 'rr' } },
    { op: 'addDestination', service: vs8080, destination: { address: '10.100.0.7', port: 8080, weight: 1 } },
    { op: 'addDestination', service: vs8080, destination: { address: '10.101.0.7', port: 8080, weight: 1 } },
    { op: 'deleteService', service: tcp(7) },
    { kind: 'ipset', op: 'del', set: 'KUBE-CLUSTER-IP', entries: ['10.96.0.7,tcp:80'] },
  ]);
});

t.test('a service is deleted: its virtual server, set entries and address go', async (t) => {
  const { state, mirror } = programmed(1000);
  const ops = plan(state.desired, mirror, { scope: state.deleteService('default', 'svc-9') });
  t.strictSame(ipvsOps(ops), [
    { kind: 'address', op: 'unbind', device: 'kube-ipvs0', address: '10.96.0.9' },
    { op: 'deleteService', service: tcp(9) },
    { kind: 'ipset', op: 'del', set: 'KUBE-CLUSTER-IP', entries: ['10.96.0.9,tcp:80'] },
    { kind: 'ipset', op: 'del', set: 'KUBE-IPVS-IPS', entries: ['10.96.0.9'] },
  ]);
});

t.test('the last service goes: set-based iptables rules go with it', async (t) => {
  const { state, mirror } = programmed(1);
  const ops = plan(state.desired, mirror, { scope: state.deleteService('default', 'svc-1') });
  const iptables = ops.filter((o) => o.kind === 'iptables');
  t.equal(iptables.length, 1);
  t.notMatch((iptables[0] as { restore: string }).restore, 'KUBE-CLUSTER-IP src,dst');
  t.strictSame(
    ops.map((o) => o.kind),
    ['iptables', 'address', 'ipvs', 'ipset', 'ipset'],
  );
});

t.test('resync against drift: a virtual server deleted by hand and a stray address → exactly the repairs', async (t) => {
  const { state, mirror } = programmed(1000);
  const kernel = structuredCloneMirror(mirror);
  kernel.virtualServers.delete('tcp/10.96.1.44/80'); // service 300
  kernel.boundAddresses.add('10.96.250.250');
  const ops = plan(state.desired, kernel, { excludeCIDRs: config.excludeCIDRs });
  t.strictSame(ipvsOps(ops), [
    { op: 'addService', service: { ...tcp(300), scheduler: 'rr' } },
    { op: 'addDestination', service: tcp(300), destination: { address: '10.100.1.44', port: 8080, weight: 1 } },
    { op: 'addDestination', service: tcp(300), destination: { address: '10.101.1.44', port: 8080, weight: 1 } },
    { kind: 'address', op: 'unbind', device: 'kube-ipvs0', address: '10.96.250.250' },
  ]);
});

t.test('virtual servers inside excludeCIDRs are never removed; others we do not want are', async (t) => {
  const { state } = programmed(2);
  const kernel = Mirror.fromKernel({
    virtualServers: [
      { protocol: 'tcp', address: '10.200.0.1', port: 80, scheduler: 'wlc', destinations: [{ address: '10.0.0.1', port: 80, weight: 1 }] },
      { protocol: 'tcp', address: '10.201.0.1', port: 80, scheduler: 'wlc', destinations: [] },
      { fwmark: 7, family: 'inet', scheduler: 'wlc', destinations: [] },
    ],
    ipsets: [],
    boundAddresses: [],
  });
  const ops = plan(state.desired, kernel, { excludeCIDRs: config.excludeCIDRs }).filter((o) => o.kind === 'ipvs' && o.batch.op === 'deleteService');
  t.strictSame(ipvsOps(ops), [{ op: 'deleteService', service: { protocol: 'tcp', address: '10.201.0.1', port: 80 } }]);
});

t.test('restart adoption: existing state is kept, weight-0 leftovers of wanted endpoints reset to 1, unknown iptables rewritten', async (t) => {
  const { state, mirror } = programmed(3);
  const kernel = Mirror.fromKernel({
    virtualServers: [...mirror.virtualServers.values()].map((vs) => ({
      ...vs.service,
      destinations: [...vs.destinations.values()].map((d) => ({ ...d, weight: vs.service.address === '10.96.0.2' ? 0 : 1 })),
    })),
    ipsets: [...mirror.ipsets].map(([name, s]) => ({ name, type: s.type, entries: [...s.entries] })),
    boundAddresses: [...mirror.boundAddresses],
  });
  // A leftover real server nobody wants, already at weight 0: left draining.
  withDestination(kernel, 'tcp/10.96.0.3/80', { address: '10.9.9.9', port: 8080, weight: 0 });
  const ops = plan(state.desired, kernel, { excludeCIDRs: config.excludeCIDRs });
  t.strictSame(ipvsOps(ops), [
    { op: 'updateDestination', service: tcp(2), destination: { address: '10.100.0.2', port: 8080, weight: 1 } },
    { op: 'updateDestination', service: tcp(2), destination: { address: '10.101.0.2', port: 8080, weight: 1 } },
    { kind: 'iptables', family: 'inet', restore: state.desired.iptables.get('inet') },
  ]);
});

t.test('a scheduler or affinity change updates the virtual server in place', async (t) => {
  const { state, mirror } = programmed(2);
  const sticky = service('svc-1', { clusterIP: clusterIP(1), sessionAffinity: 'ClientIP', ports: [{ name: 'p', port: 80 }] });
  const ops = plan(state.desired, mirror, { scope: state.upsertService(sticky) });
  t.strictSame(ipvsOps(ops), [{ op: 'updateService', service: { ...tcp(1), scheduler: 'rr', persistent: { timeout: 10800 } } }]);
});

t.test('an empty current state gets sets before entries, servers before addresses, iptables last of the additions', async (t) => {
  const { state } = programmed(1);
  const kinds = plan(state.desired, new Mirror()).map((o) => (o.kind === 'ipvs' ? o.batch.op : `${o.kind}:${'op' in o ? o.op : ''}`));
  t.strictSame(kinds.filter((k, i) => kinds.indexOf(k) === i), ['ipset:create', 'ipset:add', 'addService', 'addDestination', 'address:bind', 'iptables:']);
});

/** A real server the kernel holds besides what was programmed (drift, a leftover), in its place in the list. */
function withDestination(m: Mirror, key: string, d: CurrentDestination): void {
  const list = m.virtualServers.get(key)!.destinations;
  list.push(d);
  list.sort(compareDestinations);
}

function structuredCloneMirror(m: Mirror): Mirror {
  const copy = Mirror.fromKernel({
    virtualServers: [...m.virtualServers.values()].map((vs) => ({ ...vs.service, destinations: [...vs.destinations.values()] })),
    ipsets: [...m.ipsets].map(([name, s]) => ({ name, type: s.type, entries: [...s.entries] })),
    boundAddresses: [...m.boundAddresses],
  });
  for (const [f, r] of m.iptables) copy.iptables.set(f, r);
  return copy;
}

t.test('two services claiming one VIP:port: the first keeps it; the other takes over when it goes', async (t) => {
  const state = new KnownObjects(node, config);
  const a = service('a', { clusterIP: '10.96.5.5', ports: [{ name: 'p', port: 80 }] });
  const b = service('b', { clusterIP: '10.96.5.5', ports: [{ name: 'p', port: 80 }] });
  const dests = (ip: string) => [{ address: ip, port: 8080, weight: 1 }];
  state.upsertEndpointSlice(slice('a', [endpoint('10.1.0.1')], [{ name: 'p', port: 8080 }]));
  state.upsertEndpointSlice(slice('b', [endpoint('10.2.0.2')], [{ name: 'p', port: 8080 }]));
  state.upsertService(a);
  const scope = state.upsertService(b);
  t.same([...scope.virtualServers], ['tcp/10.96.5.5/80'], 'the claim is looked at');
  t.same(state.desired.virtualServers.get('tcp/10.96.5.5/80')!.destinations, dests('10.1.0.1'), 'the first claimant keeps it');
  state.upsertEndpointSlice(slice('b', [endpoint('10.2.0.3')], [{ name: 'p', port: 8080 }]));
  t.same(state.desired.virtualServers.get('tcp/10.96.5.5/80')!.destinations, dests('10.1.0.1'), 'the waiting one changing changes nothing');
  state.deleteService('default', 'a');
  t.same(state.desired.virtualServers.get('tcp/10.96.5.5/80')!.destinations, dests('10.2.0.3'), 'when it goes, the other takes over with its latest version');
  t.ok(state.desired.boundAddresses.has('10.96.5.5'), 'the address stays bound');
  state.deleteService('default', 'b');
  t.notOk(state.desired.virtualServers.has('tcp/10.96.5.5/80'), 'gone with the last claimant');
  t.notOk(state.desired.boundAddresses.has('10.96.5.5'));
});

t.test('what is kept of an object is what the mapping reads: metadata, unused fields and extra endpoint addresses go', async (t) => {
  const state = new KnownObjects(node, config);
  const big = service('big', { clusterIP: '10.96.6.6', ports: [{ name: 'p', port: 80, targetPort: 8080 }] });
  big.metadata.annotations = { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(10_000) };
  const s = slice('big', [{ addresses: ['10.3.0.1', '10.3.0.2'], conditions: { ready: true }, nodeName: 'node-b', zone: 'z' }], [{ name: 'p', port: 8080 }]);
  state.upsertService(big);
  state.upsertEndpointSlice(s);
  const kept = JSON.stringify([(state as unknown as { services: Map<string, unknown> }).services, (state as unknown as { slices: Map<string, unknown> }).slices], (_, v) => (v instanceof Map ? [...v] : v));
  t.notOk(kept.includes('xxxx'), 'annotations are not kept');
  t.notOk(kept.includes('10.3.0.2'), 'only the first address of an endpoint is kept');
  t.notOk(kept.includes('targetPort'), 'nor fields the mapping does not read');
  t.same(state.desired.virtualServers.get('tcp/10.96.6.6/80')!.destinations, [{ address: '10.3.0.1', port: 8080, weight: 1 }]);
});
