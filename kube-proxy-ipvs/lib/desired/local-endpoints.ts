/**
 * The Services with a Local traffic policy and their node-local endpoints:
 * what the health-check node ports answer (kube-proxy's
 * ServiceHealthServer) and what the no-local-endpoints gauges count. Made
 * from the known objects (known-objects.ts) with the rules the desired
 * state uses: which Services get a health check (healthCheckNodePortOf,
 * the same rule that fills KUBE-HEALTH-CHECK-NODE-PORT), which traffic
 * policies are in force, which endpoints are local (isLocalEndpoint), and
 * each port's endpoints as its virtual servers get them (endpointsForPort).
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { SliceFacts } from '../kubernetes/object-facts.js';
import { READY } from '../kubernetes/object-facts.js';
import { namespaceOf, type Service } from '../kubernetes/model.js';
import { endpointsForPort, isLocalEndpoint, type EndpointInfo } from './endpoints.js';
import { externalPolicyLocal, healthCheckNodePortOf, internalPolicyLocal, servicePortInfos, usesLocalEndpoints } from './service-ports.js';

export interface HealthCheckService {
  namespace: string;
  name: string;
  /** spec.healthCheckNodePort */
  port: number;
  /**
   * Ready endpoints on this node, by family: an address counted once
   * across the Service's slices and ports of its family. Each of
   * kube-proxy's family proxiers counts only its own family's endpoints,
   * so a dual-stack pod counts once in each, never twice.
   */
  localEndpoints: Record<AddressFamily, number>;
  /** The families the Service has (its ClusterIPs'): a request over another family is answered with the Service's own. */
  families: AddressFamily[];
}

export interface LocalEndpoints {
  /** The health-check node ports to serve, one per LoadBalancer Service with externalTrafficPolicy Local. */
  healthChecks: HealthCheckService[];
  /** The Services counted below in either family, each once. */
  withoutLocalEndpoints: { internal: number; external: number };
  /**
   * kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy,
   * ip_family}, as each of kube-proxy's per-family IPVS proxiers counts it
   * (syncEndpoint): the Services with a port whose virtual servers take
   * node-local endpoints only and find none here, while the port has a
   * usable endpoint somewhere (lackingLocalEndpoints).
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
  for (const [key, svc] of services) {
    const slices = slicesOf(key) ?? [];
    const port = healthCheckNodePortOf(svc);
    if (port !== 0) {
      const families = (['inet', 'inet6'] as const).filter((f) => servicePortInfos(svc, f).length > 0);
      out.healthChecks.push({ namespace: namespaceOf(svc.metadata), name: svc.metadata.name, port, localEndpoints: localReadyEndpoints(slices, hostname), families });
    }
    const inEither = { internal: false, external: false };
    for (const [family, name] of [['inet', 'IPv4'], ['inet6', 'IPv6']] as const) {
      const lacking = lackingLocalEndpoints(svc, slices, family, hostname);
      const into = out.withoutLocalEndpointsByFamily[name];
      if (lacking.internal) into.internal++;
      if (lacking.external) into.external++;
      inEither.internal ||= lacking.internal;
      inEither.external ||= lacking.external;
    }
    if (inEither.internal) out.withoutLocalEndpoints.internal++;
    if (inEither.external) out.withoutLocalEndpoints.external++;
  }
  return out;
}

/**
 * Which Local policies of the Service leave a port of this family without
 * an endpoint here, as kube-proxy's IPVS syncEndpoint finds it for each
 * virtual server that takes node-local endpoints only: the ClusterIP one
 * with internalTrafficPolicy Local, the NodePort, externalIP and
 * LoadBalancer ones with externalTrafficPolicy Local (usesLocalEndpoints:
 * one of them exists). Such a virtual server counts for each Local policy
 * of the Service, so with both Local the ClusterIP one counts for both.
 * "None here" is CategorizeEndpoints' empty local list (no local ready
 * endpoint, nor, failing those, a local serving-terminating one), and it
 * counts only while the port has a usable endpoint anywhere
 * (hasAnyEndpoints): a Service with no endpoint at all is not one whose
 * endpoints are elsewhere.
 */
function lackingLocalEndpoints(svc: Service, slices: readonly SliceFacts[], family: AddressFamily, hostname: string): { internal: boolean; external: boolean } {
  const out = { internal: false, external: false };
  for (const info of servicePortInfos(svc, family)) {
    if (!usesLocalEndpoints(info)) continue;
    const endpoints = endpointsForPort(slices, info.portName, info.protocol, family, hostname);
    if (!endpoints.some(usable) || endpoints.some((e) => e.isLocal && usable(e))) continue;
    out.internal ||= info.internalPolicyLocal;
    out.external ||= info.externalPolicyLocal;
  }
  return out;
}

/** Usable for Local policy: ready, or, when none is, serving and terminating. */
function usable(e: EndpointInfo): boolean {
  return e.ready || (e.serving && e.terminating);
}

/**
 * Ready endpoints on this node, each address once, by the family of its
 * slice (kube-proxy's LocalReadyEndpoints over one family's endpoints:
 * terminating ones do not count; FQDN slices are no family's).
 */
function localReadyEndpoints(slices: readonly SliceFacts[], hostname: string): Record<AddressFamily, number> {
  const addresses = { inet: new Set<string>(), inet6: new Set<string>() };
  for (const slice of slices) {
    const into = slice.addressType === 'IPv4' ? addresses.inet : slice.addressType === 'IPv6' ? addresses.inet6 : undefined;
    if (!into) continue;
    for (const ep of slice.endpoints) if ((ep.conditions & READY) !== 0 && isLocalEndpoint(ep, hostname)) into.add(ep.address);
  }
  return { inet: addresses.inet.size, inet6: addresses.inet6.size };
}
