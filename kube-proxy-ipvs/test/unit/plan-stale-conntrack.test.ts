/**
 * Which UDP conntrack entries are stale (plan/stale-conntrack.ts), decided
 * as kube-proxy's conntrack cleanup decides: original destination a UDP
 * service's address and port (ClusterIP, external IP, a NodePort on a node
 * address), reply source (address and port, as since 1.34) not one of its serving endpoints (a serving one
 * that is no real server included), so every entry of a service without
 * endpoints; TCP services and other traffic left alone; only the services
 * a sync changed looked at after an incremental sync.
 */
import t from 'tap';
import type { ConntrackEntry } from 'ipvs-netlink';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { plan } from '../../lib/plan/planner.js';
import { Mirror } from '../../lib/plan/mirror.js';
import { allUdpTargets, changedUdpTargets, staleEntries } from '../../lib/plan/stale-conntrack.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';

const node = { name: 'node-a', addresses: ['192.168.1.10'] };

function objects(): KnownObjects {
  const s = new KnownObjects(node, defaultProxyConfig());
  s.upsertService(service('dns', { type: 'NodePort', clusterIP: '10.96.0.10', externalIPs: ['203.0.113.7'], ports: [{ name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 }, { name: 'dns-tcp', protocol: 'TCP', port: 53 }] }));
  // 10.244.3.5 is terminating: no real server while ready ones are left, still serving its flows.
  const terminating = endpoint('10.244.3.5', { ready: false, serving: true, terminating: true });
  s.upsertEndpointSlice(slice('dns', [endpoint('10.244.1.5'), endpoint('10.244.2.5'), terminating], [{ name: 'dns', protocol: 'UDP', port: 5353 }, { name: 'dns-tcp', protocol: 'TCP', port: 5353 }]));
  s.upsertService(service('empty', { clusterIP: '10.96.0.11', ports: [{ name: 'u', protocol: 'UDP', port: 9000 }] }));
  return s;
}

function udp(dst: string, dport: number, replySrc: string, extra: Partial<ConntrackEntry> = {}): ConntrackEntry {
  return {
    family: dst.includes(':') ? 'inet6' : 'inet', protocol: 'udp', protonum: 17,
    orig: { src: '10.0.0.1', dst, srcPort: 40000, dstPort: dport },
    reply: { src: replySrc, dst: '10.0.0.1', srcPort: 5353, dstPort: 40000 },
    status: [], mark: 0, zone: 0, id: 7, ...extra,
  };
}

t.test('every UDP service with all its serving endpoints (real servers or not), one without endpoints with none; no TCP', async (t) => {
  const targets = allUdpTargets(objects().desired);
  t.same([...targets.keys()], ['inet']);
  const list = targets.get('inet')!.map((x) => `${x.address}:${x.port} -> ${[...x.endpoints].sort().join(',')}`).sort();
  t.same(list, [
    '10.96.0.10:53 -> 10.244.1.5/5353,10.244.2.5/5353,10.244.3.5/5353',
    '10.96.0.11:9000 -> ',
    '192.168.1.10:30053 -> 10.244.1.5/5353,10.244.2.5/5353,10.244.3.5/5353',
    '203.0.113.7:53 -> 10.244.1.5/5353,10.244.2.5/5353,10.244.3.5/5353',
  ]);
});

t.test('stale: to a service address and port, answered by something not serving it', async (t) => {
  const targets = allUdpTargets(objects().desired).get('inet')!;
  const entries: ConntrackEntry[] = [
    udp('10.96.0.10', 53, '10.244.1.5'), // a serving endpoint: kept
    udp('10.96.0.10', 53, '10.244.3.5'), // a terminating one, no real server but still serving: kept
    udp('10.96.0.10', 53, '10.244.9.9'), // a removed endpoint: stale
    { ...udp('10.96.0.10', 53, '10.244.2.5', { id: 9 }), reply: { src: '10.244.2.5', dst: '10.0.0.1', srcPort: 5300, dstPort: 40000 } }, // a serving pod, at the port it had before: stale
    udp('10.96.0.10', 53, '10.96.0.10'), // sent while the service had no endpoint: stale
    udp('192.168.1.10', 30053, '10.244.9.9', { id: 8 }), // the NodePort: stale
    udp('203.0.113.7', 53, '10.244.9.9', { id: undefined }), // an external IP: stale, no id to pin
    udp('10.96.0.10', 54, '10.244.9.9'), // another port: not a service
    udp('10.96.0.11', 9000, '10.244.7.7'), // a service whose endpoints are all gone: stale
    { ...udp('10.96.0.10', 53, '10.244.9.9'), protocol: 'tcp', protonum: 6 }, // TCP: left alone
  ];
  const stale = staleEntries(entries, targets);
  t.same(stale.map((k) => `${k.orig!.dst}:${k.orig!.dstPort} id=${k.id}`), ['10.96.0.10:53 id=7', '10.96.0.10:53 id=9', '10.96.0.10:53 id=7', '192.168.1.10:30053 id=8', '203.0.113.7:53 id=undefined', '10.96.0.11:9000 id=7']);
  t.same(stale[0], { family: 'inet', protocol: 'udp', orig: entries[2].orig, zone: 0, id: 7 }, 'named by original tuple, zone and id');
});

