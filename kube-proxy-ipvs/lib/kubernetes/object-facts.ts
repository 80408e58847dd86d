/**
 * What the proxy keeps of each Service and EndpointSlice between events:
 * the fields the mapping reads (desired/service-contribution.ts and what
 * it calls), nothing else. An object as parsed or as the API server sends it carries
 * metadata (labels, annotations such as kubectl's last-applied
 * configuration, managedFields) and, per endpoint, several small objects
 * and strings; kept whole, 10,000 Services with 10-endpoint slices were
 * most of the proxy's heap. What is kept shares strings: addresses as
 * canonical text (the parsed string itself when it already is), node
 * names, port lists and hints through an Interner.
 */
import type { Endpoint, EndpointSlice, K8sProtocol, Service } from './model.js';
import { canonicalAddressSloppy } from './sloppy-address.js';
import { schedulingAnnotationsOf } from './service-scheduling.js';

/** Endpoint conditions as bits, with the API's defaults applied (a missing ready means ready...). */
export const READY = 1;
export const SERVING = 2;
export const TERMINATING = 4;

export interface EndpointFacts {
  /** The first address, canonical (kube-proxy uses that one only). */
  address: string;
  /** READY | SERVING | TERMINATING */
  conditions: number;
  nodeName: string | undefined;
  /** Topology hints, when the endpoint has any. */
  hints: EndpointHints | undefined;
}

export interface EndpointHints {
  zones: readonly string[];
  nodes: readonly string[];
}

export interface SlicePortFacts {
  /** "" when unnamed. */
  name: string;
  protocol: K8sProtocol;
  port: number | undefined;
}

export interface SliceFacts {
  name: string;
  addressType: EndpointSlice['addressType'];
  ports: readonly SlicePortFacts[];
  /** Endpoints without a usable first address are left out (the mapping skips them). */
  endpoints: readonly EndpointFacts[];
}

/**
 * Shares equal values (node names, port lists) between the objects that
 * hold them. It forgets everything once it holds `limit` values, so
 * churning names cannot grow it without bound; forgetting costs sharing,
 * never correctness.
 */
class Interner<T> {
  private readonly values = new Map<string, T>();

  constructor(private readonly limit = 10_000) {}

  get(key: string, make: (key: string) => T): T {
    let v = this.values.get(key);
    if (v === undefined) {
      if (this.values.size >= this.limit) this.values.clear();
      v = make(key);
      this.values.set(key, v);
    }
    return v;
  }
}

export class FactsBuilder {
  private readonly strings = new Interner<string>();
  private readonly slicePorts = new Interner<readonly SlicePortFacts[]>();

  /** A Service reduced to the fields servicePortInfos() and the scheduler annotations read, as a Service. */
  service(svc: Service): Service {
    const s = svc.spec;
    const spec: Service['spec'] = {};
    if (s.type !== undefined) spec.type = s.type;
    // The API server keeps clusterIPs[0] equal to clusterIP; a parser gives each its own copy, and one is enough.
    if (s.clusterIP !== undefined) spec.clusterIP = s.clusterIPs?.[0] === s.clusterIP ? s.clusterIPs[0] : s.clusterIP;
    if (s.clusterIPs !== undefined) spec.clusterIPs = s.clusterIPs;
    if (s.externalIPs?.length) spec.externalIPs = s.externalIPs;
    if (s.loadBalancerSourceRanges?.length) spec.loadBalancerSourceRanges = s.loadBalancerSourceRanges;
    if (s.externalTrafficPolicy !== undefined) spec.externalTrafficPolicy = s.externalTrafficPolicy;
    if (s.internalTrafficPolicy !== undefined) spec.internalTrafficPolicy = s.internalTrafficPolicy;
    if (s.healthCheckNodePort !== undefined) spec.healthCheckNodePort = s.healthCheckNodePort;
    if (s.sessionAffinity !== undefined) spec.sessionAffinity = s.sessionAffinity;
    const timeout = s.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    if (timeout !== undefined) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: timeout } };
    if (s.ports?.length) {
      spec.ports = s.ports.map((p) => {
        const port: NonNullable<Service['spec']['ports']>[number] = { port: p.port };
        if (p.name !== undefined) port.name = p.name;
        if (p.protocol !== undefined) port.protocol = p.protocol;
        if (p.nodePort !== undefined) port.nodePort = p.nodePort;
        return port;
      });
    }
    const out: Service = { metadata: { name: svc.metadata.name }, spec };
    if (svc.metadata.namespace !== undefined) out.metadata.namespace = svc.metadata.namespace;
    // Of the annotations, only the IPVS scheduler ones are read (service-scheduling.ts).
    const annotations = schedulingAnnotationsOf(svc.metadata.annotations);
    if (annotations !== undefined) out.metadata.annotations = annotations;
    const ingress = svc.status?.loadBalancer?.ingress?.filter((i) => i.ip !== undefined);
    if (ingress?.length) out.status = { loadBalancer: { ingress: ingress.map((i) => (i.ipMode === undefined ? { ip: i.ip } : { ip: i.ip, ipMode: i.ipMode })) } };
    return out;
  }

  /**
   * An EndpointSlice reduced to what endpointsForPort() reads. A cold
   * start reduces every endpoint of the cluster here, so nothing is made
   * per endpoint but its facts: no iterator, no closure, and hint arrays
   * only for an endpoint that has hints.
   */
  slice(slice: EndpointSlice): SliceFacts {
    const endpoints: EndpointFacts[] = [];
    const all = slice.endpoints ?? [];
    for (let i = 0; i < all.length; i++) {
      const ep = all[i];
      const first = ep.addresses?.[0];
      // As endpointslicecache.go: utilnet.ParseIPSloppy(endpoint.Addresses[0]).
      const address = first === undefined ? undefined : canonicalAddressSloppy(first);
      if (address === undefined) continue;
      // As kube-proxy reads them (endpointslicecache.go): a nil ready or serving means true, a nil terminating false.
      const ready = ep.conditions?.ready ?? true;
      const conditions = (ready ? READY : 0) | ((ep.conditions?.serving ?? true) ? SERVING : 0) | (ep.conditions?.terminating ? TERMINATING : 0);
      endpoints.push({
        address,
        conditions,
        nodeName: ep.nodeName === undefined ? undefined : this.string(ep.nodeName),
        hints: ep.hints ? hintsOf(ep.hints) : undefined,
      });
    }
    const ports = slice.ports ?? [];
    const portsKey = JSON.stringify(ports.map((p) => [p.name ?? '', p.protocol ?? 'TCP', p.port ?? null]));
    return {
      name: slice.metadata.name,
      addressType: slice.addressType,
      ports: this.slicePorts.get(portsKey, () => ports.map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: p.port }))),
      endpoints,
    };
  }

  private string(s: string): string {
    return this.strings.get(s, itself);
  }
}

const NO_NAMES: readonly string[] = [];

/** A string as its own interned value (one function, not a closure per endpoint's node name). */
const itself = (s: string): string => s;

/** An endpoint's topology hints as names, or undefined when it names no zone and no node. */
function hintsOf(hints: NonNullable<Endpoint['hints']>): EndpointHints | undefined {
  const zones = hints.forZones?.length ? hints.forZones.map((z) => z.name) : NO_NAMES;
  const nodes = hints.forNodes?.length ? hints.forNodes.map((n) => n.name) : NO_NAMES;
  return zones.length + nodes.length > 0 ? { zones, nodes } : undefined;
}
