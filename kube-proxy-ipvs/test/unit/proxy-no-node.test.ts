/**
 * kube-proxy's fallbacks for the node: without its Node object the proxy
 * waits (kube-proxy: 30 s), then assumes loopback with upstream's message
 * and runs; families come from the host, not the node's addresses; the
 * Node is taken when it appears; /healthz says nodeEligible false until
 * then. Health bodies are compared byte for byte with kube-proxy's shape,
 * and the metrics server's other paths with kube-proxy's.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { LOOPBACK, nodeContext } from '../../lib/desired/node-addresses.js';
import { desiredState } from '../../lib/desired/known-objects.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { healthBody } from '../../lib/proxy/health-server.js';
import { rfc3339Nano } from '../../lib/proxy/http-util.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { MetricsServer } from '../../lib/proxy/metrics-server.js';
import { defaultOptions, type ProxyOptions } from '../../lib/proxy/options.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import { service } from '../support/k8s-objects.js';
import { fakeFactory } from '../support/fake-controller.js';
import { fakeHost } from '../support/fake-host.js';
import { scratchDir } from '../support/scratch.js';

const NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [{type: InternalIP, address: 192.168.56.10}]}\n';
const SERVICES = `apiVersion: v1
kind: Service
metadata: {name: v4, namespace: demo}
spec: {clusterIP: 10.96.0.10, clusterIPs: [10.96.0.10], ports: [{port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: v6, namespace: demo}
spec: {clusterIP: 'fd00:96::10', clusterIPs: ['fd00:96::10'], ipFamilies: [IPv6], ports: [{port: 80}]}
`;

function options(dir: string, o: Partial<ProxyOptions> = {}): ProxyOptions {
  return { ...defaultOptions(), hostnameOverride: 'node-a', manifests: dir, healthzBindAddress: '127.0.0.1:0', metricsBindAddress: '127.0.0.1:0', ...o };
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  return { lines, logger, msgs: () => lines.map((l) => l.msg) };
}

t.test('no Node object: waits, logs upstream\'s loopback line, runs dual-stack; /healthz 503 until the Node appears', async (t) => {
  const dir = scratchDir('kp-nonode-');
  writeFileSync(join(dir, 'services.yaml'), SERVICES);
  const { logger, lines, msgs } = capture();
  const factory = fakeFactory();
  const host = fakeHost(['inet', 'inet6']);
  const proxy = new Proxy(options(dir), {
    source: new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 }),
    controllerFactory: factory,
    logger,
    defaultMetrics: false,
    host,
    nodeWaitMs: 300,
  });
  t.teardown(() => proxy.stop());
  const t0 = Date.now();
  const addrs = await proxy.start();
  t.ok(Date.now() - t0 >= 290, 'it waited for the Node first');
  await proxy.waitForSync(5000);
  const order = msgs();
  const at = (m: string) => order.indexOf(m);
  t.ok(at('Timed out waiting for node to exist') >= 0, 'the timeout is an error line');
  t.match(lines.find((l) => l.msg === 'Timed out waiting for node to exist'), { level: 50, node: 'node-a' }, 'at error level, naming the node');
  t.ok(at("Can't determine this node's IP, assuming loopback; if this is incorrect, please set the --bind-address flag") > at('Timed out waiting for node to exist'), "upstream's loopback line, after the wait");
  t.match(lines.find((l) => l.msg === 'kube-proxy running in dual-stack mode'), { 'primary ipFamily': 'IPv4' });
  t.same(host.conntrack, [defaultOptions().conntrack], 'the conntrack settings were applied once');
  t.same(host.oomScoreAdj, [-999], 'and the OOM score');
  const controller = factory.last!;
  t.same(controller.init?.node, { name: 'node-a', addresses: [], families: ['inet', 'inet6'] }, 'no address, both families');
  t.ok(controller.calls.includes('upsertService v6'), 'the IPv6 Service reaches the controller');
  const ctx = nodeContext(controller.init!.node, defaultProxyConfig({ nodePortAddresses: ['primary'] }), ['192.168.56.10', 'fd00::10']);
  t.same(Object.fromEntries(ctx.primaryIP), { inet: LOOPBACK.inet, inet6: LOOPBACK.inet6 }, 'loopback node IPs');
  t.same(Object.fromEntries(ctx.nodePortIPs), { inet: ['192.168.56.10'], inet6: ['fd00::10'] }, '"primary" without a node IP: every local address, as upstream');

  const hz = await fetch(`http://${addrs.healthz}/healthz`);
  t.equal(hz.status, 503, 'no Node: not eligible');
  const body = (await hz.json()) as Record<string, unknown>;
  t.match(body, { nodeEligible: false, healthy: true });
  t.not(body.lastUpdated, body.currentTime, 'a 503 keeps the real lastUpdated');
  t.equal((await fetch(`http://${addrs.healthz}/livez`)).status, 200, 'livez does not care');

  writeFileSync(join(dir, 'node.yaml'), NODE);
  await new Promise<void>((resolve, reject) => {
    const end = Date.now() + 5000;
    const poll = setInterval(() => {
      if (controller.calls.includes('setNode 192.168.56.10')) resolve();
      else if (Date.now() > end) reject(new Error(`no setNode: ${controller.calls.join(' | ')}`));
      else return;
      clearInterval(poll);
    }, 20);
  });
  t.same(controller.node, { name: 'node-a', addresses: ['192.168.56.10'], families: ['inet', 'inet6'], labels: undefined }, 'the Node, when it appears, gives the addresses');
  t.match(lines.find((l) => l.msg === 'NodeIPs changed for the node'), { newNodeIPs: ['192.168.56.10'], oldNodeIPs: [] });
  t.equal((await fetch(`http://${addrs.healthz}/healthz`)).status, 200, 'and /healthz turns 200');
});

t.test('families from the host: an IPv6-only primary on an IPv4-only host is refused as upstream', async (t) => {
  const dir = scratchDir('kp-nonode-');
  const { logger, lines } = capture();
  const proxy = new Proxy(options(dir, { bindAddress: 'fd00::5' }), {
    source: new ManifestsSource({ path: dir, logger }),
    controllerFactory: fakeFactory(),
    logger,
    defaultMetrics: false,
    host: fakeHost(['inet']),
    nodeWaitMs: 10,
  });
  await t.rejects(proxy.start(), /^no support for primary IP family "IPv6"$/);
  await proxy.stop();
  t.match(lines.find((l) => l.msg === 'No kernel support for family'), { ipFamily: 'IPv6' });
  t.notOk(lines.some((l) => String(l.msg).startsWith("Can't determine")), '--bind-address is a node IP: no loopback line');
});

t.test("Detect-local-mode's notes, as getLocalDetectors: a CIDR mode with no range of the primary family", async (t) => {
  const started = async (o: Partial<ProxyOptions>) => {
    const dir = scratchDir('kp-detect-');
    writeFileSync(join(dir, 'node.yaml'), o.detectLocalMode === 'NodeCIDR' ? NODE.replace('metadata: {name: node-a}', 'metadata: {name: node-a}\nspec: {podCIDRs: [fd00:244:1::/64]}') : NODE);
    const { logger, lines } = capture();
    const proxy = new Proxy(options(dir, o), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost(['inet', 'inet6']) });
    try {
      await proxy.start();
    } finally {
      await proxy.stop();
    }
    return lines.filter((l) => String(l.msg).startsWith('Detect-local-mode'));
  };
  t.match(await started({ clusterCIDRs: [] }), [{ msg: 'Detect-local-mode set to ClusterCIDR, but no cluster CIDR specified for primary IP family', ipFamily: 'IPv4', clusterCIDRs: [] }], 'ClusterCIDR without --cluster-cidr (the defaults): the note');
  t.match(await started({ clusterCIDRs: ['fd00:244::/48'] }), [{ level: 30, msg: 'Detect-local-mode set to ClusterCIDR, but no cluster CIDR specified for primary IP family', ipFamily: 'IPv4', clusterCIDRs: ['fd00:244::/48'] }]);
  t.same(await started({ clusterCIDRs: ['10.244.0.0/16'] }), [], 'a range of the primary family: none');
  // checkBadIPConfig ends the start first: NodeCIDR with Node podCIDRs of the other family only has always been fatal.
  await t.rejects(started({ detectLocalMode: 'NodeCIDR' }), /^kube-proxy configuration is incorrect: cluster is IPv4-primary but node\.spec\.podCIDRs contains only IPv6 addresses$/);
  t.same(await started({ detectLocalMode: 'BridgeInterface', detectLocal: { bridgeInterface: 'cbr0', interfaceNamePrefix: '' } }), [], 'an interface mode: none');
});

t.test('a node with IPv4 addresses only still serves IPv6 Services on a dual-stack host', async (t) => {
  const ctx = nodeContext({ name: 'node-a', addresses: ['192.168.56.10'], families: ['inet', 'inet6'] }, defaultProxyConfig(), ['192.168.56.10', 'fd00::10']);
  t.same(ctx.families, ['inet', 'inet6']);
  t.same(ctx.primaryIP.get('inet6'), '::1', "the missing family's node IP is loopback (detectNodeIPs)");
  const v6 = service('v6', { clusterIP: 'fd00:96::10', clusterIPs: ['fd00:96::10'], ipFamilies: ['IPv6'], ports: [{ port: 80, protocol: 'TCP' }] });
  const node = { name: 'node-a', addresses: ['192.168.56.10'] };
  const served = [...desiredState({ services: [v6], endpointSlices: [] }, { ...node, families: ['inet', 'inet6'] }, defaultProxyConfig()).virtualServers.keys()];
  t.equal(served.length, 1, 'the IPv6 ClusterIP is a virtual server');
  t.match(served[0], /fd00:96::10/);
  t.same([...desiredState({ services: [v6], endpointSlices: [] }, node, defaultProxyConfig()).virtualServers.keys()], [], 'without host families the node\'s addresses decide (plan today)');
});

t.test('health bodies: Go\'s JSON of ProxyHealth, byte for byte', async (t) => {
  const at = Date.UTC(2025, 10, 25, 10, 40, 5, 120);
  const families = new Map([
    ['inet', { lastUpdated: at - 3500, healthy: true }],
    ['inet6', { lastUpdated: at - 3400, healthy: false }],
  ] as const);
  t.equal(
    healthBody({ healthy: false, lastUpdated: at - 3400, currentTime: at, families: new Map(families) }, false, true),
    '{"lastUpdated":"2025-11-25T10:40:01.72Z","currentTime":"2025-11-25T10:40:05.12Z","nodeEligible":true,"healthy":false,"status":{"IPv4":{"lastUpdated":"2025-11-25T10:40:01.62Z","healthy":true},"IPv6":{"lastUpdated":"2025-11-25T10:40:01.72Z","healthy":false}}}',
  );
  t.equal(
    healthBody({ healthy: true, lastUpdated: 0, currentTime: Date.UTC(2025, 0, 2, 3, 4, 5), families: new Map() }, true, undefined),
    '{"lastUpdated":"2025-01-02T03:04:05Z","currentTime":"2025-01-02T03:04:05Z","healthy":true}',
    'livez before any sync: no nodeEligible, no status; healthy means lastUpdated is now',
  );
  t.equal(rfc3339Nano(0), '0001-01-01T00:00:00Z', "Go's zero time");
  t.equal(rfc3339Nano(Date.UTC(2025, 0, 1) + 1.5), '2025-01-01T00:00:00.0015Z', 'sub-millisecond digits kept, trailing zeros dropped');
});

t.test('the metrics server: /healthz, /proxyMode and /configz as kube-proxy serves them', async (t) => {
  const config = { kind: 'KubeProxyConfiguration', apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', mode: 'ipvs' };
  const server = new MetricsServer(new ProxyMetrics(() => undefined, { defaultMetrics: false }), { configz: () => config });
  const base = `http://${await server.start('127.0.0.1:0')}`;
  t.teardown(() => server.close());
  const text = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' };
  for (const [path, body] of [
    ['/healthz', 'ok'],
    ['/healthz?verbose', '[+]ping ok\nhealthz check passed\n'],
    ['/healthz?verbose&exclude=ping&exclude=etcd&exclude=log', '[+]ping excluded: ok\nwarn: some health checks cannot be excluded: no matches for "etcd","log"\nhealthz check passed\n'],
    ['/proxyMode', 'ipvs'],
  ] as const) {
    const r = await fetch(`${base}${path}`);
    t.same([r.status, await r.text(), r.headers.get('content-type'), r.headers.get('x-content-type-options')], [200, body, text['content-type'], text['x-content-type-options']], path);
  }
  const ping = await fetch(`${base}/healthz/ping`);
  t.same([ping.status, await ping.text(), ping.headers.get('content-type'), ping.headers.get('x-content-type-options')], [200, 'ok', 'text/plain; charset=utf-8', null], '/healthz/ping: the check alone, no nosniff');
  const c = await fetch(`${base}/configz`);
  t.equal(c.headers.get('content-type'), 'application/json');
  t.equal(await c.text(), '{"kubeproxy.config.k8s.io":{"kind":"KubeProxyConfiguration","apiVersion":"kubeproxy.config.k8s.io/v1alpha1","mode":"ipvs"}}');
  t.equal((await fetch(`${base}/nothing`)).status, 404);
  const bare = new MetricsServer(new ProxyMetrics(() => undefined, { defaultMetrics: false }));
  const bareBase = `http://${await bare.start('127.0.0.1:0')}`;
  t.teardown(() => bare.close());
  t.equal((await fetch(`${bareBase}/configz`)).status, 404, 'no configuration given: no /configz');
});

t.test('the metrics server: /metrics/slis records what its /healthz ran, and DELETE clears it', async (t) => {
  const server = new MetricsServer(new ProxyMetrics(() => undefined, { defaultMetrics: false }));
  const base = `http://${await server.start('127.0.0.1:0')}`;
  t.teardown(() => server.close());
  const slis = async () => {
    const r = await fetch(`${base}/metrics/slis`);
    t.equal(r.status, 200);
    return r.text();
  };
  t.equal(await slis(), '', 'no check has run: nothing to show');
  await fetch(`${base}/healthz`);
  await fetch(`${base}/healthz?verbose`);
  await fetch(`${base}/healthz/ping`); // the check's own path records nothing
  await fetch(`${base}/healthz?exclude=ping`); // nor does an excluded check
  t.equal(
    await slis(),
    [
      '# HELP kubernetes_healthcheck [STABLE] This metric records the result of a single healthcheck.',
      '# TYPE kubernetes_healthcheck gauge',
      'kubernetes_healthcheck{name="ping",type="healthz"} 1',
      '# HELP kubernetes_healthchecks_total [STABLE] This metric records the results of all healthcheck.',
      '# TYPE kubernetes_healthchecks_total counter',
      'kubernetes_healthchecks_total{name="ping",status="success",type="healthz"} 2',
      '',
    ].join('\n'),
  );
  const d = await fetch(`${base}/metrics/slis`, { method: 'DELETE' });
  t.same([d.status, await d.text()], [200, 'metrics reset\n']);
  t.equal(await slis(), '', 'cleared');
});

t.test('the metrics server on 0.0.0.0 answers on IPv6 too, as a Go "tcp" listener does', async (t) => {
  const server = new MetricsServer(new ProxyMetrics(() => undefined, { defaultMetrics: false }));
  const bound = await server.start('0.0.0.0:0');
  t.teardown(() => server.close());
  const port = Number(/:(\d+)$/.exec(bound)![1]);
  for (const host of ['127.0.0.1', '[::1]']) {
    const r = await fetch(`http://${host}:${port}/healthz`);
    t.equal(await r.text(), 'ok', host);
  }
});
