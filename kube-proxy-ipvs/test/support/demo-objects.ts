/**
 * Two services for the traffic tests, with their pods on another node
 * (no hairpin): api (ClusterIP 10.96.100.10:80) and web (NodePort 30080,
 * ClusterIP 10.96.100.20:80), both served by be1 and be2 on port 8080.
 */
import type { EndpointSlice, NodeInfo } from '../../lib/kubernetes/model.js';
import { endpoint, service, slice } from './k8s-objects.js';
import { NODE_IP, PODS } from './traffic.js';

export const node: NodeInfo = { name: 'node-a', addresses: [NODE_IP] };
export const API_VIP = '10.96.100.10';
export const WEB_VIP = '10.96.100.20';
export const NODE_PORT = 30080;

export const api = service('api', { type: 'ClusterIP', clusterIP: API_VIP, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] });
export const web = service('web', { type: 'NodePort', clusterIP: WEB_VIP, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: NODE_PORT }] });

export function endpointsOf(name: string, pods: ReadonlyArray<keyof typeof PODS>): EndpointSlice {
  return slice(name, pods.map((p) => endpoint(PODS[p], { node: 'node-b', ready: true })), [{ name: 'http', protocol: 'TCP', port: 8080 }]);
}

/**
 * A LoadBalancer Service with externalTrafficPolicy: Local and its slice,
 * as manifests: one endpoint on another node, then `localEndpoints` (slice
 * endpoint lines) on this one.
 */
export function localLoadBalancerYaml(hcPort: number, localEndpoints = ''): string {
  return `apiVersion: v1
kind: Service
metadata: {name: lb, namespace: demo}
spec:
  type: LoadBalancer
  clusterIP: 10.96.100.30
  externalTrafficPolicy: Local
  healthCheckNodePort: ${hcPort}
  ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30090}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: lb-1, namespace: demo, labels: {kubernetes.io/service-name: lb}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints:
  - {addresses: [10.244.2.50], nodeName: node-b}
${localEndpoints}`;
}
