/**
 * Terse builders for the Kubernetes objects the controller tests feed in,
 * and a summary of a desired state that keeps every non-empty ipset.
 */
import type { Endpoint, EndpointSlice, Service } from '../../lib/kubernetes/model.js';
import { planOutput, type PlanOutput } from '../../lib/plan/plan-json.js';
import type { DesiredState } from '../../lib/plan/kernel-state.js';

export function service(name: string, spec: Service['spec'], status?: Service['status'], namespace = 'default'): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec, ...(status ? { status } : {}) };
}

export interface EndpointOptions {
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  zones?: string[];
}

export function endpoint(address: string, o: EndpointOptions = {}): Endpoint {
  const e: Endpoint = { addresses: [address], conditions: {} };
  if (o.ready !== undefined) e.conditions!.ready = o.ready;
  if (o.serving !== undefined) e.conditions!.serving = o.serving;
  if (o.terminating !== undefined) e.conditions!.terminating = o.terminating;
  if (o.node) e.nodeName = o.node;
  if (o.zones) e.hints = { forZones: o.zones.map((name) => ({ name })) };
  return e;
}

export function slice(
  serviceName: string,
  endpoints: Endpoint[],
  ports: EndpointSlice['ports'],
  o: { name?: string; addressType?: EndpointSlice['addressType']; namespace?: string } = {},
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: o.name ?? `${serviceName}-abcde`, namespace: o.namespace ?? 'default', labels: { 'kubernetes.io/service-name': serviceName } },
    addressType: o.addressType ?? 'IPv4',
    endpoints,
    ports,
  };
}

export type Summary = Omit<PlanOutput, 'iptables' | 'ip6tables'> & { setCount: number };

/** The plan output without iptables, and with only the sets that have entries (setCount says how many exist). */
export function summary(desired: DesiredState): Summary {
  const { iptables: _v4, ip6tables: _v6, ...rest } = planOutput(desired);
  const ipsets = Object.fromEntries(Object.entries(rest.ipsets).filter(([, s]) => s.entries.length > 0));
  return { ...rest, ipsets, setCount: desired.ipsets.size };
}
