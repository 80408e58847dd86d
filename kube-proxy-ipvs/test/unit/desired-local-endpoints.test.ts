/**
 * The node-local endpoints of the Services with a Local traffic policy
 * (desired/local-endpoints.ts), kept by the same store that makes the
 * desired state: health-check node ports for LoadBalancer Services with
 * externalTrafficPolicy Local only (apiservice.NeedsHealthCheck), the same
 * ports the KUBE-HEALTH-CHECK-NODE-PORT set admits; ready endpoints on
 * this node, an address counted once (kube-proxy's LocalReadyEndpoints);
 * and the Services whose endpoints are all elsewhere.
 */
import t from 'tap';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { defaultProxyConfig } from '../../lib/kubernetes/model.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';

const node = { name: 'node-a', addresses: ['192.168.1.10'] };
const ports = [{ name: 'http', port: 80, nodePort: 30080 }];
const slicePorts = [{ name: 'http', port: 8080 }];

function store(): KnownObjects {
  const s = new KnownObjects(node, defaultProxyConfig());
  s.upsertService(service('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.10', externalTrafficPolicy: 'Local', healthCheckNodePort: 31000, ports }));
  // The address split over two slices (as during a slice split) counts once; not ready, terminating and remote ones do not count.
  s.upsertEndpointSlice(slice('lb', [endpoint('10.244.1.5', { node: 'node-a' }), endpoint('10.244.1.6', { node: 'node-a', ready: false }), endpoint('10.244.2.5', { node: 'node-b' })], slicePorts, { name: 'lb-1' }));
  s.upsertEndpointSlice(slice('lb', [endpoint('10.244.1.5', { node: 'node-a' }), endpoint('10.244.1.7', { node: 'node-a', ready: false, serving: true, terminating: true }), endpoint('10.244.1.8', { node: 'node-a' })], slicePorts, { name: 'lb-2' }));
  s.upsertService(service('np', { type: 'NodePort', clusterIP: '10.96.0.11', externalTrafficPolicy: 'Local', healthCheckNodePort: 31001, ports }));
  s.upsertEndpointSlice(slice('np', [endpoint('10.244.2.6', { node: 'node-b' })], slicePorts));
  s.upsertService(service('internal', { clusterIP: '10.96.0.12', internalTrafficPolicy: 'Local', ports }));
  s.upsertEndpointSlice(slice('internal', [endpoint('10.244.2.7', { node: 'node-b' })], slicePorts));
  s.upsertService(service('cluster', { type: 'LoadBalancer', clusterIP: '10.96.0.13', healthCheckNodePort: 31002, ports }));
  s.upsertEndpointSlice(slice('cluster', [endpoint('10.244.2.8', { node: 'node-b' })], slicePorts));
  return s;
}

t.test('health checks: LoadBalancer with externalTrafficPolicy Local only, as the ipset says', async (t) => {
  const s = store();
  const local = s.localEndpoints();
  t.same(local.healthChecks, [{ namespace: 'default', name: 'lb', port: 31000, localEndpoints: { inet: 2, inet6: 0 }, families: ['inet'] }], 'the NodePort Service\'s healthCheckNodePort is not served; nor a Cluster policy\'s');
  t.same([...s.desired.ipsets.get('KUBE-HEALTH-CHECK-NODE-PORT')!.entries], local.healthChecks.map((h) => String(h.port)), 'the same ports the set admits');
});

t.test('Services with a Local policy and no ready endpoint here', async (t) => {
  const s = store();
  t.same(s.localEndpoints().withoutLocalEndpoints, { internal: 1, external: 1 }, 'internal: the ITP=Local one; external: the NodePort one');
  s.upsertEndpointSlice(slice('np', [endpoint('10.244.1.9', { node: 'node-a' })], slicePorts));
  t.same(s.localEndpoints().withoutLocalEndpoints, { internal: 1, external: 0 }, 'a local endpoint arrives');
  s.upsertService(service('internal', { clusterIP: '10.96.0.12', ports }));
  t.same(s.localEndpoints().withoutLocalEndpoints, { internal: 0, external: 0 }, 'the policy goes back to Cluster');
  s.deleteService('default', 'lb');
  t.same(s.localEndpoints().healthChecks, [], 'a deleted Service\'s health check goes');
});

t.test('the local count follows slice changes', async (t) => {
  const s = store();
  s.deleteEndpointSlice(slice('lb', [], slicePorts, { name: 'lb-2' }));
  t.same(s.localEndpoints().healthChecks.map((h) => h.localEndpoints.inet), [1], 'only lb-1\'s ready local address is left');
  s.deleteEndpointSlice(slice('lb', [], slicePorts, { name: 'lb-1' }));
  t.same(s.localEndpoints().healthChecks.map((h) => h.localEndpoints.inet), [0]);
  t.same(s.localEndpoints().withoutLocalEndpoints.external, 1, 'lb has no slice left and is not counted (nothing there to be local); np still is');
});

t.test('a dual-stack Service: each family counts its own slices, so a dual-stack pod is one endpoint in each, not two', async (t) => {
  const s = new KnownObjects({ name: 'node-a', addresses: ['192.168.1.10', 'fd00::10'] }, defaultProxyConfig());
  s.upsertService(service('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10', 'fd00:96::10'], ipFamilies: ['IPv4', 'IPv6'], externalTrafficPolicy: 'Local', healthCheckNodePort: 31000, ports }));
  s.upsertEndpointSlice(slice('lb', [endpoint('10.244.1.5', { node: 'node-a' })], slicePorts, { name: 'lb-v4' }));
  s.upsertEndpointSlice(slice('lb', [endpoint('fd00:244:1::5', { node: 'node-a' }), endpoint('fd00:244:1::6', { node: 'node-a' })], slicePorts, { name: 'lb-v6', addressType: 'IPv6' }));
  t.same(s.localEndpoints().healthChecks.map((h) => [h.localEndpoints, h.families]), [[{ inet: 1, inet6: 2 }, ['inet', 'inet6']]]);
});
