/**
 * The proxy's life cycle with a fake controller: the order of its start,
 * a stop in the middle of it, start-up failures that explain themselves, the CAP_NET_ADMIN preflight, a
 * Node object's changes, and the garbage collection after bulk work.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import t from 'tap';
import { NetlinkError } from 'ipvs-netlink';
import { DEFAULT_IPTABLES } from '../../lib/kernel/iptables-runner.js';
import { defaultOptions } from '../../lib/proxy/options.js';
import { checkPrivileges } from '../../lib/proxy/preflight.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import { ManifestsSource } from '../../lib/proxy/sources/manifests-source.js';
import type { SourceHandlers } from '../../lib/proxy/sources/source.js';
import { fakeFactory } from '../support/fake-controller.js';
import { FakeClock } from '../support/fake-clock.js';
import { fakeHost } from '../support/fake-host.js';
import { logger, manifestsDir, options, started, until } from '../support/started-proxy.js';

t.test('a Node change (addresses, zone label) reaches the controller; other nodes do not', async (t) => {
  const { dir, controller } = await started(t);
  controller.calls.length = 0;
  const nodeYaml = (addresses: string[], zone: string, name = 'node-a') => `apiVersion: v1
kind: Node
metadata: {name: ${name}, labels: {topology.kubernetes.io/zone: ${zone}}}
status: {addresses: [${addresses.map((a) => `{type: InternalIP, address: ${a}}`).join(', ')}]}
`;
  writeFileSync(join(dir, 'demo-node.yaml'), nodeYaml(['192.168.56.10', '192.168.56.11'], 'zone-a'));
  await until('setNode', () => controller.calls.some((c) => c.startsWith('setNode')));
  t.same(controller.calls.filter((c) => c.startsWith('setNode')), ['setNode 192.168.56.10,192.168.56.11'], 'a new address');
  await until('the sync after it', () => controller.calls.at(-1) === 'sync');
  controller.calls.length = 0;
  writeFileSync(join(dir, 'demo-node.yaml'), nodeYaml(['192.168.56.10', '192.168.56.11'], 'zone-b'));
  await until('setNode for the label', () => controller.calls.some((c) => c.startsWith('setNode')));
  t.same(controller.node?.labels, { 'topology.kubernetes.io/zone': 'zone-b' }, 'a zone label change (topology hints) reaches it too');
  controller.calls.length = 0;
  writeFileSync(join(dir, 'other-node.yaml'), nodeYaml(['192.168.56.99'], 'zone-c', 'node-b'));
  writeFileSync(join(dir, 'demo-node.yaml'), nodeYaml(['192.168.56.10', '192.168.56.11'], 'zone-b') + '# touched\n');
  await sleep(300);
  t.same(controller.calls.filter((c) => c.startsWith('setNode')), [], 'another node\'s object, or no real change, is not a node change');
});

t.test('a stop in the middle of the start ends it: the wait for the Node gives up, an adopted kernel is left unsynced', async (t) => {
  const settled = (p: Promise<unknown>) => Promise.race([p.then(() => 'settled'), sleep(3000).then(() => 'still waiting')]);

  // No Node object, and a clock whose 30 s never pass: only the stop can end the wait.
  const dir = manifestsDir();
  rmSync(join(dir, 'demo-node.yaml'));
  const lines: Array<{ msg: string }> = [];
  const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const waiting = new Proxy(options(dir), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger: log, defaultMetrics: false, host: fakeHost(), clock: new FakeClock() });
  t.teardown(() => waiting.stop());
  const start = waiting.start();
  await until('the wait for the Node', () => lines.some((l) => l.msg === 'reading objects'));
  await sleep(50);
  await waiting.stop();
  t.equal(await settled(start), 'settled', 'the start returns once stopped');
  t.notOk(lines.some((l) => /Timed out waiting for node/.test(l.msg)), 'and does not say it timed out');

  // The controller adopts the kernel while the stop comes: it is closed, and nothing syncs.
  let adopted!: () => void;
  const factory = fakeFactory((c) => {
    c.start = () => new Promise<void>((resolve) => (adopted = resolve));
  });
  const full = manifestsDir();
  const adopting = new Proxy(options(full), { source: new ManifestsSource({ path: full, logger }), controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost() });
  t.teardown(() => adopting.stop());
  const second = adopting.start();
  await until('the controller starting', () => factory.last !== undefined && adopted !== undefined);
  const stopped = adopting.stop();
  adopted();
  await stopped;
  t.equal(await settled(second), 'settled');
  await sleep(100);
  t.same(factory.last!.calls, ['close'], 'closed, and never asked to sync');

  // The stop comes while the source is still reading (an API server's first lists): no Node wait after it.
  const slow = manifestsDir();
  rmSync(join(slow, 'demo-node.yaml'));
  const inner = new ManifestsSource({ path: slow, logger });
  let listed!: () => void;
  const lists = new Promise<void>((resolve) => (listed = resolve));
  const source = { description: 'slow', start: async (h: SourceHandlers) => (await lists, inner.start(h)), stop: () => inner.stop() };
  const reading = new Proxy(options(slow), { source, controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost(), clock: new FakeClock() });
  t.teardown(() => reading.stop());
  const third = reading.start();
  await sleep(50);
  await reading.stop();
  listed();
  t.equal(await settled(third), 'settled', 'the start ends once the source returns');

  // A stop before the start: nothing is begun, no server left listening.
  const early = new Proxy(options(manifestsDir()), { source: new ManifestsSource({ path: slow, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost() });
  await early.stop();
  t.same(await early.start(), {}, 'no server started');
});

t.test("the Node deleted: upstream's line, /healthz 503 until it is back, and the proxy runs on", async (t) => {
  const dir = manifestsDir();
  const lines: Array<{ msg: string; node?: string }> = [];
  const log = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const proxy = new Proxy(options(dir), { source: new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 }), controllerFactory: fakeFactory(), logger: log, defaultMetrics: false, host: fakeHost() });
  t.teardown(() => proxy.stop());
  const addrs = await proxy.start();
  await proxy.waitForSync(5000);
  const healthz = async () => (await fetch(`http://${addrs.healthz}/healthz`)).status;
  t.equal(await healthz(), 200);
  const node = readFileSync(join(dir, 'demo-node.yaml'), 'utf8');
  rmSync(join(dir, 'demo-node.yaml'));
  await until('the deletion', () => lines.some((l) => l.msg === 'Node is being deleted'));
  t.match(lines.find((l) => l.msg === 'Node is being deleted'), { node: 'node-a' });
  t.equal(await healthz(), 503, 'not eligible while it is gone');
  writeFileSync(join(dir, 'demo-node.yaml'), node);
  await until('the Node back', async () => (await healthz()) === 200);
  t.pass('eligible again once it is back');
});

t.test('a stop says what it is waiting for (the binary names it when a stop takes too long)', async (t) => {
  const dir = manifestsDir();
  const source = new ManifestsSource({ path: dir, logger });
  const proxy = new Proxy(options(dir), { source, controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost(['inet']) });
  await proxy.start();
  t.equal(proxy.stopStage, 'not stopping');
  const stopSource = source.stop.bind(source);
  let seen: string | undefined;
  source.stop = async () => {
    seen = proxy.stopStage;
    await stopSource();
  };
  await proxy.stop();
  t.equal(seen, 'the object source', 'while the source stops');
  t.equal(proxy.stopStage, 'done');
});

t.test('the CAP_NET_ADMIN preflight reads the effective set', async (t) => {
  const status = (capEff: string) => `Name:\tnode\nCapInh:\t0000000000000000\nCapEff:\t${capEff}\n`;
  t.doesNotThrow(() => checkPrivileges({}, status('000001ffffffffff')), 'root: all capabilities');
  t.doesNotThrow(() => checkPrivileges({}, status('0000000000001000')), 'CAP_NET_ADMIN (bit 12) alone is enough');
  t.throws(() => checkPrivileges({}, status('000001ffffffefff')), /needs CAP_NET_ADMIN .* NET_ADMIN and NET_RAW/, 'everything but bit 12: refused');
  t.doesNotThrow(() => checkPrivileges({}, 'no CapEff line'), 'unreadable: let the kernel answer');
  t.throws(() => checkPrivileges({ netns: '/run/netns/does-not-exist' }, status('000001ffffffffff')), /--netns \/run\/netns\/does-not-exist: no such network namespace/);
});

t.test("the host's iptables version reaches the controller's rules: --random-fully only where it takes it", async (t) => {
  const dir = manifestsDir();
  for (const [version, random] of [['1.6.1', false], ['1.8.9', true], [undefined, false]] as const) {
    const host = fakeHost(['inet']);
    const factory = fakeFactory();
    const families = async () => ({ ...(await host.families()), iptables: { tools: DEFAULT_IPTABLES, mode: 'default' as const, version } });
    const proxy = new Proxy(options(dir), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: factory, logger, defaultMetrics: false, host: { ...host, families } });
    await proxy.start();
    await proxy.stop();
    t.equal(factory.last?.init?.config.randomFully, random, `iptables ${version ?? 'of no known version'}`);
  }
});

t.test("the conntrack settings and the host's families before any object is read, as kube-proxy's platform setup before its informers", async (t) => {
  const dir = manifestsDir();
  const steps: string[] = [];
  class RecordedSource extends ManifestsSource {
    override start(...args: Parameters<ManifestsSource['start']>) {
      steps.push('read objects');
      return super.start(...args);
    }
  }
  const recorded = (fail?: Error) => {
    const host = fakeHost();
    return {
      ...host,
      setConntrack: async (...args: Parameters<typeof host.setConntrack>) => {
        steps.push('conntrack');
        if (fail) throw fail;
        return host.setConntrack(...args);
      },
      families: async () => {
        steps.push('families');
        return host.families();
      },
    };
  };
  const proxy = new Proxy(options(dir), { source: new RecordedSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: recorded() });
  await proxy.start();
  await proxy.stop();
  t.same(steps, ['conntrack', 'families', 'read objects']);
  steps.length = 0;
  const failing = new Proxy(options(dir), { source: new RecordedSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: recorded(new Error('could not set conntrack parameters')) });
  await t.rejects(failing.start(), /could not set conntrack parameters/);
  await failing.stop();
  t.same(steps, ['conntrack'], 'a conntrack failure stops the start before the cluster is read');
});

t.test('start-up failures explain themselves', async (t) => {
  const dir = manifestsDir();
  const noIpvs = new NetlinkError({ errno: 93, code: 'EPROTONOSUPPORT', operation: 'Ipvs.open', text: 'Protocol not supported', hint: 'this kernel has no IPVS' });
  const proxy = new Proxy(options(dir), {
    source: new ManifestsSource({ path: dir, logger }),
    controllerFactory: fakeFactory((c) => (c.failStart = noIpvs)),
    logger,
    defaultMetrics: false,
    host: fakeHost(),
  });
  await t.rejects(proxy.start(), /IPVS is not available: .*modprobe ip_vs/);
  await proxy.stop();
  const p3 = new Proxy(options(dir, { hostnameOverride: 'node-z', bindAddress: '10.0.0.5' }), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost() });
  await p3.start();
  t.pass('--bind-address gives the node address without a Node object');
  await p3.stop();
  const first = new Proxy(options(dir, { healthzBindAddress: '127.0.0.1:0' }), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost() });
  const a = await first.start();
  const clash = new Proxy(options(dir, { healthzBindAddress: a.healthz!, bindAddressHardFail: true }), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger, defaultMetrics: false, host: fakeHost() });
  await t.rejects(clash.start(), /--healthz-bind-address 127.0.0.1:\d+: cannot listen: .* is already in use/, '--bind-address-hard-fail: fatal');
  await clash.stop();
  const lines: Array<Record<string, unknown>> = [];
  const capture = pino({ level: 'info' }, { write: (l: string) => lines.push(JSON.parse(l)) });
  const retrying = new Proxy(options(dir, { healthzBindAddress: a.healthz! }), { source: new ManifestsSource({ path: dir, logger }), controllerFactory: fakeFactory(), logger: capture, defaultMetrics: false, host: fakeHost() });
  const b = await retrying.start();
  t.equal(b.healthz, undefined, 'without it: the proxy runs on');
  t.match(lines.find((l) => l.msg === 'Healthz server failed'), { level: 50, err: /already in use/ }, "upstream's log line");
  await first.stop();
  await until('the retry (every 5 s) binds once the port is free', async () => (await fetch(`http://${a.healthz}/livez`).catch(() => undefined))?.status === 200, 15_000);
  t.pass('retried until it could listen');
  await retrying.stop();
});

t.test('a full garbage collection after bulk work (a cold start, a big resync), never after a small sync', async (t) => {
  let collections = 0;
  const dir = manifestsDir();
  const factory = fakeFactory((c) => {
    c.ipvsMessages = 30_000; // the first sync of a big cluster
  });
  const source = new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 });
  const o = options(dir, { ipvs: { ...defaultOptions().ipvs, syncPeriodMs: 3_600_000 } });
  const proxy = new Proxy(o, { source, controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(), collectGarbage: () => {
      collections++;
    },
  });
  t.teardown(() => proxy.stop());
  await proxy.start();
  await proxy.waitForSync(5000);
  await until('the collection after the first sync', () => collections === 1);
  const controller = factory.last!;
  controller.ipvsMessages = 2; // an incremental sync
  const syncs = controller.syncs.incremental;
  writeFileSync(join(dir, 'extra.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: extra, namespace: demo}\nspec: {clusterIP: 10.96.100.99, ports: [{port: 80}]}\n');
  await until('the incremental sync', () => controller.syncs.incremental > syncs);
  await sleep(50);
  t.equal(collections, 1, 'no collection after a sync of a few messages');
  controller.failSyncs = 1;
  controller.ipvsMessages = 30_000;
  writeFileSync(join(dir, 'extra2.yaml'), 'apiVersion: v1\nkind: Service\nmetadata: {name: extra2, namespace: demo}\nspec: {clusterIP: 10.96.100.98, ports: [{port: 80}]}\n');
  // The failed sync is retried as a resync (after 1 s), which moves 60,000 messages.
  await until('the resync after the failure', () => controller.syncs.resync > 0, 8000);
  await until('the collection after the resync', () => collections === 2);
  t.pass('collected once after the bulk resync, not after the failed sync');
});

t.test('after each periodic resync that was not bulk work the C heap is trimmed; not after a sync', async (t) => {
  let collections = 0;
  /** The kind of run each trim followed (runs are serial: the controller's last one). */
  const trimmedAfter: string[] = [];
  const dir = manifestsDir();
  const factory = fakeFactory((c) => {
    c.ipvsMessages = 2; // a small cluster: no run is bulk work
  });
  const source = new ManifestsSource({ path: dir, logger, debounceMs: 20, pollMs: 50 });
  const o = options(dir, { ipvs: { ...defaultOptions().ipvs, syncPeriodMs: 300 } });
  const trimNativeHeap = () => trimmedAfter.push(factory.last!.lastSync!.kind);
  const proxy = new Proxy(o, { source, controllerFactory: factory, logger, defaultMetrics: false, host: fakeHost(), collectGarbage: () => collections++, trimNativeHeap });
  t.teardown(() => proxy.stop());
  await proxy.start();
  await proxy.waitForSync(5000);
  const controller = factory.last!;
  await until('two periodic resyncs', () => trimmedAfter.length >= 2, 5000);
  const syncs = controller.syncs.incremental;
  // A change that comes while a resync is due is taken by that resync: changes are made until a sync takes one.
  const upserts = () => controller.calls.filter((c) => c === 'upsertService extra').length;
  for (let port = 80; controller.syncs.incremental === syncs; port++) {
    if (port === 85) return t.fail('five changes, and no sync took any');
    const seen = upserts();
    writeFileSync(join(dir, 'extra.yaml'), `apiVersion: v1\nkind: Service\nmetadata: {name: extra, namespace: demo}\nspec: {clusterIP: 10.96.100.99, ports: [{port: ${port}}]}\n`);
    await until('the change', () => upserts() > seen);
  }
  const trimsAtSync = trimmedAfter.length;
  await until('a resync after it', () => trimmedAfter.length > trimsAtSync, 5000);
  t.same([...new Set(trimmedAfter)], ['resync'], `every trim followed a resync (${trimmedAfter.length} trims)`);
  t.equal(collections, 0, 'no run called for a full collection');
});

