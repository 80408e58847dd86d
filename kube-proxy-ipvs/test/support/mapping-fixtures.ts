/**
 * What the mapping tests share (controller-mapping*.test.ts): a node, a
 * web Service with its slices, a LoadBalancer with source ranges, the
 * expected virtual servers' shape, and the runner of a table of cases.
 */
import t from 'tap';
import { defaultProxyConfig, type Endpoint, type EndpointSlice, type NodeInfo, type ProxyConfig, type Service } from '../../lib/kubernetes/model.js';
import { desiredState } from '../../lib/desired/known-objects.js';
import type { PlannedVirtualServer } from '../../lib/plan/plan-json.js';
import { endpoint, service, slice, summary, type Summary } from './k8s-objects.js';

export const nodeA: NodeInfo = { name: 'node-a', addresses: ['192.168.1.10'], labels: { 'topology.kubernetes.io/zone': 'zone-a' } };

export const http = [{ name: 'http', protocol: 'TCP' as const, port: 8080 }];
export const webSlice = slice('web', [endpoint('10.244.1.5', { node: 'node-a' }), endpoint('10.244.2.6', { node: 'node-b' })], http);
export const remoteOnly = slice('web', [endpoint('10.244.2.6', { node: 'node-b' })], http);
export const clusterIPWeb = service('web', { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] });

export function lbWithRanges(ranges: string[]): Service {
  return service('shop', {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.40',
    loadBalancerSourceRanges: ranges,
    ports: [{ name: 'https', port: 443, nodePort: 31443 }],
  }, { loadBalancer: { ingress: [{ ip: '192.0.2.100' }] } });
}

export function vs(
  protocol: PlannedVirtualServer['protocol'],
  address: string,
  port: number,
  realServers: Array<[string, number]>,
  o: { scheduler?: string; timeout?: number } = {},
): PlannedVirtualServer {
  return {
    protocol,
    address,
    port,
    scheduler: o.scheduler ?? 'rr',
    persistent: o.timeout !== undefined,
    timeout: o.timeout ?? 0,
    realServers: realServers.map(([address, port]) => ({ address, port, weight: 1 })),
  };
}

export interface Case {
  name: string;
  services: Service[];
  slices?: EndpointSlice[];
  node?: NodeInfo;
  config?: Partial<ProxyConfig>;
  want: Summary;
}

/** A ready endpoint with zone and node hints (an empty list: no hint of that kind). */
export function hinted(address: string, zones: string[], nodes: string[]): Endpoint {
  const e = endpoint(address, { ready: true });
  e.hints = { ...(zones.length ? { forZones: zones.map((name) => ({ name })) } : {}), ...(nodes.length ? { forNodes: nodes.map((name) => ({ name })) } : {}) };
  return e;
}

export function clusterIPWith(realServers: Array<[string, number]>, o: { scheduler?: string; timeout?: number } = {}): Summary {
  return {
    virtualServers: [vs('TCP', '10.96.0.10', 80, realServers, o)],
    ipsets: {
      'KUBE-CLUSTER-IP': { type: 'hash:ip,port', entries: ['10.96.0.10,tcp:80'] },
      'KUBE-IPVS-IPS': { type: 'hash:ip', entries: ['10.96.0.10'] },
    },
    boundAddresses: ['10.96.0.10'],
    setCount: 17,
  };
}

/** Each case is a test: the whole desired state of its objects on its node, summarised. */
export function runCases(cases: Case[]): void {
  for (const c of cases) {
    t.test(c.name, async (t) => {
      const desired = desiredState({ services: c.services, endpointSlices: c.slices ?? [] }, c.node ?? nodeA, defaultProxyConfig(c.config));
      t.strictSame(summary(desired), c.want);
    });
  }
}
