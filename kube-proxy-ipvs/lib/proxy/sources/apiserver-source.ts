/**
 * Services, EndpointSlices (discovery.k8s.io/v1) and this node's Node from
 * an API server, through @kubernetes/client-node informers (list, then
 * watch from the list's resourceVersion; a 410 Gone relists and the
 * informer emits the differences, deletions included).
 *
 * client-node's ListWatch stops for good on any other error (a refused
 * connection, a 500, a failed list). This module owns the restart policy:
 * each informer is restarted after a backoff of 1 s doubling to 30 s, the
 * delay resetting once it has stayed up for a minute. A watch the server
 * simply closes is resumed by the informer itself, from the last
 * resourceVersion, so nothing is missed.
 *
 * Every object passes through an ObjectGate (object-gate.ts): one that
 * fails validation is logged and skipped (or, for an update, the last good
 * version stays), and the others carry on.
 *
 * The informers' caches hold identities, not objects. ListWatch keeps every
 * object it lists or watches, to tell an addition from an update (by
 * namespace, name and resourceVersion) and to find what a relist no longer
 * has; that is all it reads of them. Kept whole, a cluster's worth of
 * EndpointSlices (as client-node builds them from a list) cost the proxy
 * more than everything it derives from them. So what goes into a ListWatch
 * is a CachedIdentity: the metadata it reads, and the object itself, handed
 * over to the gate once and then dropped.
 */
import { CoreV1Api, DiscoveryV1Api, type KubeConfig, type KubernetesObject, type KubernetesListObject, ListWatch, Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ObjectGate } from './object-gate.js';
import type { Source, SourceEvent, SourceHandlers } from './source.js';

export interface ApiServerSourceOptions {
  kubeconfig: KubeConfig;
  nodeName: string;
  logger: Logger;
  /** How long the first list may take before start-up gives up. */
  initialListTimeoutMs?: number;
  backoff?: { initialMs: number; maxMs: number };
}

type Kind = SourceEvent['kind'];

/** What a ListWatch caches of an object; `object` rides along until the event handler takes it. */
class CachedIdentity implements KubernetesObject {
  readonly metadata: { name?: string; namespace?: string; resourceVersion?: string };
  constructor(public object: KubernetesObject | undefined) {
    const m = object?.metadata;
    this.metadata = { name: m?.name, namespace: m?.namespace, resourceVersion: m?.resourceVersion };
  }
}

const cachedIdentity = (o: KubernetesObject) => new CachedIdentity(o);

/** A Watch whose events carry CachedIdentity objects (errors and bookmarks pass as they are). */
function identityWatch(watch: Watch): Watch {
  return {
    watch: (path: string, query: Parameters<Watch['watch']>[1], callback: Parameters<Watch['watch']>[2], done: Parameters<Watch['watch']>[3]) =>
      watch.watch(path, query, (phase, obj, raw) => callback(phase, phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? cachedIdentity(obj as KubernetesObject) : obj, raw), done),
  } as Watch;
}

/**
 * The object of an informer event. A deletion a relist finds comes with the cached identity alone,
 * which is all a delete needs; every other event brings its object along, taken here exactly once.
 */
function takeObject(type: SourceEvent['type'], cached: KubernetesObject): KubernetesObject {
  if (!(cached instanceof CachedIdentity)) throw new Error("internal: an informer event without a CachedIdentity (has client-node's ListWatch changed?)");
  const object = cached.object;
  cached.object = undefined;
  if (object !== undefined) return object;
  if (type === 'delete') return { metadata: { ...cached.metadata } };
  throw new Error(`internal: an informer ${type} whose object was taken already (has client-node's ListWatch changed?)`);
}

/** kube-proxy skips objects another proxy implementation claims, and headless services. */
const SERVICE_SELECTOR = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';

interface Watched {
  kind: Kind;
  informer: ListWatch<KubernetesObject>;
  listed: boolean;
  delayMs: number;
  startedAt: number;
  restartTimer?: NodeJS.Timeout;
}

export class ApiServerSource implements Source {
  readonly description: string;
  private readonly watched: Watched[] = [];
  private stopped = false;
  private handlers?: SourceHandlers;
  private readonly backoff: { initialMs: number; maxMs: number };
  private readonly gate: ObjectGate;

  constructor(private readonly options: ApiServerSourceOptions) {
    this.description = `API server ${options.kubeconfig.getCurrentCluster()?.server ?? '?'}`;
    this.backoff = options.backoff ?? { initialMs: 1000, maxMs: 30_000 };
    this.gate = new ObjectGate(() => this.handlers, options.logger);
  }

