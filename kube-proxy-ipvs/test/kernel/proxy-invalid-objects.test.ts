/**
 * Malformed objects are rejected one at a time: with a bad Service and a
 * bad EndpointSlice among good ones, the binary programs exactly what
 * `plan` says for the good ones (checked with ipvsadm, ipset, ip addr and
 * iptables-save), answers through them, logs a warning naming each bad
 * object and field, and counts them. A later bad edit of a working Service
 * keeps its last good version in the kernel while a good edit in the same
 * reload is programmed.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { metricValue, NODE_YAML, proxyNode, serviceYaml, sliceYaml, startProxy, until, writeManifest } from '../support/proxy-env.js';
import { kernelMatchesPlan, runPlan } from '../support/proxy-plan.js';
import { scratchDir } from '../support/scratch.js';

const BAD_SERVICE = `apiVersion: v1
kind: Service
metadata: {name: broken, namespace: e2e}
spec: {clusterIP: 10.96.0.66, ports: [{name: http, protocol: TCP, port: 99999, targetPort: 8080}]}
`;

const BAD_SLICE = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-bad, namespace: e2e, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
ports: [{name: http, protocol: TCP, port: 8080}]
endpoints: [{addresses: [10.244.1.300], conditions: {ready: true}}]
`;

t.test('a bad Service and a bad EndpointSlice among good ones: the good ones are programmed', async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'api-1');
  await env.backend('10.244.1.12', 'api-2');
  writeManifest(env, 'node.yaml', NODE_YAML);
  // The bad Service sits between two good ones in one file; the bad slice has a file of its own.
  writeManifest(env, 'services.yaml', `${serviceYaml('web', '10.96.0.10', 30080)}---\n${BAD_SERVICE}---\n${serviceYaml('api', '10.96.0.11')}`);
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }]));
  writeManifest(env, 'api-slice.yaml', sliceYaml('api', [{ ip: '10.244.2.11' }]));
  writeManifest(env, 'api-bad-slice.yaml', BAD_SLICE);
  // What plan says for the good objects alone.
  const good = scratchDir('kp-good-');
  for (const f of ['node.yaml', 'web-slice.yaml', 'api-slice.yaml']) cpSync(join(env.dir, f), join(good, f));
  writeFileSync(join(good, 'services.yaml'), `${serviceYaml('web', '10.96.0.10', 30080)}---\n${serviceYaml('api', '10.96.0.11')}`);

  const proxy = await startProxy(t, env, ['--manifests', env.dir]);
  await kernelMatchesPlan(t, env.node, await runPlan(good), 'good objects only');
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), 'web-1 10.244.1.10', 'web answers');
  t.equal(await env.get(env.node, 'http://10.96.0.11/'), 'api-1 10.244.2.11', 'api answers');
  const warnings = proxy
    .log()
    .split('\n')
    .filter((l) => l.includes('"action"') && l.includes('"object"'))
    .map((l) => JSON.parse(l) as Record<string, string>);
  t.match(
    warnings.map((w) => ({ object: w.object, field: w.field, action: w.action, file: w.file })).sort((a, b) => a.object.localeCompare(b.object)),
    [
      { object: 'EndpointSlice e2e/api-bad', field: 'endpoints[0].addresses[0]', action: 'skipped', file: /api-bad-slice\.yaml$/ },
      { object: 'Service e2e/broken', field: 'spec.ports[0].port', action: 'skipped', file: /services\.yaml$/ },
    ],
    'one structured warning per bad object, naming file, object and field',
  );
  t.equal(await metricValue(proxy, 'kubeproxy_invalid_objects_total{kind="Service",action="skipped"}'), 1);
  t.equal(await metricValue(proxy, 'kubeproxy_invalid_objects_total{kind="EndpointSlice",action="skipped"}'), 1);

  // One reload: web's edit is bad (its last good version must stay), api's slice gains a backend.
  const table = await env.ipvsSave();
  writeManifest(env, 'services.yaml', `${serviceYaml('web', '10.96.0.999', 30080)}---\n${BAD_SERVICE}---\n${serviceYaml('api', '10.96.0.11')}`);
  writeManifest(env, 'api-slice.yaml', sliceYaml('api', [{ ip: '10.244.2.11' }, { ip: '10.244.1.12' }]));
  await until('api scaled up', async () => (await env.ipvsSave()).filter((l) => l.startsWith('-a -t 10.96.0.11:80')).length === 2);
  t.same(
    (await env.ipvsSave()).filter((l) => l.includes('10.96.0.10:80') || l.includes(':30080')),
    table.filter((l) => l.includes('10.96.0.10:80') || l.includes(':30080')),
    'web keeps its last good virtual servers',
  );
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), 'web-1 10.244.1.10', 'and keeps answering');
  t.equal(await metricValue(proxy, 'kubeproxy_invalid_objects_total{kind="Service",action="kept-last-good"}'), 1, 'the refused edit is counted');
  writeFileSync(join(good, 'api-slice.yaml'), sliceYaml('api', [{ ip: '10.244.2.11' }, { ip: '10.244.1.12' }]));
  await kernelMatchesPlan(t, env.node, await runPlan(good), 'after the mixed reload');
  t.equal(await proxy.stop(), 0);
});
