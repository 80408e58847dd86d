/**
 * A small Kubernetes API server for tests (node:http on 127.0.0.1) that
 * speaks the real list/watch protocol for services, endpointslices and
 * nodes, enough to drive the proxy's informers (list, then watch) unchanged:
 *
 *  - list: a JSON List with metadata.resourceVersion (label selectors
 *    `key`, `!key`, `key=value`; field selector metadata.name=/namespace=);
 *  - watch (?watch=true&resourceVersion=N): a chunked stream of
 *    {"type","object"} lines, first the history after N, then live events;
 *  - BOOKMARK events on demand; dropWatches() cuts every stream (a network
 *    blip: the informer must resume from its resourceVersion);
 *  - compact(): history before now is gone, so resuming from an older
 *    resourceVersion gets 410 Gone (as an ERROR event in the stream, as the
 *    real server does, or as an HTTP 410 status), which forces a relist.
 *    compactTo(rv) forgets only the events up to rv and leaves open
 *    watches alone (etcd compaction): resuming from rv or later still works.
 *    Every 410 answered is recorded as "expired <resource>".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Resource = 'services' | 'endpointslices' | 'nodes';

interface Obj {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

interface WatchEvent {
  rv: number;
  resource: Resource;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

interface Watcher {
  resource: Resource;
  res: ServerResponse;
  match: (o: Obj) => boolean;
}

const ROUTES: Array<[RegExp, Resource, string, string]> = [
  [/^\/api\/v1\/services$/, 'services', 'v1', 'Service'],
  [/^\/apis\/discovery\.k8s\.io\/v1\/endpointslices$/, 'endpointslices', 'discovery.k8s.io/v1', 'EndpointSlice'],
  [/^\/api\/v1\/nodes$/, 'nodes', 'v1', 'Node'],
];

export class FakeApiServer {
  private server: Server;
  private rv = 100;
  private readonly store = new Map<Resource, Map<string, Obj>>([
    ['services', new Map()],
    ['endpointslices', new Map()],
    ['nodes', new Map()],
  ]);
  private history: WatchEvent[] = [];
  private compactedBefore = 0;
  private readonly watchers = new Set<Watcher>();
  /** How a too-old resourceVersion is answered. */
  expireMode: 'event' | 'http' = 'event';
  /** Requests by kind: "list services", "watch nodes"... */
  readonly requests: string[] = [];
  /** The query of every watch request, in order. */
  readonly watchQueries: URLSearchParams[] = [];
  /** When set, every request is answered with this status (an unhealthy server). */
  failWith?: number;
  /** The events.k8s.io/v1 Events posted, as sent, with the path they went to. */
  readonly events: Array<{ path: string; event: Record<string, unknown> }> = [];
  /** Statuses to answer the next event posts with, one each (201 once they run out). */
  eventAnswers: number[] = [];
  url = '';

  constructor() {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(port = 0): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  get resourceVersion(): number {
    return this.rv;
  }

  count(kind: string): number {
    return this.requests.filter((r) => r === kind).length;
  }

  openWatches(resource?: Resource): number {
    return [...this.watchers].filter((w) => !resource || w.resource === resource).length;
  }

  /** What is stored now (as a list would return the items): the final state of a test. */
  objects(resource: Resource): Obj[] {
    const [, , apiVersion, kind] = ROUTES.find(([, r]) => r === resource)!;
    return [...this.store.get(resource)!.values()].map((o) => ({ apiVersion, kind, ...structuredClone(o) }));
  }

  apply(resource: Resource, object: Obj): Obj {
    const key = keyOf(object);
    const exists = this.store.get(resource)!.has(key);
    return this.record(resource, exists ? 'MODIFIED' : 'ADDED', object);
  }

  delete(resource: Resource, namespace: string | undefined, name: string): void {
    const key = `${namespace ?? ''}/${name}`;
    const old = this.store.get(resource)!.get(key);
    if (!old) throw new Error(`fake apiserver: no ${resource} ${key}`);
    this.record(resource, 'DELETED', old);
  }

  /** Cuts every open watch stream, as a network blip or an apiserver restart would. */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  /** Sends a BOOKMARK with the current resourceVersion on every open watch. */
  bookmark(): void {
    for (const w of this.watchers) this.send(w.res, { type: 'BOOKMARK', object: { kind: 'Bookmark', metadata: { resourceVersion: String(this.rv) } } });
  }

  /**
   * Forgets the history: watches resuming from before now get 410 Gone; one
   * from now (a relist's resourceVersion) is served, as a real server
   * serves it. Open watches are expired too.
   */
  compact(): void {
    this.history = [];
    this.compactedBefore = this.rv;
    for (const w of this.watchers) {
      this.requests.push(`expired ${w.resource}`);
      this.expire(w.res);
    }
    this.watchers.clear();
  }

  /**
   * Forgets the events up to and including `upTo` without touching open
   * watches: a watch resumed from a resourceVersion below it gets 410 Gone,
   * one resumed from `upTo` or later is served from the remaining history.
   */
  compactTo(upTo: number): void {
    this.history = this.history.filter((e) => e.rv > upTo);
    this.compactedBefore = Math.max(this.compactedBefore, upTo);
  }

  /** Changes the store without emitting watch events (only a relist can see it): proves a relist converges. */
  silently(fn: (store: (resource: Resource) => Map<string, Obj>) => void): void {
    fn((r) => this.store.get(r)!);
    this.rv++;
  }

  private record(resource: Resource, type: WatchEvent['type'], object: Obj): Obj {
    const rv = ++this.rv;
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(rv);
    const key = keyOf(stored);
    if (type === 'DELETED') this.store.get(resource)!.delete(key);
    else this.store.get(resource)!.set(key, stored);
    const event: WatchEvent = { rv, resource, type, object: stored };
    this.history.push(event);
    for (const w of this.watchers) {
      if (w.resource === resource && w.match(stored)) this.send(w.res, { type, object: stored });
    }
    return stored;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    if (this.failWith) {
      this.requests.push(`fail ${url.pathname}`);
      return this.status(res, this.failWith, 'InternalError', 'the fake apiserver was told to fail');
    }
    if (url.pathname === '/version') return this.json(res, 200, { major: '1', minor: '31', gitVersion: 'v1.31.0-fake' });
    if (req.method === 'POST' && /^\/apis\/events\.k8s\.io\/v1\/namespaces\/[^/]+\/events$/.test(url.pathname)) return this.postEvent(req, res, url.pathname);
    const route = ROUTES.find(([re]) => re.test(url.pathname));
    if (!route || req.method !== 'GET') return this.status(res, 404, 'NotFound', `${req.method} ${url.pathname} is not served by the fake apiserver`);
    const [, resource, apiVersion, kind] = route;
    const match = matcher(url.searchParams.get('labelSelector'), url.searchParams.get('fieldSelector'));
    if (url.searchParams.get('watch') === 'true') {
      this.requests.push(`watch ${resource}`);
      this.watchQueries.push(url.searchParams);
      return this.watch(resource, Number(url.searchParams.get('resourceVersion') || '0'), match, res);
    }
    this.requests.push(`list ${resource}`);
    const items = [...this.store.get(resource)!.values()].filter(match).map((o) => ({ apiVersion, kind, ...o }));
    this.json(res, 200, { apiVersion, kind: `${kind}List`, metadata: { resourceVersion: String(this.rv) }, items });
  }

  private watch(resource: Resource, since: number, match: (o: Obj) => boolean, res: ServerResponse): void {
    const expired = since > 0 && since < this.compactedBefore;
    if (expired) this.requests.push(`expired ${resource}`);
    if (expired && this.expireMode === 'http') {
      return this.status(res, 410, 'Expired', `too old resource version: ${since} (${this.compactedBefore})`);
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    if (expired) return this.expire(res);
    const w: Watcher = { resource, res, match };
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
    for (const e of this.history) {
      if (e.rv > since && e.resource === resource && match(e.object)) this.send(res, { type: e.type, object: e.object });
    }
  }

  /** The real server's answer to an expired resourceVersion inside a watch stream. */
  private expire(res: ServerResponse): void {
    this.send(res, {
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: 'too old resource version' },
    });
    res.end();
  }

  private send(res: ServerResponse, event: unknown): void {
    if (!res.writableEnded) res.write(JSON.stringify(event) + '\n');
  }

  private postEvent(req: IncomingMessage, res: ServerResponse, path: string): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.requests.push('post events');
      const code = this.eventAnswers.shift() ?? 201;
      if (code !== 201) return this.status(res, code, code === 403 ? 'Forbidden' : 'InternalError', `the fake apiserver answers ${code}`);
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      this.events.push({ path, event });
      this.json(res, 201, event);
    });
  }

  private json(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    this.json(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code });
  }
}

function keyOf(o: Obj): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

function matcher(labelSelector: string | null, fieldSelector: string | null): (o: Obj) => boolean {
  const tests: Array<(o: Obj) => boolean> = [];
  for (const term of (labelSelector ?? '').split(',').filter(Boolean)) {
    const labels = (o: Obj) => o.metadata.labels ?? {};
    if (term.startsWith('!')) tests.push((o) => !(term.slice(1) in labels(o)));
    else if (term.includes('=')) {
      const [k, v] = term.split(/==?/);
      tests.push((o) => labels(o)[k] === v);
    } else tests.push((o) => term in labels(o));
  }
  for (const term of (fieldSelector ?? '').split(',').filter(Boolean)) {
    const [k, v] = term.split(/==?/);
    if (k === 'metadata.name') tests.push((o) => o.metadata.name === v);
    else if (k === 'metadata.namespace') tests.push((o) => o.metadata.namespace === v);
  }
  return (o) => tests.every((t) => t(o));
}
