/**
 * The binary against an API server (the list/watch fake, through the real
 * client-node informers) instead of manifests: Services and EndpointSlices
 * created there are programmed and answer real traffic; an invalid Service
 * is skipped without stopping the others; a scale-down made while the watch
 * is cut is picked up when it resumes; deleting an EndpointSlice removes
 * its real servers; a 410 Gone (history compacted while disconnected)
 * forces a relist that converges to the server's objects.
 */
import t from 'tap';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { metricValue, proxyNode, startProxy, until } from '../support/proxy-env.js';

const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'e2e' },
  spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
};

function slice(ips: string[]) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'web-1', namespace: 'e2e', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'node-a' })),
  };
}

t.test('Services and EndpointSlices from an API server reach real backends', async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'web-2');
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.close());
  api.apply('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.56.10' }] } });
  api.apply('services', service);
  api.apply('endpointslices', slice(['10.244.1.10', '10.244.2.11']));
  // What the API server's own validation would not catch for us: a port the planner cannot use.
  api.apply('services', { ...service, metadata: { name: 'invalid', namespace: 'e2e' }, spec: { ...service.spec, clusterIP: '10.96.0.66', clusterIPs: ['10.96.0.66'], ports: [{ name: 'http', protocol: 'TCP', port: 0, targetPort: 8080 }] } });

  const proxy = await startProxy(t, env, ['--master', api.url]);
  t.ok(api.count('list services') >= 1 && api.count('list endpointslices') >= 1 && api.count('list nodes') >= 1, 'listed all three kinds');
  t.notOk((await env.ipvsSave()).some((l) => l.includes('10.96.0.66')), 'the invalid Service is not programmed');
  t.equal(await metricValue(proxy, 'kubeproxy_invalid_objects_total{kind="Service",action="skipped"}'), 1, 'and is counted');
  t.match(proxy.log(), /"v":0,[^\n]*"object":"Service e2e\/invalid","field":"spec.ports\[0\].port"/, 'and logged naming the field');
  await until('the birth cry', async () => api.events.length === 1);
  t.match(api.events[0], { path: '/apis/events.k8s.io/v1/namespaces/default/events', event: { reason: 'Starting', action: 'StartKubeProxy', type: 'Normal', reportingController: 'kube-proxy', regarding: { kind: 'Node', name: 'node-a' } } }, "kube-proxy's Starting event on its Node");
  const both = await env.getMany(env.node, 'http://10.96.0.10/', 4);
  t.same([...new Set(both)].sort(), ['web-1 10.244.1.10', 'web-2 10.244.2.11'], 'ClusterIP answers from both backends');

  // Cut the watches and scale down while they are down: the resumed watch replays it.
  api.dropWatches();
  api.apply('endpointslices', slice(['10.244.2.11']));
  // The removed backend served requests: it drains at weight 0 (graceful termination) instead of going at once.
  await until('one serving real server', async () => (await env.ipvsSave()).filter((l) => l.startsWith('-a -t 10.96.0.10:80') && l.endsWith('-w 1')).length === 1);
  t.same([...new Set(await env.getMany(env.node, 'http://10.96.0.10/', 3))], ['web-2 10.244.2.11'], 'scaled down');

  // A new Service arrives by watch.
  api.apply('services', { ...service, metadata: { name: 'web2', namespace: 'e2e' }, spec: { ...service.spec, clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.11'] } });
  api.apply('endpointslices', { ...slice(['10.244.1.10']), metadata: { name: 'web2-1', namespace: 'e2e', labels: { 'kubernetes.io/service-name': 'web2' } } });
  await until('web2', async () => (await env.get(env.node, 'http://10.96.0.11/')) === 'web-1 10.244.1.10');
  t.pass('a Service created after start is served');

  // Deleting an EndpointSlice takes its real servers out of service (weight 0 while the request
  // just made drains, as graceful termination does); the virtual server stays with the Service.
  api.delete('endpointslices', 'e2e', 'web2-1');
  await until('web2 without serving real servers', async () => !(await env.ipvsSave()).some((l) => l.startsWith('-a -t 10.96.0.11:80') && l.endsWith('-w 1')));
  t.ok((await env.ipvsSave()).includes('-A -t 10.96.0.11:80 -s rr'), 'an EndpointSlice delete removes its real servers only');
  t.equal(await env.get(env.node, 'http://10.96.0.11/'), undefined, 'nothing answers web2 any more');

  // While disconnected, history is compacted past changes the watch never saw: 410 Gone, relist, converge.
  const lists = api.count('list services');
  api.dropWatches();
  api.silently((store) => {
    store('services').delete('e2e/web2');
    store('services').set('e2e/web3', { ...service, metadata: { name: 'web3', namespace: 'e2e', resourceVersion: '900' }, spec: { ...service.spec, clusterIP: '10.96.0.12', clusterIPs: ['10.96.0.12'] } });
    store('endpointslices').set('e2e/web3-1', { ...slice(['10.244.2.11']), metadata: { name: 'web3-1', namespace: 'e2e', resourceVersion: '901', labels: { 'kubernetes.io/service-name': 'web3' } } });
  });
  api.compact();
  await until('relist converged', async () => {
    const table = await env.ipvsSave();
    return !table.some((l) => l.includes('10.96.0.11:80')) && table.includes('-a -t 10.96.0.12:80 -r 10.244.2.11:8080 -m -w 1');
  });
  t.ok(api.count('expired services') >= 1 && api.count('list services') > lists, '410 Gone answered, services relisted');
  t.equal(await env.get(env.node, 'http://10.96.0.12/'), 'web-2 10.244.2.11', 'a Service only the relist saw is served');

  api.delete('services', 'e2e', 'web');
  await until('web gone', async () => !(await env.ipvsSave()).some((l) => l.includes('10.96.0.10:80')));
  t.pass('a deleted Service is removed');
  t.equal(await proxy.stop(), 0);
});

t.test('an unreachable API server fails start-up with an explanation', async (t) => {
  const env = await proxyNode(t);
  const api = new FakeApiServer();
  await api.start();
  const url = api.url;
  await api.close();
  await t.rejects(startProxy(t, env, ['--master', url]), /exited 1[\s\S]*cannot reach the API server at http:\/\/127\.0\.0\.1:\d+/);
});
