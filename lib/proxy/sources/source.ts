/**
 * The contract between where Kubernetes objects come from (a folder of
 * YAML, an API server) and the proxy: per-object add/update/delete events,
 * and one `synced` once the initial state of every kind has been delivered
 * (the proxy must not sync before that, or it would remove the services it
 * has not heard about yet).
 */
import type { EndpointSlice, Node, Service } from '../../controller/model.js';

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
