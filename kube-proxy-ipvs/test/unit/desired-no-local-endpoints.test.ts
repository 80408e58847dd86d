/**
 * kubeproxy_sync_proxy_rules_no_local_endpoints_total as kube-proxy's IPVS
 * syncEndpoint counts it: per family, a Service whose virtual servers take
 * node-local endpoints only (internalTrafficPolicy Local for the ClusterIP
 * one, externalTrafficPolicy Local for the NodePort, externalIP and
 * LoadBalancer ones) and find none here — a local ready endpoint, or when
 * there is none a local serving-terminating one (CategorizeEndpoints) —
 * while some endpoint anywhere is usable (hasAnyEndpoints). Empty slices,
 * endpoints that are all not ready, or a local serving-terminating endpoint
 * do not make a Service count.
 */
import t from 'tap';
import { KnownObjects } from '../../lib/desired/known-objects.js';
import { defaultProxyConfig, type Endpoint, type Service } from '../../lib/kubernetes/model.js';
import { endpoint, service, slice } from '../support/k8s-objects.js';

const node = { name: 'node-a', addresses: ['192.168.1.10', 'fd00::10'], families: ['inet' as const, 'inet6' as const] };
const ports = [{ name: 'http', port: 80 }];
const slicePorts = [{ name: 'http', port: 8080 }];

/** One Service with internalTrafficPolicy Local and these endpoints in one IPv4 slice. */
function internalLocal(endpoints: Endpoint[], spec: Partial<Service['spec']> = {}): KnownObjects {
  const s = new KnownObjects(node, defaultProxyConfig());
  s.upsertService(service('web', { clusterIP: '10.96.0.10', internalTrafficPolicy: 'Local', ports, ...spec }));
  s.upsertEndpointSlice(slice('web', endpoints, slicePorts));
  return s;
}

const counted = (s: KnownObjects) => s.localEndpoints().withoutLocalEndpointsByFamily;

t.test('only a Service with some usable endpoint elsewhere counts', async (t) => {
  t.same(counted(internalLocal([endpoint('10.244.2.5', { node: 'node-b' })])).IPv4, { internal: 1, external: 0 }, 'a ready endpoint on another node: counted');
  t.same(counted(internalLocal([])).IPv4, { internal: 0, external: 0 }, 'an empty slice: no endpoint anywhere, not counted');
  t.same(
    counted(internalLocal([endpoint('10.244.2.5', { node: 'node-b', ready: false, serving: false }), endpoint('10.244.1.5', { node: 'node-a', ready: false, serving: false })])).IPv4,
    { internal: 0, external: 0 },
    'endpoints that are all unusable: not counted',
  );
  t.same(
    counted(internalLocal([endpoint('10.244.2.5', { node: 'node-b', ready: false, serving: true, terminating: true })])).IPv4,
    { internal: 1, external: 0 },
    'a serving-terminating endpoint elsewhere is usable: counted',
  );
});

t.test('a local serving-terminating endpoint is local when no ready one is', async (t) => {
  const s = internalLocal([endpoint('10.244.2.5', { node: 'node-b' }), endpoint('10.244.1.5', { node: 'node-a', ready: false, serving: true, terminating: true })]);
  t.same(counted(s).IPv4, { internal: 0, external: 0 }, 'the terminating local one is what the virtual server takes: not counted');
  t.same(s.localEndpoints().healthChecks, [], 'and it still is no ready endpoint for a health check (none here: ClusterIP)');
});

t.test('per family: the slices of that family only', async (t) => {
  const s = internalLocal([endpoint('10.244.2.5', { node: 'node-b' })], { clusterIPs: ['10.96.0.10', 'fd00:96::10'], ipFamilies: ['IPv4', 'IPv6'] });
  s.upsertEndpointSlice(slice('web', [endpoint('fd00:244::5', { node: 'node-a' })], slicePorts, { name: 'web-v6', addressType: 'IPv6' }));
  t.same(counted(s), { IPv4: { internal: 1, external: 0 }, IPv6: { internal: 0, external: 0 } }, 'no local IPv4 endpoint, a local IPv6 one');
});

t.test('per port: a port without a local endpoint is enough', async (t) => {
  const s = new KnownObjects(node, defaultProxyConfig());
  s.upsertService(service('web', { clusterIP: '10.96.0.10', internalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80 }, { name: 'metrics', port: 9090 }] }));
  s.upsertEndpointSlice(slice('web', [endpoint('10.244.1.5', { node: 'node-a' })], [{ name: 'http', port: 8080 }], { name: 'web-http' }));
  s.upsertEndpointSlice(slice('web', [endpoint('10.244.2.5', { node: 'node-b' })], [{ name: 'metrics', port: 9090 }], { name: 'web-metrics' }));
  t.same(counted(s).IPv4, { internal: 1, external: 0 }, 'the metrics port has its endpoint elsewhere only');
});

t.test('external: only where a virtual server takes local endpoints only', async (t) => {
  const remote = [endpoint('10.244.2.5', { node: 'node-b' })];
  const lb = (spec: Partial<Service['spec']>, status?: Service['status']) => {
    const s = new KnownObjects(node, defaultProxyConfig());
    s.upsertService(service('lb', { type: 'LoadBalancer', clusterIP: '10.96.0.11', externalTrafficPolicy: 'Local', healthCheckNodePort: 31000, ports, ...spec }, status));
    s.upsertEndpointSlice(slice('lb', remote, slicePorts));
    return counted(s).IPv4;
  };
  t.same(lb({ ports: [{ name: 'http', port: 80, nodePort: 30080 }] }), { internal: 0, external: 1 }, 'its NodePort virtual servers: counted');
  t.same(lb({}), { internal: 0, external: 0 }, 'no NodePort and no ingress yet: no external virtual server, not counted');
  t.same(lb({}, { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } }), { internal: 0, external: 1 }, 'its LoadBalancer VIP: counted');
  t.same(lb({ internalTrafficPolicy: 'Local' }), { internal: 1, external: 1 }, 'with both policies Local the ClusterIP one counts for both, as upstream');
});

t.test('the union over families: a Service counted in either, once', async (t) => {
  const s = internalLocal([endpoint('10.244.2.5', { node: 'node-b' })], { clusterIPs: ['10.96.0.10', 'fd00:96::10'], ipFamilies: ['IPv4', 'IPv6'] });
  s.upsertEndpointSlice(slice('web', [endpoint('fd00:244::5', { node: 'node-b' })], slicePorts, { name: 'web-v6', addressType: 'IPv6' }));
  t.same(counted(s), { IPv4: { internal: 1, external: 0 }, IPv6: { internal: 1, external: 0 } });
  t.same(s.localEndpoints().withoutLocalEndpoints, { internal: 1, external: 0 });
});
