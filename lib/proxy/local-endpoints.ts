/**
 * The per-service facts the health-check node ports and the
 * no-local-endpoints gauges need, which the controller does not expose:
 * for each Service with a Local traffic policy, how many ready endpoints
 * run on this node (an address counted once across a Service's slices).
 */
import type { EndpointSlice, Service } from '../controller/model.js';
import { namespaceOf, SERVICE_NAME_LABEL, serviceKeyOf } from '../controller/model.js';

export interface HealthCheckService {
  namespace: string;
  name: string;
  /** spec.healthCheckNodePort */
  port: number;
  localEndpoints: number;
}

export class LocalEndpoints {
  private readonly services = new Map<string, Service>();
  /** service key → slice name → slice */
  private readonly slices = new Map<string, Map<string, EndpointSlice>>();

  constructor(private nodeName: string) {}

  setService(svc: Service): void {
    this.services.set(serviceKeyOf(svc.metadata), svc);
  }

  deleteService(svc: Service): void {
    this.services.delete(serviceKeyOf(svc.metadata));
  }

  setSlice(slice: EndpointSlice): void {
    const key = owner(slice);
    if (!key) return;
    let m = this.slices.get(key);
    if (!m) this.slices.set(key, (m = new Map()));
    m.set(slice.metadata.name, slice);
  }

  deleteSlice(slice: EndpointSlice): void {
    const key = owner(slice);
    const m = key ? this.slices.get(key) : undefined;
    m?.delete(slice.metadata.name);
    if (key && m?.size === 0) this.slices.delete(key);
  }

  count(key: string): number {
    const local = new Set<string>();
    for (const slice of this.slices.get(key)?.values() ?? []) {
      for (const ep of slice.endpoints ?? []) {
        // API semantics: a missing ready condition means ready.
        if (ep.nodeName === this.nodeName && (ep.conditions?.ready ?? true)) ep.addresses.forEach((a) => local.add(a));
      }
    }
    return local.size;
  }

  /** Services kube-proxy serves a health check for: externalTrafficPolicy Local with a healthCheckNodePort. */
  healthCheckServices(): HealthCheckService[] {
    const out: HealthCheckService[] = [];
    for (const [key, svc] of this.services) {
      const port = svc.spec.healthCheckNodePort;
      if (!externallyLocal(svc) || !port) continue;
      out.push({ namespace: namespaceOf(svc.metadata), name: svc.metadata.name, port, localEndpoints: this.count(key) });
    }
    return out;
  }

  /** kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy}: Local services with no local endpoint. */
  noLocalEndpoints(): { internal: number; external: number } {
    let internal = 0;
    let external = 0;
    for (const [key, svc] of this.services) {
      const none = this.count(key) === 0 && (this.slices.get(key)?.size ?? 0) > 0;
      if (!none) continue;
      if (svc.spec.internalTrafficPolicy === 'Local') internal++;
      if (externallyLocal(svc)) external++;
    }
    return { internal, external };
  }
}

function externallyLocal(svc: Service): boolean {
  const external = svc.spec.type === 'NodePort' || svc.spec.type === 'LoadBalancer' || (svc.spec.externalIPs?.length ?? 0) > 0;
  return external && svc.spec.externalTrafficPolicy === 'Local';
}

function owner(slice: EndpointSlice): string | undefined {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name ? `${namespaceOf(slice.metadata)}/${name}` : undefined;
}