  async start(handlers: SourceHandlers): Promise<void> {
    this.handlers = handlers;
    const kc = this.options.kubeconfig;
    const core = kc.makeApiClient(CoreV1Api);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const nodeSelector = `metadata.name=${this.options.nodeName}`;
    const list = <T>(fn: () => Promise<T>) => fn as unknown as () => Promise<KubernetesListObject<KubernetesObject>>;
    this.add('Service', '/api/v1/services', list(() => core.listServiceForAllNamespaces({ labelSelector: SERVICE_SELECTOR })), SERVICE_SELECTOR);
    this.add(
      'EndpointSlice',
      '/apis/discovery.k8s.io/v1/endpointslices',
      list(() => discovery.listEndpointSliceForAllNamespaces({ labelSelector: SERVICE_SELECTOR })),
      SERVICE_SELECTOR,
    );
    this.add('Node', '/api/v1/nodes', list(() => core.listNode({ fieldSelector: nodeSelector })), undefined, nodeSelector);
    await this.firstList();
    handlers.synced();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.watched) {
      clearTimeout(w.restartTimer);
      await w.informer.stop();
    }
  }

  private add(kind: Kind, path: string, listFn: () => Promise<KubernetesListObject<KubernetesObject>>, labelSelector?: string, fieldSelector?: string): void {
    const w: Watched = { kind, informer: undefined as never, listed: false, delayMs: this.backoff.initialMs, startedAt: 0 };
    // Wrapping the list tells us when the initial state (or a relist) has arrived.
    const tracked = async () => {
      const result = await listFn();
      w.listed = true;
      return { ...result, items: result.items.map(cachedIdentity) };
    };
    w.informer = new ListWatch<KubernetesObject>(path, identityWatch(new Watch(this.options.kubeconfig)), tracked, false, labelSelector, fieldSelector);
    const emit = (type: SourceEvent['type']) => (cached: KubernetesObject) => this.gate.offer(kind, type, takeObject(type, cached));
    w.informer.on('add', emit('add'));
    w.informer.on('update', emit('update'));
    w.informer.on('delete', emit('delete'));
    w.informer.on('error', (err: unknown) => this.failed(w, err));
    this.watched.push(w);
  }

  /** Starts every informer and waits for their first lists; an unreachable server fails start-up with an explanation. */
  private async firstList(): Promise<void> {
    // Long enough for a few retries (1 s, 2 s, 4 s backoff), short enough to fail start-up visibly.
    const timeoutMs = this.options.initialListTimeoutMs ?? 10_000;
    const server = this.options.kubeconfig.getCurrentCluster()?.server;
    const firstErrors = new Map<Kind, unknown>();
    const onError = (w: Watched) => (err: unknown) => {
      if (!w.listed) firstErrors.set(w.kind, err);
    };
    const listeners = this.watched.map((w) => {
      const l = onError(w);
      w.informer.on('error', l);
      return [w, l] as const;
    });
    try {
      const deadline = Date.now() + timeoutMs;
      for (const w of this.watched) {
        w.startedAt = Date.now();
        await w.informer.start();
      }
      // Restarts after a failed first list are scheduled by failed(); wait for all lists or the deadline.
      while (!this.watched.every((w) => w.listed)) {
        if (this.stopped) return;
        if (Date.now() > deadline) {
          const [kind, err] = [...firstErrors][0] ?? ['Service', new Error('no answer')];
          throw new Error(
            `cannot reach the API server at ${server} (listing ${kind}s failed: ${describeError(err)}); check --master/--kubeconfig, the network, and that the service account may list services, endpointslices and nodes`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      for (const [w, l] of listeners) w.informer.off('error', l);
    }
  }

  private failed(w: Watched, err: unknown): void {
    if (this.stopped) return;
    // Stayed up a while: the problem is new, start the backoff over.
    if (Date.now() - w.startedAt > 60_000) w.delayMs = this.backoff.initialMs;
    const delay = w.delayMs;
    w.delayMs = Math.min(w.delayMs * 2, this.backoff.maxMs);
    this.options.logger.warn({ kind: w.kind, err: describeError(err), retryInMs: delay }, 'watch failed; restarting the informer');
    clearTimeout(w.restartTimer);
    w.restartTimer = setTimeout(() => {
      if (this.stopped) return;
      w.startedAt = Date.now();
      w.informer.start().catch((e: unknown) => this.failed(w, e));
    }, delay);
    w.restartTimer.unref?.();
  }
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const code = (err as { code?: unknown }).code ?? cause?.code;
    const status = (err as { statusCode?: number }).statusCode;
    return [err.message, code && `(${String(code)})`, status && `HTTP ${status}`, cause?.message && cause.message !== err.message ? cause.message : undefined].filter(Boolean).join(' ');
  }
  return String(err);
}
