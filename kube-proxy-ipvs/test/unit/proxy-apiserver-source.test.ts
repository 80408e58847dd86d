/**
 * The API server source against a fake API server that speaks the real
 * list/watch protocol, through its informers (our lists and watches with
 * client-node's KubeConfig):
 * object changes arrive as the right events, a dropped watch resumes
 * without loss, a 410 Gone relists and converges (the unchanged objects
 * handed over again as replays, as client-go's informers do), every resync
 * period the handlers hear of a resync, an unreachable server fails
 * start-up with an explanation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { pino } from 'pino';
import { ApiServerSource } from '../../lib/proxy/sources/apiserver-source.js';
import type { Informer } from '../../lib/proxy/sources/informer.js';
import { loadKubeConfig } from '../../lib/proxy/sources/kubeconfig.js';
import type { RejectedObject, SourceEvent } from '../../lib/proxy/sources/source.js';
import { FakeApiServer } from '../support/fake-apiserver.js';

const logger = pino({ level: 'silent' });

function svc(name: string, clusterIP: string, port = 80) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { type: 'ClusterIP', clusterIP, clusterIPs: [clusterIP], ports: [{ name: 'http', protocol: 'TCP', port, targetPort: 8080 }] },
  };
}

function eps(service: string, addresses: string[], name = `${service}-abc`) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  };
}

function node(name: string, ip: string) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { addresses: [{ type: 'InternalIP', address: ip }] } };
}

interface Harness {
  api: FakeApiServer;
  source: ApiServerSource;
  events: string[];
  rejected: RejectedObject[];
  /** The source's view: key → last object, as a consumer folding the events would hold. */
  view: Map<string, unknown>;
  /** The objects delete events carried, in order. */
  deleted: SourceEvent['object'][];
  /** "Service default/keep", one per object handed over again unchanged. */
  replayed: string[];
  /** How many resyncs the handlers heard of. */
  resyncs: () => number;
  until(what: string, fn: () => boolean, ms?: number): Promise<void>;
}

