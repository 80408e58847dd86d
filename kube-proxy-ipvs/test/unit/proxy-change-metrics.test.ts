/**
 * The proxy's object events in kube-proxy's change metrics, fed from an
 * in-memory source to a fake controller: programming latency only for
 * trigger times after the start and never from a deletion (which drops
 * its Service's pending ones), EndpointSlice changes only for the slices a
 * family's tracker takes, a no-op Service update counted but neither
 * pending nor queuing a sync, and objects an informer hands over again
 * unchanged (a relist's, a resync's) counted by the trackers that take
 * them and nothing more.
 */
import t from 'tap';
import type { AddressFamily } from 'ipvs-netlink/address';
import type { EndpointSlice, Node, Service } from '../../lib/kubernetes/model.js';
import type { Clock } from '../../lib/proxy/clock.js';
import { defaultOptions } from '../../lib/proxy/options.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import type { SourceEvent } from '../../lib/proxy/sources/source.js';
import { FakeClock } from '../support/fake-clock.js';
import { fakeFactory } from '../support/fake-controller.js';
import { fakeHost } from '../support/fake-host.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';
import { logger, until } from '../support/started-proxy.js';
import { MemorySource } from '../support/memory-source.js';

const NODE: Node = { metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.56.10' }] } } as Node;
const web = (labels?: Record<string, string>, port = 80): Service => {
  const s = service('web', { clusterIP: '10.96.0.10', ports: [{ name: 'http', port }] });
  if (labels) s.metadata.labels = labels;
  return s;
};
const ports = [{ name: 'http', port: 8080 }];
const triggered = (s: EndpointSlice, at: Date): EndpointSlice => ({ ...s, metadata: { ...s.metadata, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': at.toISOString() } } });
const webSlice = (name: string, address: string, at?: Date) => {
  const s = slice('web', [endpoint(address, { node: 'node-b' })], ports, { name });
  return at ? triggered(s, at) : s;
};
const ev = (kind: 'Service' | 'EndpointSlice', type: SourceEvent['type'], object: Service | EndpointSlice) => ({ kind, type, object }) as SourceEvent;

async function running(t: { teardown(fn: () => unknown): void }, initial: SourceEvent[], families: AddressFamily[] = ['inet'], clock?: Clock) {
  const source = new MemorySource([{ kind: 'Node', type: 'add', object: NODE }, ...initial]);
  const factory = fakeFactory();
  const o = { ...defaultOptions(), hostnameOverride: 'node-a', healthzBindAddress: '', metricsBindAddress: '' };
  const proxy = new Proxy({ ...o, ipvs: { ...o.ipvs, minSyncPeriodMs: 0 } }, { source, controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(families), clock });
  t.teardown(() => proxy.stop());
  await proxy.start();
  await proxy.waitForSync(5000);
  const value = async (series: string) => {
    const line = (await proxy.metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };
  return { source, controller: factory.last!, value };
}

const HOUR = 3_600_000;
const latencies = 'kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"}';

t.test('programming latency: only trigger times after the start', async (t) => {
  const { source, controller, value } = await running(t, [ev('Service', 'add', web()), ev('EndpointSlice', 'add', webSlice('web-1', '10.244.2.5', new Date(Date.now() - HOUR)))]);
  t.equal(await value(latencies), undefined, 'a change made an hour before the start is no latency of ours');
  source.emit(ev('EndpointSlice', 'update', webSlice('web-2', '10.244.2.6', new Date(Date.now() - 2 * HOUR))), ev('EndpointSlice', 'update', webSlice('web-1', '10.244.2.7', new Date())));
  await until('the sync', () => controller.syncs.incremental === 1);
  t.equal(await value(latencies), 1, 'only the change made since');
});

t.test('programming latency: a deletion measures nothing and drops its Service\'s pending trigger times', async (t) => {
  const { source, controller, value } = await running(t, [ev('Service', 'add', web()), ev('EndpointSlice', 'add', webSlice('web-1', '10.244.2.5'))]);
  controller.failSyncs = 1;
  source.emit(ev('EndpointSlice', 'update', webSlice('web-1', '10.244.2.6', new Date())));
  await until('the failed sync', () => controller.calls.filter((c) => c === 'sync').length === 2 && controller.failSyncs === 0);
  source.emit(ev('EndpointSlice', 'delete', webSlice('web-1', '10.244.2.6', new Date())));
  await until('the resync that follows', () => controller.syncs.resync === 1);
  t.equal(await value(latencies), undefined, 'the slice is gone: its change is not measured');
});

t.test('EndpointSlice changes: only those a family tracker takes', async (t) => {
  const { source, controller, value } = await running(t, [ev('Service', 'add', web()), ev('EndpointSlice', 'add', webSlice('web-1', '10.244.2.5'))]);
  t.equal(await value('kubeproxy_sync_proxy_rules_endpoint_changes_total'), 1);
  const v6 = slice('web', [endpoint('fd00:244::5', { node: 'node-b' })], ports, { name: 'web-v6', addressType: 'IPv6' });
  const fqdn = slice('web', [endpoint('web.example.com', { node: 'node-b' })], ports, { name: 'web-fqdn', addressType: 'FQDN' });
  const unowned = { ...webSlice('stray', '10.244.2.9'), metadata: { name: 'stray', namespace: 'default' } };
  source.emit(ev('EndpointSlice', 'add', v6), ev('EndpointSlice', 'add', fqdn), ev('EndpointSlice', 'add', unowned));
  source.emit(ev('EndpointSlice', 'update', webSlice('web-1', '10.244.2.6')));
  await until('the sync', () => controller.syncs.incremental >= 1);
  t.equal(await value('kubeproxy_sync_proxy_rules_endpoint_changes_total'), 2, 'an IPv6 slice on an IPv4-only node, an FQDN slice and one naming no Service are not counted');
});

t.test('Service changes: each family counts the event; a no-op update is neither pending nor queues a sync', async (t) => {
  // Time stands still: the failed syncs' retry, a resync that would take the changes, never comes however slow the test runs.
  const { source, controller, value } = await running(t, [ev('Service', 'add', web())], ['inet', 'inet6'], new FakeClock());
  t.equal(await value('kubeproxy_sync_proxy_rules_service_changes_total'), 2, 'the IPv4 and the IPv6 tracker each count the Service');
  controller.failSyncs = 1000;
  const syncs = () => controller.calls.filter((c) => c === 'sync').length;
  const queued = await value('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}');
  source.emit(ev('Service', 'update', web({ team: 'a' })));
  await until('the event', () => controller.calls.filter((c) => c === 'upsertService web').length === 2);
  t.equal(await value('kubeproxy_sync_proxy_rules_service_changes_total'), 4);
  t.equal(await value('kubeproxy_sync_proxy_rules_service_changes_pending'), 0, 'a label only: nothing to sync');
  t.equal(await value('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}'), queued, 'and no sync queued');
  const syncsBefore = syncs();
  source.emit(ev('Service', 'update', web({ team: 'a' }, 81)), ev('Service', 'update', web({ team: 'b' }, 82)));
  await until('the events', () => controller.calls.filter((c) => c === 'upsertService web').length === 4);
  t.equal(await value('kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'two changes of one Service: one pending Service');
  source.emit(ev('Service', 'update', web({ team: 'c' })));
  await until('the event', () => controller.calls.filter((c) => c === 'upsertService web').length === 5);
  t.equal(await value('kubeproxy_sync_proxy_rules_service_changes_pending'), 0, 'its ports back to what the last sync took: nothing pending, as upstream');
  t.equal(syncs(), syncsBefore, 'no sync took the changes meanwhile (the failed one backs off): the gauge counted them');
});

t.test('an update that changes only the metadata is a change: kube-proxy compares the slice whole', async (t) => {
  // Since kubernetes#124626 (1.31) the EndpointSliceCache keeps the slice itself and compares it with reflect.DeepEqual.
  const { source, controller, value } = await running(t, [ev('Service', 'add', web()), ev('EndpointSlice', 'add', webSlice('web-1', '10.244.2.5'))]);
  const syncs = controller.syncs.incremental;
  const before = webSlice('web-1', '10.244.2.5');
  source.emit(ev('EndpointSlice', 'update', { ...before, metadata: { ...before.metadata, resourceVersion: '7' } }));
  await until('the sync', () => controller.syncs.incremental === syncs + 1);
  t.equal(await value('kubeproxy_sync_proxy_rules_endpoint_changes_total'), 2);
});

t.test('objects handed over again unchanged: counted by the trackers that take them, nothing pending, no sync', async (t) => {
  const v6 = slice('web', [endpoint('fd00:244::5', { node: 'node-b' })], ports, { name: 'web-v6', addressType: 'IPv6' });
  const fqdn = slice('web', [endpoint('web.example.com', { node: 'node-b' })], ports, { name: 'web-fqdn', addressType: 'FQDN' });
  const unowned = { ...webSlice('stray', '10.244.2.9'), metadata: { name: 'stray', namespace: 'default' } };
  const v4 = webSlice('web-1', '10.244.2.5');
  const objects = [ev('Service', 'add', web()), ev('EndpointSlice', 'add', v4), ev('EndpointSlice', 'add', v6), ev('EndpointSlice', 'add', fqdn), ev('EndpointSlice', 'add', unowned)];
  const { source, controller, value } = await running(t, objects, ['inet', 'inet6']);
  const services = 'kubeproxy_sync_proxy_rules_service_changes_total';
  const endpoints = 'kubeproxy_sync_proxy_rules_endpoint_changes_total';
  t.equal(await value(services), 2);
  t.equal(await value(endpoints), 2, 'the IPv4 and the IPv6 slice');
  const queued = await value('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}');
  const calls = controller.calls.length;

  source.resync();
  t.equal(await value(services), 4, 'a resync: each family\'s tracker counts the Service');
  t.equal(await value(endpoints), 4, 'and the slice of its address type, not the FQDN one nor the one naming no Service');

  source.replay(ev('Service', 'update', web()), ev('EndpointSlice', 'update', v6), ev('EndpointSlice', 'update', fqdn), ev('EndpointSlice', 'update', unowned));
  t.equal(await value(services), 6, 'a relist\'s unchanged Service');
  t.equal(await value(endpoints), 5, 'and its unchanged slices, as a resync counts them');

  await new Promise((r) => setTimeout(r, 50));
  t.equal(await value('kubeproxy_sync_proxy_rules_service_changes_pending'), 0);
  t.equal(await value('kubeproxy_sync_proxy_rules_endpoint_changes_pending'), 0);
  t.equal(await value('kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}'), queued, 'no sync queued');
  t.same(controller.calls.slice(calls), [], 'and the controller asked nothing');
});
