/**
 * Which endpoints a virtual server gets: kube-proxy's CategorizeEndpoints
 * (pkg/proxy/topology.go) and the choice syncEndpoint makes between its
 * cluster and local lists.
 */
import type { EndpointInfo } from './endpoints.js';
import type { ServicePortInfo } from './service-ports.js';
import { usesClusterEndpoints, usesLocalEndpoints } from './service-ports.js';

export interface Categorized {
  /** Usable endpoints for Cluster policy (topology applied), or [] when the service never uses them. */
  cluster: EndpointInfo[];
  /** Usable node-local endpoints for Local policy, or [] when the service never uses them. */
  local: EndpointInfo[];
}

type TopologyMode = '' | 'PreferSameNode' | 'PreferSameZone';

/**
 * "Usable" means Ready; Serving+Terminating endpoints are used only when no
 * Ready one is left (separately for the cluster and the local list), and
 * topology is ignored for them.
 */
export function categorizeEndpoints(
  endpoints: readonly EndpointInfo[],
  info: ServicePortInfo,
  nodeName: string,
  zone: string,
): Categorized {
  let cluster: EndpointInfo[] = [];
  if (usesClusterEndpoints(info)) {
    const mode = topologyModeFromHints(endpoints, nodeName, zone);
    cluster = endpoints.filter((e) => e.ready && availableForTopology(e, mode, nodeName, zone));
    if (cluster.length === 0) cluster = endpoints.filter((e) => e.serving && e.terminating);
  }
  let local: EndpointInfo[] = [];
  if (usesLocalEndpoints(info)) {
    local = endpoints.filter((e) => e.isLocal && e.ready);
    if (local.length === 0) local = endpoints.filter((e) => e.isLocal && e.serving && e.terminating);
  }
  return { cluster, local };
}

/**
 * syncEndpoint(onlyNodeLocal): the local endpoints when there are some;
 * otherwise the cluster ones, so that pods on this node can still reach the
 * service (#97081: external traffic is answered from the pod IP and dropped).
 */
export function selectEndpoints(c: Categorized, onlyNodeLocal: boolean): EndpointInfo[] {
  if (onlyNodeLocal && c.local.length > 0) return c.local;
  return c.cluster;
}

/**
 * Hints are honoured only when every Ready endpoint carries one and at least
 * one matches this node (forNodes, PreferSameTrafficDistribution) or its
 * zone (forZones); otherwise all endpoints are used.
 */
function topologyModeFromHints(endpoints: readonly EndpointInfo[], nodeName: string, zone: string): TopologyMode {
  let allNodeHints = true;
  let forNode = false;
  let allZoneHints = true;
  let forZone = false;
  for (const e of endpoints) {
    if (!e.ready) continue;
    if (e.nodeHints.length === 0) allNodeHints = false;
    else if (e.nodeHints.includes(nodeName)) forNode = true;
    if (e.zoneHints.length === 0) allZoneHints = false;
    else if (e.zoneHints.includes(zone)) forZone = true;
  }
  if (allNodeHints && forNode) return 'PreferSameNode';
  if (allZoneHints && forZone) return 'PreferSameZone';
  return '';
}

function availableForTopology(e: EndpointInfo, mode: TopologyMode, nodeName: string, zone: string): boolean {
  if (mode === 'PreferSameNode') return e.nodeHints.includes(nodeName);
  if (mode === 'PreferSameZone') return e.zoneHints.includes(zone);
  return true;
}
