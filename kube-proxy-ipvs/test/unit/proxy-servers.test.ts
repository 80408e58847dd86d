/**
 * The proxy wired to a manifests folder and a fake controller: healthz,
 * livez, metrics (kube-proxy's names, values that move), manifest edits
 * reaching the controller, and per-service health check node ports.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t from 'tap';
import { defaultOptions } from '../../lib/proxy/options.js';
import { ProxyHealth } from '../../lib/proxy/proxy-health.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import { healthCheckHosts } from '../../lib/proxy/service-health.js';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import { localLoadBalancerYaml } from '../support/demo-objects.js';
import { FakeClock } from '../support/fake-clock.js';
import { fakeFactory } from '../support/fake-controller.js';
import { fakeHost } from '../support/fake-host.js';
import { logger, manifestsDir, metric, options, started, until } from '../support/started-proxy.js';
import { scratchDir } from '../support/scratch.js';

// Health-check node ports here are real listeners, in 22000-23999: a range no other test file uses (tap runs two at
// once), below the ephemeral ports where listeners on port 0 land.

t.test('start-up: objects reach the controller, then one full sync', async (t) => {
  const { controller } = await started(t);
  t.same(controller.calls.slice(0, 1), ['start']);
  t.ok(controller.calls.includes('upsertService web') && controller.calls.includes('upsertEndpointSlice api-x7k2p'), 'all objects fed before the first sync');
  t.equal(controller.calls.indexOf('sync'), controller.calls.length - 1, 'sync after every object');
  t.same(controller.init?.node, { name: 'node-a', addresses: ['192.168.56.10'], families: ['inet', 'inet6'], labels: { 'topology.kubernetes.io/zone': 'zone-a' } }, 'node from its Node object, families from the host');
});

t.test('healthz and livez as kube-proxy answers them', async (t) => {
  const { healthz } = await started(t);
  const r = await fetch(`${healthz}/healthz`);
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-type'), 'application/json');
  t.equal(r.headers.get('x-content-type-options'), 'nosniff');
  const body = (await r.json()) as Record<string, unknown>;
  const time = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/;
  t.same(Object.keys(body), ['lastUpdated', 'currentTime', 'nodeEligible', 'healthy', 'status'], "kube-proxy's field order");
  t.match(body, { lastUpdated: time, currentTime: time, nodeEligible: true, healthy: true, status: { IPv4: { lastUpdated: time, healthy: true }, IPv6: { lastUpdated: time, healthy: true } } });
  t.equal(body.lastUpdated, body.currentTime, 'healthy: lastUpdated is now');
  const l = await fetch(`${healthz}/livez`);
  t.equal(l.status, 200);
  const live = (await l.json()) as Record<string, unknown>;
  t.same(Object.keys(live), ['lastUpdated', 'currentTime', 'healthy', 'status'], 'livez does not judge the node');
  t.equal((await fetch(`${healthz}/other`)).status, 404);
});

t.test('health turns 503 when a queued change waits longer than 2 × syncPeriod', async (t) => {
  const clock = new FakeClock();
  const h = new ProxyHealth(60_000, clock);
  t.ok(h.status().healthy, 'healthy while starting');
  h.queued(['inet', 'inet6']);
  await clock.advance(100_000);
  t.ok(h.status().healthy, 'a family never updated cannot be late (as upstream)');
  h.updated(['inet', 'inet6']);
  h.queued(['inet', 'inet6']);
  await clock.advance(59_999);
  t.ok(h.status().healthy, 'a queued change within the timeout');
  await clock.advance(1);
  const late = h.status();
  t.notOk(late.healthy, 'late');
  t.same([...late.families.values()].map((f) => f.healthy), [false, false], 'each family says so');
  h.updated(['inet']);
  t.notOk(h.status().healthy, 'one family still late');
  t.same(h.status().families.get('inet'), { lastUpdated: clock.now(), healthy: true });
  h.updated(['inet6']);
  t.ok(h.status().healthy, 'a sync completed');
  t.equal(h.status().lastUpdated, clock.now());
});

t.test('a sync that keeps failing makes healthz 503 over HTTP; recovery makes it 200', async (t) => {
  const { healthz, controller, dir } = await started(t, { ipvs: { ...defaultOptions().ipvs, syncPeriodMs: 150 } });
  controller.failSyncs = 1000;
  writeFileSync(join(dir, 'extra.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: extra, namespace: demo}\nspec: {clusterIP: 10.96.100.99, ports: [{port: 80}]}\n');
  await until('503', async () => (await fetch(`${healthz}/healthz`)).status === 503);
  t.pass('503 once the change waited > 300 ms');
  controller.failSyncs = 0;
  // The runner retries with backoff (1 s, then capped at the sync period).
  await until('200', async () => (await fetch(`${healthz}/healthz`)).status === 200, 8000);
  t.pass('200 after a sync succeeded');
});

t.test('metrics: kube-proxy names, values that move', async (t) => {
  const { metrics, dir, controller } = await started(t);
  const text = await (await fetch(`${metrics}/metrics`)).text();
  for (const name of [
    'kubeproxy_sync_proxy_rules_duration_seconds_bucket',
    'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
    'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
    'kubeproxy_network_programming_duration_seconds', // per family: no series before the first observation, as upstream's
    'kubeproxy_sync_proxy_rules_endpoint_changes_total',
    'kubeproxy_sync_proxy_rules_endpoint_changes_pending',
    'kubeproxy_sync_proxy_rules_service_changes_total',
    'kubeproxy_sync_proxy_rules_service_changes_pending',
    'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
    'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
    'kubeproxy_ipvs_virtual_servers',
    'kubeproxy_ipvs_real_servers',
    'kubeproxy_ipset_entries',
    'kubeproxy_netlink_operations_total{family="ipvs",result="ok"}',
  ]) {
    t.ok(text.includes(name), name);
  }
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_service_changes_total'), 4, 'two services loaded, each counted by the IPv4 and the IPv6 tracker');
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_endpoint_changes_total'), 2, 'two slices');
  t.equal(await metric(metrics, 'kubeproxy_ipvs_virtual_servers'), 2, 'from the controller counters');
  t.equal(await metric(metrics, 'kubeproxy_ipvs_real_servers'), 4);
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_duration_seconds_count'), 1, 'one sync');
  for (const series of [
    'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 1',
    'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv6"} 1',
    'kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy="internal",ip_family="IPv6"} 0',
    'kubeproxy_sync_proxy_rules_iptables_restore_failures_total{ip_family="IPv4"} 0',
  ]) t.ok(text.split('\n').includes(series), `${series}: per family, as kube-proxy labels it`);
  t.match(text, /# HELP kubeproxy_network_programming_duration_seconds \[ALPHA\] In Cluster Network Programming Latency in seconds/, "upstream's help text");
  t.notMatch(text, /kubeproxy_sync_(full|partial)_proxy_rules/, "iptables mode's full/partial histograms are not IPVS mode's");
  t.equal(await metric(metrics, 'kubeproxy_ipvs_syncs_total{kind="full"}'), 1, 'the first sync is a full one');
  t.equal(await metric(metrics, 'kubeproxy_netlink_messages_sent_total{family="ipvs"}'), 2, 'netlink messages from the controller counters');
  t.equal(await metric(metrics, 'kubeproxy_netlink_sendmsg_calls_total{family="ipset"}'), 1);
  t.equal(await metric(metrics, 'kubeproxy_sync_netlink_messages_sent{family="ipvs"}'), 2, 'the last sync\'s messages');
  const last1 = (await metric(metrics, 'kubeproxy_sync_proxy_rules_last_timestamp_seconds'))!;
  t.ok(Math.abs(last1 - Date.now() / 1000) < 10, 'last sync timestamp is now');

  // A slice edit with the trigger-time annotation: endpoint changes and programming latency move.
  const file = join(dir, 'demo-endpointslices.yaml');
  // Written now, after the start: a trigger time from before it is not measured.
  const trigger = new Date().toISOString();
  writeFileSync(
    file,
    readFileSync(file, 'utf8')
      .replace('name: api-x7k2p\n', `name: api-x7k2p\n  annotations:\n    endpoints.kubernetes.io/last-change-trigger-time: "${trigger}"\n`)
      .replace('  - addresses: [10.244.2.11]\n    conditions: { ready: true, serving: true, terminating: false }\n    nodeName: node-b\n', ''),
  );
  await until('second sync', async () => (await metric(metrics, 'kubeproxy_sync_proxy_rules_duration_seconds_count')) === 2);
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_endpoint_changes_total'), 3);
  t.equal(await metric(metrics, 'kubeproxy_ipvs_real_servers'), 3, 'scaled down by one');
  t.equal(await metric(metrics, 'kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"}'), 1, 'counted in the slice\'s family');
  const sum = (await metric(metrics, 'kubeproxy_network_programming_duration_seconds_sum'))!;
  t.ok(sum >= 0 && sum <= (Date.now() - Date.parse(trigger)) / 1000, `programming latency measured from the trigger time (${sum}s)`);
  t.equal(await metric(metrics, 'kubeproxy_sync_proxy_rules_endpoint_changes_pending'), 0, 'nothing pending after the sync');
  t.equal(await metric(metrics, 'kubeproxy_ipvs_syncs_total{kind="incremental"}'), 1, 'then an incremental one');
  const kinds = [...(await (await fetch(`${metrics}/metrics`)).text()).matchAll(/^kubeproxy_ipvs_syncs_total\{kind="([^"]+)"\}/gm)].map((m) => m[1]);
  t.same(kinds, ['full', 'incremental', 'resync', 'drain'], 'a sync kind per label, and nothing else');
  t.equal(await metric(metrics, 'kubeproxy_netlink_messages_sent_total{family="ipvs"}'), 4, 'the counters add up');
  t.ok(controller.calls.includes('upsertEndpointSlice api-x7k2p'));
  t.equal(await (await fetch(`${metrics}/proxyMode`)).text(), 'ipvs');
});

t.test('manifest edits: updates, deletes; a broken file keeps the last good state', async (t) => {
  const { dir, controller } = await started(t);
  controller.calls.length = 0;
  writeFileSync(join(dir, 'demo-services.yaml'), readFileSync(join(dir, 'demo-services.yaml'), 'utf8').split('---')[0]);
  await until('delete', () => controller.calls.includes('deleteService web'));
  t.notOk(controller.calls.includes('deleteService api'), 'only the removed object');
  controller.calls.length = 0;
  writeFileSync(join(dir, 'demo-endpointslices.yaml'), 'kind: EndpointSlice\nmetadata: {name: [broken\n');
  await sleep(300);
  t.same(controller.calls, [], 'a broken file changes nothing');
});

t.test('invalid objects are counted by kind and action, and do not stop the others', async (t) => {
  const { dir, controller, metrics } = await started(t);
  controller.calls.length = 0;
  writeFileSync(join(dir, 'extra.yaml'), `apiVersion: v1
kind: Service
metadata: {name: broken, namespace: demo}
spec: {clusterIP: 10.96.100.99, ports: [{port: 0}]}
---
apiVersion: v1
kind: Service
metadata: {name: fine, namespace: demo}
spec: {clusterIP: 10.96.100.98, ports: [{port: 80}]}
`);
  await until('fine', () => controller.calls.includes('upsertService fine'));
  t.notOk(controller.calls.includes('upsertService broken'), 'the invalid one never reaches the controller');
  const text = await (await fetch(`${metrics}/metrics`)).text();
  t.match(text, /^kubeproxy_invalid_objects_total\{kind="Service",action="skipped"\} 1$/m);
});

t.test('--netns target deleted: one error, healthz and livez 503, no more syncs', async (t) => {
  const nsFile = join(scratchDir('kp-ns-'), 'target');
  writeFileSync(nsFile, '');
  const lines: Array<Record<string, unknown>> = [];
  const capture = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const dir = manifestsDir();
  const factory = fakeFactory();
  const proxy = new Proxy(options(dir, { netns: nsFile, ipvs: { ...defaultOptions().ipvs, syncPeriodMs: 200 } }), {
    source: new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 }),
    controllerFactory: factory,
    logger: capture,
    defaultMetrics: false,
    host: fakeHost(),
  });
  t.teardown(() => proxy.stop());
  const addrs = await proxy.start();
  await proxy.waitForSync(5000);
  t.equal((await fetch(`http://${addrs.healthz}/healthz`)).status, 200);
  // From here on: the start-up's own notes (an unset nodePortAddresses, as kube-proxy logs it) are not this test's.
  lines.length = 0;
  rmSync(nsFile);
  await until('503', async () => (await fetch(`http://${addrs.healthz}/healthz`)).status === 503, 5000);
  t.equal((await fetch(`http://${addrs.healthz}/livez`)).status, 503, 'livez too: only a restart helps');
  t.match(lines.filter((l) => l.level === 50), [{ netns: nsFile, reason: /no longer exists/, msg: /target network namespace is gone/ }], 'one structured error');
  const calls = factory.last!.calls.length;
  await sleep(700); // more than three sync periods
  t.equal(factory.last!.calls.length, calls, 'no sync or resync after that');
});

t.test('health check node ports for externalTrafficPolicy: Local', async (t) => {
  const { dir } = await started(t);
  const hcPort = 22000 + Math.floor(Math.random() * 1000);
  const svc = (local: boolean) =>
    localLoadBalancerYaml(hcPort, local ? '  - {addresses: [10.244.1.50], nodeName: node-a}\n  - {addresses: [10.244.1.51], nodeName: node-a, conditions: {ready: true}}\n' : '');
  writeFileSync(join(dir, 'lb.yaml'), svc(true));
  const url = `http://127.0.0.1:${hcPort}/`;
  await until('hc port', async () => (await fetch(url).catch(() => undefined)) !== undefined);
  const r = await fetch(url);
  t.equal(r.status, 200);
  t.equal(r.headers.get('x-load-balancing-endpoint-weight'), '2');
  t.same(await r.json(), { service: { namespace: 'demo', name: 'lb' }, localEndpoints: 2, serviceProxyHealthy: true });
  writeFileSync(join(dir, 'lb.yaml'), svc(false));
  await until('503', async () => (await fetch(url)).status === 503);
  t.match(await (await fetch(url)).json(), { localEndpoints: 0 });
  writeFileSync(join(dir, 'lb.yaml'), '');
  await until('closed', async () => (await fetch(url).catch(() => undefined)) === undefined);
  t.pass('the port closes with the service');
});

t.test('a NodePort Service with a healthCheckNodePort gets no health check listener: only LoadBalancer ones do, as in kube-proxy', async (t) => {
  const { dir } = await started(t);
  const lbPort = 23000 + Math.floor(Math.random() * 500);
  const nodePortPort = lbPort + 500;
  const svc = (name: string, type: string, hcPort: number, ip: string, nodePort: number) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: demo}
spec:
  type: ${type}
  clusterIP: ${ip}
  externalTrafficPolicy: Local
  healthCheckNodePort: ${hcPort}
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: ${nodePort}}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}-1, namespace: demo, labels: {kubernetes.io/service-name: ${name}}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
  - {addresses: [10.244.1.60], nodeName: node-a}
`;
  // Both in one file: one reload, one sync.
  writeFileSync(join(dir, 'hc.yaml'), svc('lb', 'LoadBalancer', lbPort, '10.96.100.40', 30091) + '---\n' + svc('np', 'NodePort', nodePortPort, '10.96.100.41', 30092));
  await until('the LoadBalancer one', async () => (await fetch(`http://127.0.0.1:${lbPort}/`).catch(() => undefined))?.status === 200);
  t.pass('the LoadBalancer Service\'s port answers');
  t.equal(await fetch(`http://127.0.0.1:${nodePortPort}/`).catch(() => 'refused'), 'refused', 'the NodePort Service\'s is not served (no KUBE-HEALTH-CHECK-NODE-PORT entry admits it either)');
});

t.test('health check node ports listen where NodePorts are served', async (t) => {
  const node = { name: 'node-a', addresses: ['192.168.56.10', '10.0.0.5'] };
  t.same(healthCheckHosts(options('x'), node), ['0.0.0.0'], 'every address by default');
  t.same(healthCheckHosts(options('x'), { ...node, addresses: [...node.addresses, 'fd00::10'] }), ['::'], 'a dual-stack socket when the node has IPv6');
  t.same(healthCheckHosts(options('x', { nodePortAddresses: ['192.168.56.0/24'] }), node), ['192.168.56.10'], '--nodeport-addresses narrows them');
  t.same(healthCheckHosts(options('x', { nodePortAddresses: ['primary'] }), node), ['192.168.56.10'], 'primary: the first address');
});
