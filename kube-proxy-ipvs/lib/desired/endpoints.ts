/**
 * EndpointSlices → the endpoints of one service port, as kube-proxy's
 * EndpointSliceCache builds them: the slices of the port's family, the
 * slice port with the same name and protocol, one endpoint per first
 * address, conditions defaulted the way the API documents them (done when
 * the slice was reduced to its facts, kubernetes/object-facts.ts).
 */
import { READY, SERVING, TERMINATING, type EndpointFacts, type SliceFacts } from '../kubernetes/object-facts.js';
import { IP_FAMILY, type K8sProtocol } from '../kubernetes/model.js';
import { familyOf, type AddressFamily } from 'ipvs-netlink/address';
import { compareDestinations } from '../plan/kernel-state.js';

export interface EndpointInfo {
  address: string;
  port: number;
  /** nodeName == this node. */
  isLocal: boolean;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  zoneHints: readonly string[];
  nodeHints: readonly string[];
}

const NONE: readonly string[] = [];

/** An endpoint is local when its nodeName is this node's name (--hostname-override). */
export function isLocalEndpoint(ep: EndpointFacts, hostname: string): boolean {
  return ep.nodeName !== undefined && ep.nodeName === hostname;
}

/**
 * The endpoints in destination order (compareDestinations), each address
 * and port once. `slices` must be in name order, as the cache goes: when
 * the same address is in two slices (during a slice split), the first
 * one's copy is kept unless a later one is ready and it is not.
 */
export function endpointsForPort(
  slices: readonly SliceFacts[],
  portName: string,
  protocol: K8sProtocol,
  family: AddressFamily,
  hostname: string,
): EndpointInfo[] {
  const addressType = IP_FAMILY[family];
  const all: EndpointInfo[] = [];
  for (const slice of slices) {
    if (slice.addressType !== addressType) continue;
    const port = slice.ports.find((p) => p.name === portName && p.protocol === protocol);
    if (port?.port === undefined || port.port === 0) continue;
    for (const ep of slice.endpoints) {
      // As addEndpoints: an address of the other family than the proxier's is dropped ("incorrect IP version").
      if (familyOf(ep.address) !== family) continue;
      all.push({
        address: ep.address,
        port: port.port,
        isLocal: isLocalEndpoint(ep, hostname),
        ready: (ep.conditions & READY) !== 0,
        serving: (ep.conditions & SERVING) !== 0,
        terminating: (ep.conditions & TERMINATING) !== 0,
        zoneHints: ep.hints?.zones ?? NONE,
        nodeHints: ep.hints?.nodes ?? NONE,
      });
    }
  }
  // A stable sort: copies of one address:port stay in slice order, next to each other.
  all.sort(compareDestinations);
  const out: EndpointInfo[] = [];
  for (const e of all) {
    const last = out[out.length - 1];
    if (last === undefined || compareDestinations(last, e) !== 0) out.push(e);
    // As addEndpoints (endpointslicecache.go): a copy that is not terminating wins over one that is (an IP
    // reused by a new pod before the old one is gone). Among copies alike in that, upstream's choice
    // depends on Go's map order; a ready copy is taken here.
    else if (last.terminating !== e.terminating ? last.terminating : !last.ready && e.ready) out[out.length - 1] = e;
  }
  return out;
}