t.test('after an incremental sync, only the UDP services it changed', async (t) => {
  const s = objects();
  const mirror = new Mirror();
  mirror.record(plan(s.desired, mirror));
  s.upsertEndpointSlice(slice('dns', [endpoint('10.244.1.5')], [{ name: 'dns', protocol: 'UDP', port: 5353 }, { name: 'dns-tcp', protocol: 'TCP', port: 5353 }]));
  const ops = plan(s.desired, mirror);
  const targets = changedUdpTargets(s.desired, ops).get('inet')!;
  t.same(targets.map((x) => `${x.address}:${x.port}`).sort(), ['10.96.0.10:53', '192.168.1.10:30053', '203.0.113.7:53']);
  t.same([...targets[0].endpoints], ['10.244.1.5/5353'], 'the endpoints that now serve');
  // The last endpoint goes: its flows reach nothing now.
  s.upsertEndpointSlice(slice('dns', [], [{ name: 'dns', protocol: 'UDP', port: 5353 }, { name: 'dns-tcp', protocol: 'TCP', port: 5353 }]));
  mirror.record(ops);
  const gone = changedUdpTargets(s.desired, plan(s.desired, mirror)).get('inet')!;
  t.same(gone.map((x) => `${x.address}:${x.port} -> ${x.endpoints.size}`).sort(), ['10.96.0.10:53 -> 0', '192.168.1.10:30053 -> 0', '203.0.113.7:53 -> 0'], 'looked at, with no endpoint to keep');
  t.same(changedUdpTargets(s.desired, []).size, 0, 'nothing changed, nothing looked at');
  // The terminating endpoint leaves its slice: no real server changes, but its flows are stale now.
  const before = objects();
  const m = new Mirror();
  m.record(plan(before.desired, m));
  const touched = before.upsertEndpointSlice(slice('dns', [endpoint('10.244.1.5'), endpoint('10.244.2.5')], [{ name: 'dns', protocol: 'UDP', port: 5353 }, { name: 'dns-tcp', protocol: 'TCP', port: 5353 }]));
  const none = plan(before.desired, m, { scope: touched });
  t.same(none.filter((o) => o.kind === 'ipvs'), [], 'no IPVS operation');
  const looked = changedUdpTargets(before.desired, none, touched.virtualServers).get('inet')!;
  t.same(looked.map((x) => `${x.address}:${x.port} -> ${[...x.endpoints].sort().join(',')}`).sort(), ['10.96.0.10:53 -> 10.244.1.5/5353,10.244.2.5/5353', '192.168.1.10:30053 -> 10.244.1.5/5353,10.244.2.5/5353', '203.0.113.7:53 -> 10.244.1.5/5353,10.244.2.5/5353'], "looked at, the terminating endpoint's entries no longer kept");
});

t.test('a deleted UDP Service: every entry to its addresses is stale; a TCP one and a replaced one are not looked at as deleted', async (t) => {
  const s = objects();
  const mirror = new Mirror();
  mirror.record(plan(s.desired, mirror));
  s.deleteService('default', 'dns');
  const ops = plan(s.desired, mirror);
  t.ok(ops.some((o) => o.kind === 'ipvs' && o.batch.op === 'deleteService'), 'the sync deletes its virtual servers');
  const targets = changedUdpTargets(s.desired, ops).get('inet')!;
  t.same(targets.map((x) => `${x.address}:${x.port} -> ${x.endpoints.size}`).sort(), ['10.96.0.10:53 -> 0', '192.168.1.10:30053 -> 0', '203.0.113.7:53 -> 0'], 'its UDP addresses, with no endpoint to keep; not its TCP port');
  t.same(staleEntries([udp('10.96.0.10', 53, '10.244.1.5'), udp('10.96.0.10', 53, '10.96.0.10')], targets).length, 2, 'a flow to a pod it had is stale now');
});

t.test('a full sync or a resync looks at what it deleted too', async (t) => {
  const s = objects();
  const mirror = new Mirror();
  mirror.record(plan(s.desired, mirror));
  s.deleteService('default', 'dns');
  const ops = plan(s.desired, mirror);
  const all = allUdpTargets(s.desired, ops).get('inet')!;
  t.same(all.map((x) => `${x.address}:${x.port} -> ${x.endpoints.size}`).sort(), ['10.96.0.10:53 -> 0', '10.96.0.11:9000 -> 0', '192.168.1.10:30053 -> 0', '203.0.113.7:53 -> 0'], "the deleted Service's addresses beside the UDP services kept");
});
