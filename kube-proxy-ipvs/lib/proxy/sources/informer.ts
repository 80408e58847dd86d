/**
 * One resource's list and watch, as client-go's reflector keeps it: list,
 * then watch from the list's resourceVersion; a watch the server closes is
 * resumed from the last resourceVersion seen; a 410 Gone (a status, or an
 * ERROR event's) clears it, and the next round (at once, or when the
 * owner's `expired` handler starts it again) relists and reports the
 * differences, deletions included. An ERROR event of another code ends it
 * as a failure does.
 *
 * It remembers each object's identity and resourceVersion, not the object:
 * that is all it needs to tell an addition from an update and to find what a
 * relist no longer has, and a cluster's worth of EndpointSlices kept whole
 * would cost more than everything the proxy derives from them. Each object
 * is handed to the handlers once and not kept.
 *
 * Other failures (a refused connection, a failed list, an HTTP error, an
 * ERROR event other than 410) stop it and go to `error`: the owner decides
 * when to start it again (which relists).
 */
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node/dist/types.js';

/** Gets each event of a watch: its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and object. */
export type WatchEventHandler = (type: string, object: unknown) => void;

/** Watches a collection (api-watch.ts); `done` is called once, with the error or null when the stream ended. */
export interface Watcher {
  watch(path: string, query: Record<string, string | number | boolean>, event: WatchEventHandler, done: (err: unknown) => void): Promise<AbortController>;
}

export interface InformerHandlers {
  add(object: KubernetesObject): void;
  update(object: KubernetesObject): void;
  /** From a watch: the object as the server last had it; found missing by a relist: its identity alone. */
  delete(object: KubernetesObject): void;
  /**
   * The object again at the resourceVersion already handed over (a
   * relist's unchanged objects): client-go hands it to the handlers as an
   * update all the same, which kube-proxy's change trackers count.
   */
  replayed?(object: KubernetesObject): void;
  error(err: unknown): void;
  /**
   * A 410 Gone: the history it would resume from is compacted, and only a
   * relist can go on. Given, the owner starts it again (which relists) when
   * its backoff allows; absent, it relists at once.
   */
  expired?(): void;
}

export interface InformerOptions {
  /** The resource's collection, e.g. /api/v1/services. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  list(path: string, query: Record<string, string>): Promise<KubernetesListObject<KubernetesObject>>;
  watch: Watcher;
  handlers: InformerHandlers;
}

/** What is kept per object. */
export interface Seen {
  namespace?: string;
  name: string;
  resourceVersion?: string;
}

const keyOf = (m: { namespace?: string; name?: string }) => `${m.namespace ?? ''}/${m.name ?? ''}`;

export class Informer {
  private readonly seen = new Map<string, Seen>();
  private resourceVersion = '';
  private request?: AbortController;
  /** Bumped by start() and stop(): callbacks of an earlier round (a stopped one too) are ignored. */
  private round = 0;
  /** The Status of the current watch's ERROR event, until the watch ends. */
  private streamError?: { code?: number; message?: string };

  constructor(private readonly options: InformerOptions) {}

  /** Lists (unless a watch can resume) and watches. A failure goes to handlers.error, not here. */
  async start(): Promise<void> {
    const round = ++this.round;
    // An earlier round's ERROR, its watch ended unheard, says nothing of this one's.
    this.streamError = undefined;
    this.request?.abort();
    await this.next(round);
  }

  stop(): void {
    this.round++;
    this.request?.abort();
    this.request = undefined;
  }

  /** The resourceVersion a watch would resume from; empty when the next round lists. */
  latestResourceVersion(): string {
    return this.resourceVersion;
  }

  /** What it keeps of each object it has seen: identity and resourceVersion, nothing else. */
  identities(): Seen[] {
    return [...this.seen.values()];
  }

  private async next(round: number): Promise<void> {
    const { options } = this;
    const query: Record<string, string> = {};
    if (options.labelSelector !== undefined) query.labelSelector = options.labelSelector;
    if (options.fieldSelector !== undefined) query.fieldSelector = options.fieldSelector;
    try {
      if (!this.resourceVersion) {
        const list = await options.list(options.path, query);
        if (round !== this.round) return;
        this.relisted(list.items ?? []);
        this.resourceVersion = list.metadata?.resourceVersion ?? '';
      }
      const request = await options.watch.watch(
        options.path,
        // As client-go's reflector: bookmarks keep the resourceVersion fresh, and the server ends each watch
        // after 5-10 minutes (a random span, so informers do not reconnect in step), which also retires a
        // connection that died without a word.
        { ...query, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: Math.floor(300 * (1 + Math.random())) },
        (phase, object) => {
          if (round === this.round) this.event(phase, object as KubernetesObject);
        },
        (err) => {
          if (round === this.round) this.ended(round, err);
        },
      );
      if (round === this.round) this.request = request;
      else request.abort();
    } catch (err) {
      if (round === this.round) this.options.handlers.error(err);
    }
  }

  private ended(round: number, err: unknown): void {
    this.request = undefined;
    const status = this.streamError;
    this.streamError = undefined;
    const code = err ? ((err as { statusCode?: number }).statusCode ?? (err as { code?: number }).code) : status?.code;
    if (code !== 410 && (err || status)) {
      // As client-go's reflector: an ERROR event other than 410 ends the watch with its Status, as a failure does.
      this.options.handlers.error(err ?? Object.assign(new Error(status!.message ?? `watch ERROR event, code ${String(code)}`), { statusCode: code }));
      return;
    }
    if (code === 410) {
      this.resourceVersion = '';
      // Only a relist goes on from here; the owner may pace it.
      if (this.options.handlers.expired) return this.options.handlers.expired();
    }
    void this.next(round);
  }

  private event(phase: string, object: KubernetesObject): void {
    switch (phase) {
      case 'ADDED':
      case 'MODIFIED':
        this.addOrUpdate(object);
        break;
      case 'DELETED': {
        const key = keyOf(object.metadata ?? {});
        if (this.seen.delete(key)) this.options.handlers.delete(object);
        break;
      }
      case 'BOOKMARK':
        break;
      default: {
        // ERROR: the server ends the watch after it, and ended() goes by its Status (410 Gone: the history is compacted).
        const status = object as { code?: number; message?: string };
        this.streamError = { code: status.code, message: status.message };
        this.resourceVersion = '';
        return;
      }
    }
    this.resourceVersion = object.metadata?.resourceVersion ?? '';
  }

  private addOrUpdate(object: KubernetesObject): void {
    const m = object.metadata ?? {};
    const key = keyOf(m);
    const before = this.seen.get(key);
    if (before !== undefined && before.resourceVersion !== undefined && before.resourceVersion === m.resourceVersion) {
      this.options.handlers.replayed?.(object);
      return;
    }
    this.seen.set(key, { namespace: m.namespace, name: m.name ?? '', resourceVersion: m.resourceVersion });
    if (before === undefined) this.options.handlers.add(object);
    else this.options.handlers.update(object);
  }

  /** A full list: what it lacks was deleted meanwhile; the rest are additions or updates. */
  private relisted(items: KubernetesObject[]): void {
    const listed = new Set(items.map((o) => keyOf(o.metadata ?? {})));
    for (const [key, s] of this.seen) {
      if (listed.has(key)) continue;
      this.seen.delete(key);
      this.options.handlers.delete({ metadata: { namespace: s.namespace, name: s.name, resourceVersion: s.resourceVersion } });
    }
    for (const o of items) this.addOrUpdate(o);
  }
}