async function harness(t: Test, seed: (api: FakeApiServer) => void = () => {}, log = logger, resyncPeriodMs?: number): Promise<Harness> {
  const api = new FakeApiServer();
  await api.start();
  seed(api);
  const source = new ApiServerSource({
    kubeconfig: loadKubeConfig({ master: api.url }),
    nodeName: 'node-a',
    logger: log,
    backoff: { initialMs: 50, maxMs: 200 },
    initialListTimeoutMs: 3000,
    ...(resyncPeriodMs !== undefined ? { resyncPeriodMs } : {}),
  });
  const events: string[] = [];
  const replayed: string[] = [];
  let resyncs = 0;
  const rejected: RejectedObject[] = [];
  const view = new Map<string, unknown>();
  const deleted: SourceEvent['object'][] = [];
  const onEvent = (e: SourceEvent) => {
    const key = `${e.kind} ${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`;
    events.push(`${e.type} ${key}`);
    if (e.type === 'delete') {
      view.delete(key);
      deleted.push(e.object);
    } else view.set(key, e.object);
  };
  let synced = false;
  t.teardown(async () => {
    await source.stop();
    await api.close();
  });
  await source.start({
    event: onEvent,
    synced: () => (synced = true),
    rejected: (r) => rejected.push(r),
    replayed: (e) => replayed.push(`${e.type} ${e.kind} ${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`),
    resync: () => resyncs++,
  });
  t.ok(synced, 'synced after the first lists');
  const until = async (what: string, fn: () => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    while (!fn()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; events: ${events.join(', ')}`);
      await sleep(10);
    }
  };
  return { api, source, events, rejected, view, deleted, replayed, resyncs: () => resyncs, until };
}

t.test('initial lists, then creates, updates and deletes arrive as events', async (t) => {
  const h = await harness(t, (api) => {
    api.apply('services', svc('web', '10.96.0.10'));
    api.apply('endpointslices', eps('web', ['10.244.1.2']));
    api.apply('nodes', node('node-a', '192.168.1.10'));
    api.apply('nodes', node('node-b', '192.168.1.11'));
  });
  t.same(h.events.sort(), ['add EndpointSlice default/web-abc', 'add Node /node-a', 'add Service default/web'], 'initial state; only this node is watched');
  h.events.length = 0;
  h.api.apply('services', svc('api', '10.96.0.20'));
  h.api.apply('endpointslices', eps('web', ['10.244.1.2', '10.244.2.3']));
  h.api.delete('services', 'default', 'web');
  h.api.apply('nodes', node('node-b', '192.168.1.99'));
  await h.until('three events', () => h.events.length >= 3);
  await sleep(50);
  // One watch per kind: order holds within a kind, not across kinds.
  t.same(h.events.filter((e) => e.includes('Service ')), ['add Service default/api', 'delete Service default/web'], 'services in order');
  t.same(h.events.filter((e) => !e.includes('Service ')), ['update EndpointSlice default/web-abc'], 'the slice update; other nodes ignored');
  const slice = h.view.get('EndpointSlice default/web-abc') as { endpoints: unknown[] };
  t.equal(slice.endpoints.length, 2, 'the update carries the new endpoints');
  t.equal(h.api.count('list services'), 1, 'listed once');
  for (const q of h.api.watchQueries) {
    t.equal(q.get('allowWatchBookmarks'), 'true', 'bookmarks asked for');
    const timeout = Number(q.get('timeoutSeconds'));
    t.ok(timeout >= 300 && timeout < 600, `the server ends the watch after 5-10 minutes (${timeout} s)`);
  }
});

t.test("kube-proxy's start-up lines for each informer: started, waiting for its cache, synced once (not again at a relist)", async (t) => {
  const lines: Array<{ msg: string; controller?: string }> = [];
  const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  const h = await harness(t, (api) => api.apply('nodes', node('node-a', '192.168.1.10')), log);
  const said = (msg: string) => lines.filter((l) => l.msg === msg).map((l) => l.controller);
  t.same(lines.filter((l) => l.msg.startsWith('Starting ')).map((l) => l.msg), ['Starting service config controller', 'Starting endpoint slice config controller', 'Starting node config controller']);
  t.same(said('Waiting for caches to sync'), ['service config', 'endpoint slice config', 'node config']);
  t.same(said('Caches are synced').sort(), ['endpoint slice config', 'node config', 'service config']);
  h.api.compact();
  await h.until('the relist', () => h.api.count('list services') >= 2);
  await sleep(50);
  t.equal(said('Caches are synced').length, 3, 'once each');
});

t.test('headless services and other proxies\' services are filtered by label', async (t) => {
  const h = await harness(t);
  const headless = svc('hl', 'None');
  (headless.metadata as Record<string, unknown>).labels = { 'service.kubernetes.io/headless': '' };
  h.api.apply('services', headless);
  h.api.apply('services', svc('plain', '10.96.0.30'));
  await h.until('plain', () => h.events.length >= 1);
  await sleep(50);
  t.same(h.events, ['add Service default/plain']);
});

t.test('a dropped watch is resumed from its resourceVersion without loss or relist', async (t) => {
  const h = await harness(t);
  h.api.apply('services', svc('a', '10.96.0.1'));
  await h.until('a', () => h.view.has('Service default/a'));
  h.api.dropWatches();
  // Changes made while no watch is open must still arrive: the resumed watch replays them from history.
  h.api.apply('services', svc('b', '10.96.0.2'));
  h.api.apply('services', svc('a', '10.96.0.1', 81));
  await h.until('b and a update', () => h.events.includes('add Service default/b') && h.events.includes('update Service default/a'));
  t.equal(h.api.count('list services'), 1, 'no relist');
  t.ok(h.api.count('watch services') >= 2, 'watch re-established');
});

/** The resourceVersion the Service informer would resume from. */
function serviceInformerVersion(source: ApiServerSource): string {
  const watched = (source as unknown as { watched: Array<{ kind: string; informer: Informer }> }).watched;
  return watched.find((w) => w.kind === 'Service')!.informer.latestResourceVersion();
}

/**
 * The Service informer last saw `a`; then only EndpointSlices change, so
 * the newest resourceVersion the Service watch can know of comes from a
 * BOOKMARK. History up to that version is compacted and the watch is cut:
 * resuming from the bookmark's version works; resuming from `a`'s is 410.
 */
for (const bookmark of [true, false]) {
  t.test(`after compaction, a cut watch resumes ${bookmark ? 'from the BOOKMARK\'s resourceVersion: no 410, no relist' : 'without a BOOKMARK: 410 and a relist (the control case)'}`, async (t) => {
    const h = await harness(t);
    h.api.apply('services', svc('a', '10.96.0.1'));
    await h.until('a', () => h.view.has('Service default/a'));
    const seenByServices = h.api.resourceVersion;
    for (let i = 0; i < 3; i++) h.api.apply('endpointslices', eps(`s${i}`, ['10.244.1.2']));
    await h.until('slices', () => h.view.has('EndpointSlice default/s2-abc'));
    const head = h.api.resourceVersion;
    t.ok(head > seenByServices, 'the history moved on without the Service watch seeing it');
    if (bookmark) {
      h.api.bookmark();
      await h.until('bookmark taken', () => serviceInformerVersion(h.source) === String(head));
    }
    t.equal(serviceInformerVersion(h.source), String(bookmark ? head : seenByServices), 'the version the informer holds');
    h.api.compactTo(head);
    h.api.dropWatches();
    h.api.apply('services', svc('b', '10.96.0.2'));
    await h.until('b', () => h.view.has('Service default/b'));
    if (bookmark) {
      t.equal(h.api.count('expired services'), 0, 'no 410 Gone for the Service watch');
      t.equal(h.api.count('list services'), 1, 'no relist: resumed from the bookmark');
    } else {
      t.ok(h.api.count('expired services') >= 1, '410 Gone');
      t.equal(h.api.count('list services'), 2, 'relisted');
    }
    t.ok(h.view.has('Service default/a'), 'nothing lost');
  });
}

for (const mode of ['event', 'http'] as const) {
  t.test(`410 Gone (${mode === 'event' ? 'ERROR event in the stream' : 'HTTP status'}) forces a relist that converges`, async (t) => {
    const h = await harness(t);
    h.api.expireMode = mode;
    h.api.apply('services', svc('keep', '10.96.0.1'));
    h.api.apply('services', svc('gone', '10.96.0.2'));
    await h.until('both', () => h.view.size === 2);
    h.api.dropWatches();
    // While disconnected: changes the watch history will no longer hold.
    h.api.silently((store) => {
      store('services').delete('default/gone');
      const s = svc('new', '10.96.0.3') as never as { metadata: { resourceVersion?: string } };
      s.metadata.resourceVersion = '999';
      store('services').set('default/new', s as never);
    });
    h.api.compact();
    await h.until('relist converged', () => h.view.has('Service default/new') && !h.view.has('Service default/gone'));
    t.ok(h.api.count('list services') >= 2, 'relisted');
    t.ok(h.view.has('Service default/keep'), 'unchanged objects kept');
    t.same(h.replayed, ['update Service default/keep'], 'and handed over again as replays, not as events');
    h.api.apply('services', svc('after', '10.96.0.4'));
    await h.until('watch after relist', () => h.view.has('Service default/after'));
    t.equal(h.api.count('list services'), 2, 'one relist: the watch from its resourceVersion holds');
  });
}

t.test('a server that answers 410 to every watch is relisted at the backoff\'s pace, not in a loop', async (t) => {
  const h = await harness(t); // backoff: 50 ms doubling to 200 ms
  h.api.expireMode = 'http';
  h.api.compactTo(Number.MAX_SAFE_INTEGER); // even the resourceVersion of a fresh list is too old
  const lists = h.api.count('list services');
  h.api.dropWatches();
  await sleep(1000);
  const relists = h.api.count('list services') - lists;
  t.ok(relists >= 2, `relisted (${relists} times)`);
  t.ok(relists <= 8, `paced: 50, 100, 200, 200 ... ms apart (${relists} in 1 s)`);
});

t.test('every resync period (ConfigSyncPeriod) the handlers hear of a resync, and not after stop()', async (t) => {
  const h = await harness(t, (api) => api.apply('services', svc('web', '10.96.0.10')), logger, 40);
  await h.until('three resyncs', () => h.resyncs() >= 3);
  t.same(h.replayed, [], 'a resync is no replay of its own objects');
  await h.source.stop();
  const after = h.resyncs();
  await sleep(150);
  t.equal(h.resyncs(), after, 'stopped');
});

t.test('the informers cache identities, not objects; deletions, watched or found by a relist, name the slice\'s Service', async (t) => {
  const h = await harness(t, (api) => {
    api.apply('services', svc('web', '10.96.0.10'));
    api.apply('endpointslices', eps('web', ['10.244.1.2', '10.244.1.3'], 'web-1'));
    api.apply('endpointslices', eps('web', ['10.244.1.4'], 'web-2'));
  });
  h.api.apply('endpointslices', eps('web', ['10.244.1.5'], 'web-3'));
  await h.until('the watched slice', () => h.view.has('EndpointSlice default/web-3'));
  const cached = (h.source as unknown as { watched: { informer: Informer }[] }).watched.flatMap((w) => w.informer.identities());
  t.equal(cached.length, 4, 'the service and its three slices are remembered');
  for (const c of cached) t.same(Object.keys(c).sort(), ['name', 'namespace', 'resourceVersion'], 'only the identity and the resourceVersion');
  const slice = h.view.get('EndpointSlice default/web-1') as { endpoints: unknown[] };
  t.equal(slice.endpoints.length, 2, 'the consumer got the whole object');

  h.api.delete('endpointslices', 'default', 'web-1');
  await h.until('the watched deletion', () => h.deleted.length === 1);
  h.api.dropWatches();
  h.api.silently((store) => store('endpointslices').delete('default/web-2'));
  h.api.compact();
  await h.until('the deletion the relist finds', () => h.deleted.length === 2);
  t.same(
    h.deleted.map((o) => o.metadata),
    [
      { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
      { name: 'web-2', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
    ],
    'each delete carries the identity the controller filed the slice under',
  );
});

t.test('invalid objects are rejected one at a time: logged, reported, the others delivered', async (t) => {
  const lines: Array<Record<string, unknown>> = [];
  const capture = pino({ level: 'warn' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const badPort = { ...svc('bad', '10.96.0.66'), spec: { ...svc('bad', '10.96.0.66').spec, ports: [{ name: 'http', protocol: 'TCP', port: 99999 }] } };
  const badSlice = { ...eps('web', []), metadata: { name: 'web-bad', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } }, endpoints: [{ addresses: ['not-an-ip'] }] };
  const h = await harness(
    t,
    (api) => {
      api.apply('services', svc('web', '10.96.0.10'));
      api.apply('services', badPort);
      api.apply('endpointslices', eps('web', ['10.244.1.2']));
      api.apply('endpointslices', badSlice);
      api.apply('nodes', node('node-a', '192.168.1.10'));
    },
    capture,
  );
  t.same(h.events.sort(), ['add EndpointSlice default/web-abc', 'add Node /node-a', 'add Service default/web'], 'the good objects of the first list are delivered');
  t.same(
    h.rejected.map((r) => `${r.object} ${r.field} ${r.action}`).sort(),
    ['EndpointSlice default/web-bad endpoints[0].addresses[0] skipped', 'Service default/bad spec.ports[0].port skipped'],
    'each bad one is rejected, naming the field',
  );
  t.match(lines.find((l) => l.object === 'Service default/bad'), { level: 40, kind: 'Service', field: 'spec.ports[0].port', action: 'skipped', error: /must be an integer from 1 to 65535, got 99999/ }, 'a structured warning');

  // A bad update of a delivered object: refused, the last good version stays (no event at all).
  h.events.length = 0;
  h.api.apply('services', { ...svc('web', '10.96.0.10'), spec: { ...svc('web', '10.96.0.10').spec, clusterIP: '10.96.0.999' } });
  h.api.apply('services', svc('after', '10.96.0.11'));
  await h.until('after', () => h.view.has('Service default/after'));
  t.same(h.events, ['add Service default/after'], 'the bad update emitted nothing; later objects still flow');
  t.match(h.rejected.at(-1), { object: 'Service default/web', field: 'spec.clusterIP', action: 'kept-last-good' });
  t.equal((h.view.get('Service default/web') as { spec: { clusterIP: string } }).spec.clusterIP, '10.96.0.10', 'the last good version is in force');

  // Deleting it hands back the last good version (what the controller indexed).
  h.api.delete('services', 'default', 'web');
  await h.until('web deleted', () => !h.view.has('Service default/web'));
  t.equal(h.events.at(-1), 'delete Service default/web');
  // A good update of a once-bad object is its first delivery: an add.
  h.api.apply('services', svc('bad', '10.96.0.66'));
  await h.until('bad fixed', () => h.view.has('Service default/bad'));
  t.equal(h.events.at(-1), 'add Service default/bad');
  // Deleting an object that was never delivered emits nothing.
  const before = h.events.length;
  h.api.delete('endpointslices', 'default', 'web-bad');
  h.api.apply('services', svc('marker', '10.96.0.12'));
  await h.until('marker', () => h.view.has('Service default/marker'));
  await sleep(50);
  t.same(h.events.slice(before), ['add Service default/marker'], 'no delete for a slice that was never delivered');
});

t.test('a failing API server is retried with backoff and recovers', async (t) => {
  const h = await harness(t);
  h.api.failWith = 500;
  h.api.dropWatches();
  const fails = () => h.api.requests.filter((r) => r.startsWith('fail')).length;
  await h.until('retried: two failed requests', () => fails() >= 2);
  // 300 ms of failures: a hot loop makes hundreds of requests in that time.
  await sleep(300);
  const failures = fails();
  t.ok(failures < 40, 'with backoff, not a hot loop');
  h.api.failWith = undefined;
  h.api.apply('services', svc('back', '10.96.0.9'));
  await h.until('recovered', () => h.view.has('Service default/back'));
});

t.test('an unreachable API server fails start-up with what to check', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  const url = api.url;
  await api.close();
  const source = new ApiServerSource({ kubeconfig: loadKubeConfig({ master: url }), nodeName: 'n', logger, backoff: { initialMs: 50, maxMs: 100 }, initialListTimeoutMs: 500 });
  await t.rejects(source.start({ event: () => {}, synced: () => {} }), /cannot reach the API server at http:\/\/127\.0\.0\.1:\d+ .*ECONNREFUSED.*--master\/--kubeconfig/s);
  await source.stop();
});

t.test('kubeconfig selection explains a missing configuration', async (t) => {
  const saved = process.env.KUBERNETES_SERVICE_HOST;
  delete process.env.KUBERNETES_SERVICE_HOST;
  t.teardown(() => {
    if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
  });
  t.throws(() => loadKubeConfig({}), /no API server configured: pass --kubeconfig FILE or --master URL.*--manifests/);
  t.throws(() => loadKubeConfig({ kubeconfig: '/nonexistent/kubeconfig' }), /--kubeconfig \/nonexistent\/kubeconfig: cannot load it/);
  t.equal(loadKubeConfig({ master: 'http://10.0.0.1:6443' }).getCurrentCluster()?.server, 'http://10.0.0.1:6443');
});
