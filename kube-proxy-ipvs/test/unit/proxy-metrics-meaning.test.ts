/**
 * What kube-proxy's metrics mean, series by series, in ProxyMetrics: the
 * HELP text component-base writes ("[ALPHA] " before each of kube-proxy's
 * metrics, none before ours), the programming-latency buckets from 0,
 * kubernetes_build_info, and the change counters as the per-family change
 * trackers keep them: a Service event counted by each family's tracker,
 * pending Services each once and only for a change to sync, pending
 * cleared when a sync takes the changes, and the queued timestamp set only
 * when a sync is queued for that family.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import t from 'tap';
import type { ServiceReading } from '../../lib/desired/service-change.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { idleCounters } from '../support/fake-controller.js';

async function scrape(m: ProxyMetrics): Promise<string[]> {
  return (await m.registry.metrics()).split('\n');
}

async function value(m: ProxyMetrics, series: string): Promise<number | undefined> {
  const line = (await scrape(m)).find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

function metrics(): ProxyMetrics {
  const m = new ProxyMetrics(() => undefined, { defaultMetrics: false });
  m.setFamilies(['inet', 'inet6'], 1000);
  return m;
}

t.test("HELP: component-base's stability prefix on kube-proxy's metrics, none on ours", async (t) => {
  const m = metrics();
  m.setBuildInfo('v1.37.0');
  const help = new Map((await scrape(m)).filter((l) => l.startsWith('# HELP ')).map((l) => [l.split(' ')[2], l.split(' ').slice(3).join(' ')]));
  for (const [name, text] of [
    ['kubeproxy_sync_proxy_rules_duration_seconds', 'SyncProxyRules latency in seconds'],
    ['kubeproxy_sync_proxy_rules_last_timestamp_seconds', 'The last time proxy rules were successfully synced'],
    ['kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds', 'The last time a sync of proxy rules was queued'],
    ['kubeproxy_network_programming_duration_seconds', 'In Cluster Network Programming Latency in seconds'],
    ['kubeproxy_sync_proxy_rules_endpoint_changes_total', 'Cumulative proxy rules Endpoint changes'],
    ['kubeproxy_sync_proxy_rules_endpoint_changes_pending', 'Pending proxy rules Endpoint changes'],
    ['kubeproxy_sync_proxy_rules_service_changes_total', 'Cumulative proxy rules Service changes'],
    ['kubeproxy_sync_proxy_rules_service_changes_pending', 'Pending proxy rules Service changes'],
    ['kubeproxy_sync_proxy_rules_no_local_endpoints_total', 'Number of services with a Local traffic policy and no endpoints'],
    ['kubeproxy_sync_proxy_rules_iptables_restore_failures_total', 'Cumulative proxy iptables restore failures'],
    ['kubeproxy_proxy_healthz_total', 'Cumulative proxy healthz HTTP status'],
    ['kubeproxy_proxy_livez_total', 'Cumulative proxy livez HTTP status'],
  ]) {
    t.equal(help.get(name), `[ALPHA] ${text}`, name);
  }
  t.match(help.get('kubernetes_build_info'), /^\[BETA\] A metric with a constant '1' value labeled by major, minor, git version/, 'BETA since 1.36');
  t.equal(help.get('kubeproxy_ipvs_virtual_servers'), 'IPVS virtual servers programmed', 'an extension: no stability level');
});

t.test('network programming latency: the buckets start at 0, as MergeBuckets makes them', async (t) => {
  const m = metrics();
  m.networkProgrammingDuration.observe({ ip_family: 'IPv4' }, 0);
  const buckets = (await scrape(m)).filter((l) => l.startsWith('kubeproxy_network_programming_duration_seconds_bucket{'));
  t.match(buckets[0], /le="0"/, 'the first bucket is 0');
  t.match(buckets[1], /le="0.25"/);
  t.equal(buckets.length, 1 + 2 + 59 + 12 + 7 + 1, '0, 0.25, 0.5, 1..59, 60..115, 120..300, +Inf');
  t.equal(Number(buckets[0].split(' ').at(-1)), 1, 'a 0 s latency falls in it');
});

t.test('kubernetes_build_info: the version this proxy mirrors', async (t) => {
  const m = metrics();
  t.notOk((await scrape(m)).some((l) => l.startsWith('kubernetes_build_info{')), 'no series before the version is given');
  m.setBuildInfo('v1.37.0');
  const line = (await scrape(m)).find((l) => l.startsWith('kubernetes_build_info{'))!;
  t.match(line, /^kubernetes_build_info\{major="1",minor="37",git_version="v1\.37\.0",git_commit="",git_tree_state="",build_date="1970-01-01T00:00:00Z",go_version="v\d+\.\d+\.\d+",compiler="node",platform="linux\/[a-z0-9]+"\} 1$/);
  t.equal(line.match(/go_version="([^"]+)"/)![1], process.version, "Node.js's version stands in for Go's");
});

/** What the proxy reads of a Service: `ports` in each of `families` ('' where it proxies it in none). */
const reading = (ports: string, families: readonly AddressFamily[]) =>
  new Map(ports === '' ? [] : families.map((f) => [f, { ports: [{ port: ports }], annotations: undefined } as unknown as ServiceReading]));