/**
 * Makes garbage, measures with it alive, and returns only the measure: once
 * this frame is gone nothing can hold the garbage (a test's own frame may
 * keep a stale reference to it in a register, depending on how far V8 has
 * compiled the test when it runs).
 */
function whileHolding<T>(make: () => unknown[], measure: () => T): T {
  const garbage = make();
  if (garbage.length === 0) throw new Error('no garbage made');
  return measure();
}

t.test('collectGarbage() runs a full, memory-reducing collection without --expose-gc', async (t) => {
  const { collectGarbage } = await import('../../lib/proxy/heap.js');
  t.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'tap runs without --expose-gc');
  const oldUsed = () => getHeapSpaceStatistics().find((x) => x.space_name === 'old_space')!.space_used_size;
  // Garbage in old space (held while it was made, it outlived the young generation's collections):
  // only a full collection frees it.
  const [before, committedBefore] = whileHolding(
    () => Array.from({ length: 600_000 }, (_, i) => ({ i, s: `item ${i}` })),
    () => [oldUsed(), process.memoryUsage().heapTotal],
  );
  collectGarbage();
  const after = oldUsed();
  t.ok(before - after > 10 * 2 ** 20, `old space's garbage freed: ${((before - after) / 2 ** 20).toFixed(1)} MiB (more than 10 MiB)`);
  // A plain full collection frees the objects and keeps most of their pages (several times the bound);
  // a memory-reducing one gives them back, keeping a few MiB, more or fewer with the young generation's size.
  // V8's own threads unmap the emptied pages after the collection returns: on a busy machine a little later.
  const keptNow = () => process.memoryUsage().heapTotal - process.memoryUsage().heapUsed;
  for (const deadline = Date.now() + 2000; keptNow() >= 24 * 2 ** 20 && Date.now() < deadline; ) await sleep(50);
  const m = process.memoryUsage();
  const kept = m.heapTotal - m.heapUsed;
  t.ok(kept < 24 * 2 ** 20, `V8's heap keeps ${(kept / 2 ** 20).toFixed(1)} MiB of pages beyond what lives (less than 24 MiB; ${((committedBefore - m.heapTotal) / 2 ** 20).toFixed(1)} MiB given back)`);
  t.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'nothing added to the global scope');
});

t.test('collectGarbage() then gives the C heap\'s free pages back to the kernel', async (t) => {
  const { collectGarbage, TRIM_DELAY_MS } = await import('../../lib/proxy/heap.js');
  // Buffers' memory comes from malloc, as the addon's own buffers do; freed
  // below a buffer still held, malloc keeps it resident until trimmed.
  let held: Buffer | undefined;
  const before = whileHolding(
    () => Array.from({ length: 1600 }, () => Buffer.allocUnsafeSlow(64 * 1024).fill(1)),
    () => {
      held = Buffer.allocUnsafeSlow(64 * 1024).fill(2);
      return process.memoryUsage().rss;
    },
  );
  collectGarbage();
  await sleep(TRIM_DELAY_MS + 200);
  const after = process.memoryUsage().rss;
  t.ok(before - after > 64 * 2 ** 20, `resident set ${(before / 2 ** 20).toFixed(0)} → ${(after / 2 ** 20).toFixed(0)} MiB (100 MiB of buffers freed)`);
  t.equal(held![0], 2, 'what is held is untouched');
});
