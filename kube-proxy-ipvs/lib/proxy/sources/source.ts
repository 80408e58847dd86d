/**
 * The contract between where Kubernetes objects come from (a folder of
 * YAML, an API server) and the proxy: per-object add/update/delete events,
 * and one `synced` once the initial state of every kind has been delivered
 * (the proxy must not sync before that, or it would remove the services it
 * has not heard about yet).
 */
import { type EndpointSlice, type Node, SERVICE_NAME_LABEL, type Service } from '../../kubernetes/model.js';

export type EventType = 'add' | 'update' | 'delete';

export type SourceEvent =
  | { kind: 'Service'; type: EventType; object: Service }
  | { kind: 'EndpointSlice'; type: EventType; object: EndpointSlice }
  | { kind: 'Node'; type: EventType; object: Node };

export interface SourceHandlers {
  event(e: SourceEvent): void;
  /** Called once, after the initial objects of every kind were delivered. */
  synced(): void;
  /** An object failed validation and was not delivered (the source has logged it already). */
  rejected?(r: RejectedObject): void;
  /**
   * Objects handed over again unchanged, as client-go's informers hand
   * kube-proxy's handlers what they hold: after a relist, each object the
   * list had at the resourceVersion already delivered (`replayed`); every
   * resync period (ConfigSyncPeriod), every object (`resync`). Nothing
   * changed; kube-proxy's change trackers count them all the same.
   */
  replayed?(e: SourceEvent): void;
  resync?(): void;
}

/**
 * What a source does with an object that fails validation: a new object is
 * skipped; a bad update of an object it delivered before is refused and the
 * last good version stays in force (no event at all), so a typo cannot take
 * down a working Service.
 */
export type RejectAction = 'skipped' | 'kept-last-good';

export interface RejectedObject {
  kind: string;
  /** "Service demo/web", or where it is when it has no usable name ("Service (document 2)"). */
  object: string;
  /** The offending field (spec.ports[0].port), when one is to blame. */
  field?: string;
  problem: string;
  action: RejectAction;
}

export interface Source {
  /** For logs: "manifests /etc/kube-proxy/objects", "API server https://...". */
  readonly description: string;
  /** Resolves once the initial state was delivered; rejects if it cannot be read at all. */
  start(handlers: SourceHandlers): Promise<void>;
  stop(): Promise<void>;
}

/** "Service demo/web" */
export function eventLabel(e: SourceEvent): string {
  const m = e.object.metadata;
  return `${e.kind} ${m.namespace ? `${m.namespace}/` : ''}${m.name}`;
}

/**
 * Who a delivered object is: all its delete event needs, and all a source
 * keeps of it (the controller has what it needs from the object itself).
 */
export interface DeliveredIdentity {
  kind: SourceEvent['kind'];
  name: string;
  namespace?: string;
  /** EndpointSlices: the Service they belong to (kubernetes.io/service-name), which the controller files them under. */
  serviceName?: string;
}

export function identityOfObject(kind: SourceEvent['kind'], object: SourceEvent['object']): DeliveredIdentity {
  const m = object.metadata;
  const id: DeliveredIdentity = { kind, name: m.name };
  if (kind !== 'Node') id.namespace = m.namespace;
  const serviceName = kind === 'EndpointSlice' ? m.labels?.[SERVICE_NAME_LABEL] : undefined;
  if (serviceName !== undefined) id.serviceName = serviceName;
  return id;
}

/** A delete event's object: the identity the last delivered version had (name, namespace, the slice's Service). */
export function deletedObject(d: DeliveredIdentity): SourceEvent['object'] {
  const metadata = { name: d.name, ...(d.namespace !== undefined ? { namespace: d.namespace } : {}), ...(d.serviceName !== undefined ? { labels: { [SERVICE_NAME_LABEL]: d.serviceName } } : {}) };
  if (d.kind === 'Service') return { kind: 'Service', metadata, spec: {} };
  if (d.kind === 'EndpointSlice') return { kind: 'EndpointSlice', metadata, addressType: 'IPv4', endpoints: [] };
  return { kind: 'Node', metadata };
}
