/**
 * EndpointSlices → the endpoints of one service port, as kube-proxy's
 * EndpointSliceCache builds them: the slices of the port's family, the
 * slice port with the same name and protocol, one endpoint per first
 * address, conditions defaulted the way the API documents them.
 */
import type { EndpointSlice, K8sProtocol } from './model.js';
import { canonicalAddress, naturalCompare, type AddressFamily } from './net.js';
import { destinationKey } from './state.js';

export interface EndpointInfo {
  address: string;
  port: number;
  /** nodeName == this node. */
  isLocal: boolean;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints: string[];
  nodeHints: string[];
}

export function endpointsForPort(
  slices: readonly EndpointSlice[],
  portName: string,
  protocol: K8sProtocol,
  family: AddressFamily,
  hostname: string,
): EndpointInfo[] {
  const addressType = family === 'inet' ? 'IPv4' : 'IPv6';
  const byKey = new Map<string, EndpointInfo>();
  // Slice order must not change the result: go by name, as the cache does.
  const ordered = [...slices].sort((a, b) => naturalCompare(a.metadata.name, b.metadata.name));
  for (const slice of ordered) {
    if (slice.addressType !== addressType) continue;
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol);
    if (port?.port === undefined || port.port === 0) continue;
    for (const ep of slice.endpoints ?? []) {
      const info = toEndpointInfo(ep, port.port, hostname);
      if (info === undefined) continue;
      const key = destinationKey(info);
      const seen = byKey.get(key);
      // The same address in two slices (during a slice split): keep the ready copy.
      if (seen === undefined || (!seen.ready && info.ready)) byKey.set(key, info);
    }
  }
  return [...byKey.values()];
}

function toEndpointInfo(ep: EndpointSlice['endpoints'][number], port: number, hostname: string): EndpointInfo | undefined {
  // kube-proxy uses the first address only (the API says the others are ignored by consumers).
  const address = ep.addresses?.[0] === undefined ? undefined : canonicalAddress(ep.addresses[0]);
  if (address === undefined) return undefined;
  // API semantics: a nil ready means ready; a nil serving follows ready; a nil terminating means not terminating.
  const ready = ep.conditions?.ready ?? true;
  return {
    address,
    port,
    isLocal: ep.nodeName !== undefined && ep.nodeName === hostname,
    ready,
    serving: ep.conditions?.serving ?? ready,
    terminating: ep.conditions?.terminating ?? false,
    zoneHints: (ep.hints?.forZones ?? []).map((z) => z.name),
    nodeHints: (ep.hints?.forNodes ?? []).map((n) => n.name),
  };
}
