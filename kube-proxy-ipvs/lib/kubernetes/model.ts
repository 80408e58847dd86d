/**
 * The subset of the Kubernetes objects the proxy reads (core/v1 Service and
 * Node, discovery.k8s.io/v1 EndpointSlice), and the proxy's own inputs:
 * which node it runs on and how it is configured. Field names and
 * optionality follow the API exactly, so objects from the API server or
 * from YAML fit without conversion.
 */
import type { AddressFamily } from 'ipvs-netlink/address';

export type K8sProtocol = 'TCP' | 'UDP' | 'SCTP';
export type IPFamilyName = 'IPv4' | 'IPv6';
/** Each address family's Kubernetes IPFamily name (an EndpointSlice's addressType, the ip_family label, ipFamily in logs). */
export const IP_FAMILY: Readonly<Record<AddressFamily, IPFamilyName>> = { inet: 'IPv4', inet6: 'IPv6' };

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** The API server's version of the object; the sources tell an update from a repeat by it. */
  resourceVersion?: string;
}

export interface ServicePort {
  name?: string;
  protocol?: K8sProtocol;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}

export interface Service {
  apiVersion?: string;
  kind?: 'Service';
  metadata: ObjectMeta;
  spec: {
    type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
    selector?: Record<string, string>;
    clusterIP?: string;
    clusterIPs?: string[];
    /** Any string: not read (each ClusterIP's own family decides; the API server keeps the two in step). */
    ipFamilies?: string[];
    ports?: ServicePort[];
    externalIPs?: string[];
    loadBalancerSourceRanges?: string[];
    /** 'Cluster' or 'Local'; any other value reads as Cluster, as kube-proxy compares with Local only. */
    externalTrafficPolicy?: string;
    internalTrafficPolicy?: string;
    healthCheckNodePort?: number;
    /** 'None' or 'ClientIP'; any other value reads as None. */
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  };
  status?: {
    loadBalancer?: { ingress?: Array<{ ip?: string; hostname?: string; ipMode?: string }> };
  };
}

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  nodeName?: string;
  zone?: string;
  hints?: { forZones?: Array<{ name: string }>; forNodes?: Array<{ name: string }> };
}

export interface EndpointPort {
  name?: string;
  protocol?: K8sProtocol;
  port?: number;
}

export interface EndpointSlice {
  apiVersion?: string;
  kind?: 'EndpointSlice';
  metadata: ObjectMeta;
  addressType: 'IPv4' | 'IPv6' | 'FQDN';
  endpoints: Endpoint[];
  ports?: EndpointPort[];
}

export interface Node {
  apiVersion?: string;
  kind?: 'Node';
  metadata: ObjectMeta;
  /** podCIDRs: the ranges this node's pods get addresses from (--detect-local-mode=NodeCIDR). */
  spec?: { podCIDRs?: string[] };
  status?: { addresses?: Array<{ type: string; address: string }> };
}

/** The label that ties an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The node label topology hints are matched against. */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The node this proxy runs on, as the proxy sees it. */
export interface NodeInfo {
  /** --hostname-override: endpoints with this nodeName are local. */
  name: string;
  /**
   * The Node object / --bind-address: the node's addresses (both families for
   * dual-stack). They say which families are served, and the first of each
   * family is that family's primary. The kernel Controller takes NodePort
   * and "already local" addresses from the interfaces instead (as
   * kube-proxy); without a kernel (the plan command) these stand in.
   */
  addresses: string[];
  /**
   * The families served, as the host supports them (kernel/host-families.ts),
   * whatever the addresses: a family without a node address gets loopback as
   * its node IP, as kube-proxy's detectNodeIPs gives it. Undefined: the
   * families of the addresses.
   */
  families?: AddressFamily[];
  /** The Node object's labels (for topology hints), when known. */
  labels?: Record<string, string>;
  /** The Node object's spec.podCIDRs, when it has some: this node's pods' ranges (the NodeCIDR local-traffic detector). */
  podCIDRs?: string[];
}

export interface ProxyConfig {
  /** --ipvs-scheduler; kube-proxy defaults to rr. */
  scheduler: string;
  /** --masquerade-all: SNAT every packet to a ClusterIP. */
  masqueradeAll: boolean;
  /** --masquerade-bit: the fwmark bit that asks KUBE-POSTROUTING to masquerade (default 14, 0x4000). */
  masqueradeBit: number;
  /** --cluster-cidr: the cluster's pod CIDRs (the ClusterCIDR local-traffic detector's ranges). */
  clusterCIDRs: string[];
  /**
   * --detect-local-mode: how traffic from pods is told from other traffic;
   * traffic to a ClusterIP that is not from a pod is masqueraded
   * (desired/local-detector.ts).
   */
  detectLocalMode: DetectLocalMode;
  /** --pod-bridge-interface, --pod-interface-name-prefix: the BridgeInterface and InterfaceNamePrefix modes' interfaces. */
  detectLocal: { bridgeInterface: string; interfaceNamePrefix: string };
  /** --nodeport-addresses: CIDRs and the keywords "primary", "localhost", "all" (node-addresses.ts) narrowing the node addresses NodePorts listen on. */
  nodePortAddresses: string[];
  /** --ipvs-exclude-cidrs: virtual servers in these ranges belong to someone else and are never removed. */
  excludeCIDRs: string[];
  /** --ipvs-strict-arp (a sysctl; carried for the applier). */
  strictARP: boolean;
  /** MASQUERADE --random-fully, which kube-proxy adds when the iptables binary supports it. */
  randomFully: boolean;
  /**
   * maxelem of the hash sets, by set name (KUBE-CLUSTER-IP, KUBE-6-...);
   * sets not named get kube-proxy's fixed 65536 (#129389 asks for more).
   * Read when a set is created: an existing set keeps its size.
   */
  ipsetMaxElem?: Readonly<Record<string, number>>;
  /** Extension (--ipvs-rules-backend): the KUBE-* iptables chains and ipsets (kube-proxy's), or one nftables table per family. */
  rulesBackend: RulesBackend;
}

export type RulesBackend = 'iptables' | 'nftables';

/** kube-proxy's LocalMode values (detectLocalMode). */
export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'BridgeInterface' | 'InterfaceNamePrefix';

export function defaultProxyConfig(overrides: Partial<ProxyConfig> = {}): ProxyConfig {
  return {
    scheduler: 'rr',
    masqueradeAll: false,
    masqueradeBit: 14,
    clusterCIDRs: [],
    detectLocalMode: 'ClusterCIDR',
    detectLocal: { bridgeInterface: '', interfaceNamePrefix: '' },
    nodePortAddresses: [],
    excludeCIDRs: [],
    strictARP: false,
    randomFully: true,
    rulesBackend: 'iptables',
    ...overrides,
  };
}

export function namespaceOf(meta: ObjectMeta): string {
  return meta.namespace ?? 'default';
}

/** "namespace/name" */
export function serviceKeyOf(meta: ObjectMeta): string {
  return `${namespaceOf(meta)}/${meta.name}`;
}

/**
 * The key ("namespace/name") of the Service a slice belongs to, which it
 * names by label (so selector-less Services with hand-made slices work
 * too); undefined for a slice without the label.
 */
export function sliceOwner(slice: EndpointSlice): string | undefined {
  const name = slice.metadata.labels?.[SERVICE_NAME_LABEL];
  return name === undefined ? undefined : `${namespaceOf(slice.metadata)}/${name}`;
}
