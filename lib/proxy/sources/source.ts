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