/** A Service event from reading `before` to `after`, in both families unless told. */
const event = (before: string, after: string, families: readonly AddressFamily[] = ['inet', 'inet6']) => ({ before: reading(before, families), after: reading(after, families) });
const CHANGE = event('', 'ports 80');
const NO_OP = event('ports 80', 'ports 80');

t.test("Service changes: each family's tracker counts the event; pending Services each once, changes to sync only", async (t) => {
  const m = metrics();
  m.serviceChanged('demo/web', CHANGE, 2000);
  m.serviceChanged('demo/web', event('ports 80', 'ports 81'), 3000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_total'), 4, 'two events, counted by the IPv4 and the IPv6 tracker');
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'one Service pending');
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"}'), 3, 'a sync queued for each family');
  m.serviceChanged('demo/api', NO_OP, 4000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_total'), 6, 'a no-op update is counted');
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'but not pending');
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}'), 4, 'a sync is (still) queued while a change is pending, as upstream');
  m.syncStarting();
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 0, 'the sync took the changes');
  m.serviceChanged('demo/api', NO_OP, 5000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}'), 4, 'nothing pending, a no-op queues no sync');
  m.serviceChanged('demo/web', event('ports 81', 'ports 82'), 6000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'demo/web again, once');
});

t.test('a Service changed and changed back before a sync is no longer pending, as upstream (its state is what the last sync took)', async (t) => {
  const m = metrics();
  m.serviceChanged('demo/web', event('ports 80', 'ports 81'), 1000);
  m.serviceChanged('demo/api', event('ports 90', 'ports 91'), 1000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 2);
  m.serviceChanged('demo/web', event('ports 81', 'ports 82'), 2000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 2, 'changed again: still pending, once');
  m.serviceChanged('demo/web', event('ports 82', 'ports 80'), 3000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'back to what the last sync took: not pending');
  m.serviceChanged('demo/new', event('', 'ports 70'), 4000);
  m.serviceChanged('demo/new', event('ports 70', ''), 5000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'made and deleted between two syncs: not pending');
  m.syncStarting();
  m.serviceChanged('demo/api', event('ports 91', 'ports 90'), 6000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'after a sync its state is the one to compare with: going back is a change');
});

t.test("a change in one family queues a sync of that family only, as that family's tracker does; the gauge counts the Service once", async (t) => {
  const m = metrics();
  const queuedAt = (f: string) => value(m, `kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="${f}"}`);
  const v6Before = await queuedAt('IPv6');
  m.serviceChanged('demo/v4', event('', 'ports 80', ['inet']), 7000);
  t.equal(await queuedAt('IPv4'), 7);
  t.equal(await queuedAt('IPv6'), v6Before, 'nothing pending in IPv6: no IPv6 sync queued');
  m.serviceChanged('demo/both', event('ports 80', 'ports 81'), 8000);
  t.equal(await queuedAt('IPv6'), 8);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 2, 'a Service pending in both families counts once');
  m.serviceChanged('demo/both', event('ports 81', 'ports 80'), 9000);
  t.equal(await queuedAt('IPv6'), 8, 'changed back: nothing pending in IPv6, nothing queued');
  t.equal(await queuedAt('IPv4'), 9, 'demo/v4 still pending in IPv4');
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1);
});

t.test('setting the pending gauge to 0, as a sync that takes the changes does, forgets the pending Services', async (t) => {
  const m = metrics();
  m.serviceChanged('demo/web', CHANGE, 2000);
  m.serviceChangesPending.set(0);
  m.serviceChanged('demo/api', CHANGE, 4000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_service_changes_pending'), 1, 'demo/web was synced');
});

t.test('EndpointSlice changes: counted in their family, pending until a sync takes them', async (t) => {
  const m = metrics();
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}'), 1, 'each family queued when the families are set, as the runner starts');
  m.endpointsChanged('IPv6', 2000);
  m.endpointsChanged('IPv6', 3000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_total'), 2);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_pending'), 2, 'each change (upstream counts changes, not slices)');
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv6"}'), 3);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds{ip_family="IPv4"}'), 1, 'no sync queued for IPv4');
  m.syncStarting();
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_endpoint_changes_pending'), 0);
});

t.test('iptables-restore failures count in their own family only', async (t) => {
  const counters = idleCounters({ iptablesFailedByFamily: { inet: 0, inet6: 2 } });
  counters.operations.iptables = { ok: 3, failed: 2 };
  const m = new ProxyMetrics(() => counters, { defaultMetrics: false });
  m.setFamilies(['inet', 'inet6'], 1000);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv4"}'), 0);
  t.equal(await value(m, 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv6"}'), 2);
});
