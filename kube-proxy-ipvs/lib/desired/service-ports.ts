/**
 * One Service → the per-family, per-port facts the proxy works from (what
 * kube-proxy's BaseServicePortInfo holds): the family's ClusterIP,
 * externalIPs, LoadBalancer VIPs and source ranges, NodePort, affinity and
 * traffic policies.
 */
import type { K8sProtocol, Service } from '../kubernetes/model.js';
import { serviceKeyOf } from '../kubernetes/model.js';
import { familyOf, type AddressFamily, type Cidr } from 'ipvs-netlink/address';
import { canonicalAddressSloppy, parseCidrSloppy } from '../kubernetes/sloppy-address.js';

/** kube-proxy's default ClientIP affinity timeout (v1.DefaultClientIPServiceAffinitySeconds). */
const DEFAULT_AFFINITY_SECONDS = 10800;

export interface ServicePortInfo {
  /** "namespace/name" */
  service: string;
  /** The Service port's name ("" when unnamed); endpoint ports are matched by it. */
  portName: string;
  family: AddressFamily;
  protocol: K8sProtocol;
  port: number;
  clusterIP: string;
  /** 0 when the port has none. */
  nodePort: number;
  externalIPs: string[];
  loadBalancerVIPs: string[];
  loadBalancerSourceRanges: Cidr[];
  /** ClientIP affinity timeout in seconds, or undefined without affinity. */
  affinitySeconds: number | undefined;
  /** ETP=Local, which kube-proxy only honours for externally reachable services. */
  externalPolicyLocal: boolean;
  internalPolicyLocal: boolean;
  /** 0 when none; only LoadBalancer services with ETP=Local get one. */
  healthCheckNodePort: number;
}

/**
 * kube-proxy skips services without a usable ClusterIP (headless "None",
 * not yet allocated "") and ExternalName services (ShouldSkipService).
 */
function isProxied(svc: Service): boolean {
  const ip = svc.spec.clusterIP;
  return svc.spec.type !== 'ExternalName' && ip !== undefined && ip !== '' && ip !== 'None';
}

export function servicePortInfos(svc: Service, family: AddressFamily): ServicePortInfo[] {
  if (!isProxied(svc)) return [];
  const clusterIP = ofFamily(svc.spec.clusterIPs?.length ? svc.spec.clusterIPs : [svc.spec.clusterIP ?? ''], family)[0];
  // A dual-stack proxier only serves a service in the families it has a ClusterIP of.
  if (clusterIP === undefined) return [];

  const type = svc.spec.type ?? 'ClusterIP';
  const externalIPs = ofFamily(svc.spec.externalIPs ?? [], family);
  const loadBalancerVIPs = ofFamily(
    // As IsVIPMode: an ingress is a local VIP without an ipMode or with VIP; with Proxy (or a mode this
    // release does not know) the load balancer itself is reached, never this node.
    (svc.status?.loadBalancer?.ingress ?? []).filter((i) => i.ip && (i.ipMode === undefined || i.ipMode === 'VIP')).map((i) => i.ip as string),
    family,
  );
  // As MapCIDRsByIPFamily: trimmed, read sloppily, blank ones skipped.
  let loadBalancerSourceRanges = (svc.spec.loadBalancerSourceRanges ?? [])
    .flatMap((c, i) => (c.trim() === '' ? [] : [parseCidrSloppy(c.trim(), `spec.loadBalancerSourceRanges[${i}]`)]))
    .filter((c) => c.family === family);
  // A range of prefix 0 lets every source in: as kube-proxy since 1.34, the family has no firewall at all (an ipset refuses a /0).
  if (loadBalancerSourceRanges.some((c) => c.prefix === 0)) loadBalancerSourceRanges = [];
  const affinitySeconds =
    svc.spec.sessionAffinity === 'ClientIP'
      ? (svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS)
      : undefined;
  const externalLocal = externalPolicyLocal(svc);
  const internalLocal = internalPolicyLocal(svc);
  const healthCheckPort = healthCheckNodePortOf(svc);

  return (svc.spec.ports ?? []).map((p) => ({
    service: serviceKeyOf(svc.metadata),
    portName: p.name ?? '',
    family,
    protocol: p.protocol ?? 'TCP',
    port: p.port,
    clusterIP,
    nodePort: type === 'ClusterIP' ? 0 : (p.nodePort ?? 0),
    externalIPs,
    loadBalancerVIPs,
    loadBalancerSourceRanges,
    affinitySeconds,
    externalPolicyLocal: externalLocal,
    internalPolicyLocal: internalLocal,
    healthCheckNodePort: healthCheckPort,
  }));
}

/**
 * externalTrafficPolicy: Local as kube-proxy honours it
 * (apiservice.ExternalPolicyLocal): only for externally reachable Services,
 * NodePort and LoadBalancer ones and those with externalIPs.
 */
export function externalPolicyLocal(svc: Service): boolean {
  const type = svc.spec.type ?? 'ClusterIP';
  const externallyAccessible = type === 'NodePort' || type === 'LoadBalancer' || (svc.spec.externalIPs?.length ?? 0) > 0;
  return externallyAccessible && svc.spec.externalTrafficPolicy === 'Local';
}

/** internalTrafficPolicy: Local (apiservice.InternalPolicyLocal). */
export function internalPolicyLocal(svc: Service): boolean {
  return svc.spec.internalTrafficPolicy === 'Local';
}

/**
 * The health-check node port kube-proxy serves for a Service, or 0:
 * apiservice.NeedsHealthCheck, a LoadBalancer Service with
 * externalTrafficPolicy Local. A NodePort Service with a
 * healthCheckNodePort gets none (its KUBE-HEALTH-CHECK-NODE-PORT entry
 * and its listener come from this one rule).
 */
export function healthCheckNodePortOf(svc: Service): number {
  return svc.spec.type === 'LoadBalancer' && externalPolicyLocal(svc) ? (svc.spec.healthCheckNodePort ?? 0) : 0;
}

/**
 * Whether the service ever sends traffic to cluster-wide endpoints (kube-proxy's
 * UsesClusterEndpoints): an externally reachable port computes them even
 * with both policies Local, as the fallback when no endpoint is local (#97081).
 */
export function usesClusterEndpoints(info: ServicePortInfo): boolean {
  return !info.internalPolicyLocal || isExternallyAccessible(info);
}

/** Whether the service ever sends traffic to node-local endpoints only (UsesLocalEndpoints). */
export function usesLocalEndpoints(info: ServicePortInfo): boolean {
  return info.internalPolicyLocal || (isExternallyAccessible(info) && info.externalPolicyLocal);
}

function isExternallyAccessible(info: ServicePortInfo): boolean {
  return info.nodePort !== 0 || info.loadBalancerVIPs.length > 0 || info.externalIPs.length > 0;
}

function ofFamily(addresses: string[], family: AddressFamily): string[] {
  const out: string[] = [];
  for (const a of addresses) {
    const text = canonicalAddressSloppy(a.trim());
    if (text !== undefined && familyOf(text) === family && !out.includes(text)) out.push(text);
  }
  return out;
}
