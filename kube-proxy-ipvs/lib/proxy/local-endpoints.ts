/**
 * The per-service facts the health-check node ports and the
 * no-local-endpoints gauges need, which the controller does not expose:
 * for each Service with a Local traffic policy, how many ready endpoints
 * run on this node (an address counted once across a Service's slices).
 *
 * Only that is kept: the Services with a Local policy (most have none),
 * and per slice its name and its ready addresses on this node (almost
 * always none: one shared empty list). Whole objects are the controller's
 * business, which keeps its own reduced copies.
 */
import type { EndpointSlice, Service } from '../kubernetes/model.js';
import { namespaceOf, SERVICE_NAME_LABEL, serviceKeyOf } from '../kubernetes/model.js';

export interface HealthCheckService {
  namespace: string;
  name: string;
  /** spec.healthCheckNodePort */
  port: number;
  localEndpoints: number;
}

/** What a Service with a Local traffic policy contributes here. */
interface LocalService {
  namespace: string;
  name: string;
  internalLocal: boolean;
  externalLocal: boolean;
  /** spec.healthCheckNodePort when it serves one (externalTrafficPolicy Local), else 0. */
  healthCheckNodePort: number;
}

/** A slice: its name, and the addresses of its ready endpoints on this node. */
interface LocalSlice {
  name: string;
  local: readonly string[];
}

const NONE: readonly string[] = [];

export class LocalEndpoints {
  /** service key → the service, for Services with a Local policy only */
  private readonly services = new Map<string, LocalService>();
  /** service key → its slices */
  private readonly slices = new Map<string, LocalSlice[]>();

  constructor(private nodeName: string) {}

  setService(svc: Service): void {
    const key = serviceKeyOf(svc.metadata);
    const internalLocal = svc.spec.internalTrafficPolicy === 'Local';
    const externalLocal = externallyLocal(svc);
    if (!internalLocal && !externalLocal) {
      this.services.delete(key);
      return;
    }
    const healthCheckNodePort = externalLocal ? (svc.spec.healthCheckNodePort ?? 0) : 0;
    this.services.set(key, { namespace: namespaceOf(svc.metadata), name: svc.metadata.name, internalLocal, externalLocal, healthCheckNodePort });
  }

  deleteService(svc: Service): void {
    this.services.delete(serviceKeyOf(svc.metadata));
  }

  setSlice(slice: EndpointSlice): void {
    const key = owner(slice);
    if (!key) return;
    let local: string[] | undefined;
    for (const ep of slice.endpoints ?? []) {
      // API semantics: a missing ready condition means ready.
      if (ep.nodeName === this.nodeName && (ep.conditions?.ready ?? true)) (local ??= []).push(...ep.addresses);
    }
    const entry: LocalSlice = { name: slice.metadata.name, local: local ?? NONE };
    const list = this.slices.get(key);
    if (!list) {
      this.slices.set(key, [entry]);
      return;
    }
    const at = list.findIndex((s) => s.name === entry.name);
    if (at >= 0) list[at] = entry;
    else list.push(entry);
  }

  deleteSlice(slice: EndpointSlice): void {
    const key = owner(slice);
    const list = key ? this.slices.get(key) : undefined;
    if (!list) return;
    const at = list.findIndex((s) => s.name === slice.metadata.name);
    if (at >= 0) list.splice(at, 1);
    if (list.length === 0) this.slices.delete(key!);
  }

  count(key: string): number {
    const local = new Set<string>();
    for (const slice of this.slices.get(key) ?? []) for (const a of slice.local) local.add(a);
    return local.size;
  }

  /** Services kube-proxy serves a health check for: externalTrafficPolicy Local with a healthCheckNodePort. */
  healthCheckServices(): HealthCheckService[] {
    const out: HealthCheckService[] = [];
    for (const [key, svc] of this.services) {
      if (!svc.healthCheckNodePort) continue;
      out.push({ namespace: svc.namespace, name: svc.name, port: svc.healthCheckNodePort, localEndpoints: this.count(key) });
    }
    return out;
  }

  /** kubeproxy_sync_proxy_rules_no_local_endpoints_total{traffic_policy}: Local services with no local endpoint. */
  noLocalEndpoints(): { internal: number; external: number } {
    let internal = 0;
    let external = 0;
    for (const [key, svc] of this.services) {
      const none = this.count(key) === 0 && (this.slices.get(key)?.length ?? 0) > 0;
      if (!none) continue;
      if (svc.internalLocal) internal++;
      if (svc.externalLocal) external++;
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
