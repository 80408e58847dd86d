/**
 * The Services with a Local traffic policy and their node-local endpoints:
 * what the health-check node ports answer (kube-proxy's
 * ServiceHealthServer) and what the no-local-endpoints gauges count. Made
 * from the known objects (known-objects.ts) with the rules the desired
 * state uses: which Services get a health check (healthCheckNodePortOf,
 * the same rule that fills KUBE-HEALTH-CHECK-NODE-PORT), which traffic
 * policies are in force, which endpoints are local (isLocalEndpoint).
 */
import type { SliceFacts } from '../kubernetes/object-facts.js';
import { READY } from '../kubernetes/object-facts.js';
import { namespaceOf, type Service } from '../kubernetes/model.js';
import { isLocalEndpoint } from './endpoints.js';
import { externalPolicyLocal, healthCheckNodePortOf, internalPolicyLocal } from './service-ports.js';

export interface HealthCheckService {
  namespace: string;
  name: string;
  /** spec.healthCheckNodePort */
  port: number;
  /** Ready endpoints on this node, an address counted once across the Service's slices and ports. */
  localEndpoints: number;
}

export interface LocalEndpoints {
  /** The health-check node ports to serve, one per LoadBalancer Service with externalTrafficPolicy Local. */
  healthChecks: HealthCheckService[];
  /**
   * kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy}:
   * Services with that Local policy that have endpoints, none of them
   * ready on this node.
   */
  withoutLocalEndpoints: { internal: number; external: number };
  /**
   * The same per IP family (the gauge's ip_family label), as each of
   * kube-proxy's per-family proxiers counts it: from the slices of that
   * family only.
   */
  withoutLocalEndpointsByFamily: Record<'IPv4' | 'IPv6', { internal: number; external: number }>;
}

/** Whether a Service's local endpoints matter here (it has a Local traffic policy in force). */
export function hasLocalPolicy(svc: Service): boolean {
  return internalPolicyLocal(svc) || externalPolicyLocal(svc);
}

/**
 * `services`: the Services with a Local policy, by key; `slicesOf`: a
 * Service's slices by its key.
 */
export function localEndpointsOf(services: Iterable<[string, Service]>, slicesOf: (key: string) => readonly SliceFacts[] | undefined, hostname: string): LocalEndpoints {
  const none = () => ({ internal: 0, external: 0 });
  const out: LocalEndpoints = { healthChecks: [], withoutLocalEndpoints: none(), withoutLocalEndpointsByFamily: { IPv4: none(), IPv6: none() } };
  const count = (into: { internal: number; external: number }, svc: Service) => {
    if (internalPolicyLocal(svc)) into.internal++;
    if (externalPolicyLocal(svc)) into.external++;
  };
  for (const [key, svc] of services) {
    const slices = slicesOf(key) ?? [];
    const local = localReadyEndpoints(slices, hostname);
    const port = healthCheckNodePortOf(svc);
    if (port !== 0) out.healthChecks.push({ namespace: namespaceOf(svc.metadata), name: svc.metadata.name, port, localEndpoints: local });
    for (const family of ['IPv4', 'IPv6'] as const) {
      const ofFamily = slices.filter((s) => s.addressType === family);
      if (ofFamily.length > 0 && localReadyEndpoints(ofFamily, hostname) === 0) count(out.withoutLocalEndpointsByFamily[family], svc);
    }
    if (local > 0 || slices.length === 0) continue;
    count(out.withoutLocalEndpoints, svc);
  }
  return out;
}

/** Ready endpoints on this node, each address once (kube-proxy's LocalReadyEndpoints: terminating ones do not count). */
function localReadyEndpoints(slices: readonly SliceFacts[], hostname: string): number {
  const addresses = new Set<string>();
  for (const slice of slices) {
    for (const ep of slice.endpoints) if ((ep.conditions & READY) !== 0 && isLocalEndpoint(ep, hostname)) addresses.add(ep.address);
  }
  return addresses.size;
}
