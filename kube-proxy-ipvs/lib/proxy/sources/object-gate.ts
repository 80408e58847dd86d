/**
 * Per-object validation for a stream of add/update/delete events (the API
 * server's informers): each Service, EndpointSlice and Node is checked with
 * the same rules as manifests (lib/kubernetes/validate.ts) before the proxy
 * sees it. The API server validates objects itself, but not every field the
 * way the proxy needs it (an admission webhook, a CRD-backed aggregated API,
 * an older server, a buggy controller writing EndpointSlices), and one
 * object that would throw inside the planner must not stop the others.
 *
 * - a new object that is invalid is skipped;
 * - an invalid update of an object delivered before is refused and the last
 *   good version stays in force (nothing is emitted). Deleting instead would
 *   turn a typo into an outage of a working Service; keeping it is what the
 *   operator had a moment ago and is fixed by the next good update;
 * - a delete is passed on with the identity of the last good version (its
 *   name, and for a slice the Service label the controller filed it under),
 *   or dropped when nothing was ever delivered.
 *
 * Only that identity is kept per object, not the object: the controller
 * keeps what it needs of each (a slice's endpoints become its facts), and a
 * whole object kept here would hold everything the API server sent for it.
 *
 * Every rejection is logged as a structured warning naming the object and
 * the field, and reported to the handlers (the metric).
 */
import type { Logger } from 'pino';
import type { EndpointSlice, Node, Service } from '../../kubernetes/model.js';
import { FieldError, validateEndpointSlice, validateNode, validateService } from '../../kubernetes/validate.js';
import { type DeliveredIdentity, deletedObject, type EventType, identityOfObject, type RejectedObject, type SourceEvent, type SourceHandlers } from './source.js';

type Kind = SourceEvent['kind'];
type K8sObject = Service | EndpointSlice | Node;

const VALIDATORS: Record<Kind, (o: Record<string, unknown>) => K8sObject> = {
  Service: validateService,
  EndpointSlice: validateEndpointSlice,
  Node: validateNode,
};

export class ObjectGate {
  /** kind/namespace/name → who the last version delivered was. */
  private readonly delivered = new Map<string, DeliveredIdentity>();

  constructor(
    private readonly handlers: () => SourceHandlers | undefined,
    private readonly logger: Logger,
  ) {}

  offer(kind: Kind, type: EventType, raw: unknown): void {
    const o = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
    const meta = (typeof o.metadata === 'object' && o.metadata !== null ? o.metadata : {}) as Record<string, unknown>;
    const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : undefined;
    const namespace = kind === 'Node' ? undefined : typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default';
    const label = name === undefined ? `${kind} (no metadata.name)` : `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
    if (name === undefined) {
      if (type !== 'delete') this.reject({ kind, object: label, field: 'metadata.name', problem: 'metadata.name must be a non-empty string', action: 'skipped' });
      return;
    }
    const key = `${kind}/${namespace ?? ''}/${name}`;
    const last = this.delivered.get(key);
    if (type === 'delete') {
      if (last === undefined) return; // never delivered (it was invalid): nothing to take back
      this.delivered.delete(key);
      this.emit({ kind, type: 'delete', object: deletedObject(last) } as SourceEvent);
      return;
    }
    let object: K8sObject;
    try {
      object = VALIDATORS[kind](o);
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      this.reject({ kind, object: label, field: e.field, problem: e.message, action: last === undefined ? 'skipped' : 'kept-last-good' });
      return;
    }
    this.delivered.set(key, identityOfObject(kind, object));
    this.emit({ kind, type: last === undefined ? 'add' : 'update', object } as SourceEvent);
  }

  private emit(e: SourceEvent): void {
    this.handlers()?.event(e);
  }

  private reject(r: RejectedObject): void {
    logRejected(this.logger, r);
    this.handlers()?.rejected?.(r);
  }
}

/** The one warning every source writes for a rejected object. */
export function logRejected(logger: Logger, r: RejectedObject, extra: Record<string, unknown> = {}): void {
  const what = r.action === 'skipped' ? 'invalid object skipped; the other objects are programmed' : 'invalid update refused; the last good version of this object stays programmed';
  logger.warn({ kind: r.kind, object: r.object, field: r.field, error: r.problem, action: r.action, ...extra }, `${what} (fix the object to apply it)`);
}
