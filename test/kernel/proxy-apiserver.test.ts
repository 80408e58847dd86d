/**
 * The binary against an API server (the list/watch fake, through the real
 * client-node informers) instead of manifests: Services and EndpointSlices
 * created there are programmed and answer real traffic; a scale-down made
 * while the watch is cut is picked up when it resumes.
 */
import t from 'tap';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { proxyNode, startProxy, until } from '../support/proxy-env.js';

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

  const proxy = await startProxy(t, env, ['--master', api.url]);
  t.ok(api.count('list services') >= 1 && api.count('list endpointslices') >= 1 && api.count('list nodes') >= 1, 'listed all three kinds');
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
