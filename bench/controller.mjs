/**
 * Controller benchmarks 4-6 (issue 6), run where IPVS exists:
 *
 *   node scripts/test-files/ts-transpile.mjs
 *   bash scripts/with-kernel.sh node --import=./scripts/test-files/ts-transpiled.mjs \
 *     bench/controller.mjs --services N [--runs R] [--changes C] [--manifest-changes M] --out FILE
 *
 * (the TypeScript loader is for the test API server, kube-proxy-ipvs/test/support/fake-apiserver.ts: the
 * project's TypeScript transpiled on the host, which spares the guest ts-node's seconds, in QEMU minutes).
 *
 * 4. Cold start: the kube-proxy-ipvs binary started with --manifests DIR
 *    (N Services x 10 endpoints in YAML) on an empty network namespace,
 *    timed from spawn to the end of its first sync, against the floor in
 *    the same kernel: the same IPVS requests through bench/floor-probe (big
 *    batches, one ack each), Ipset.addMany of the same entries
 *    (bench/ipset-floor.mjs), the same address binds through
 *    bench/address-probe, and one iptables-restore of the same rules. The
 *    same cold start from the test API server (--master) is timed too. The
 *    kernel is checked with ipvsadm -Sn, ipset list -t and ip addr.
 * 5. Incremental: with the N services programmed, the proxy fed by the
 *    test API server, C changes of one endpoint (added to a service, then
 *    removed again), each timed from the API server's watch event to the
 *    end of the sync that programs it (the kernel has acked every request
 *    by then; each change is also read back with listDestinations), with
 *    the netlink messages and sendmsg calls of that sync from the
 *    controller's socket counters. M changes are also made through the
 *    manifests folder, to show what that path adds. The floor: the same C
 *    changes, the proxy stopped, programmed by bench/change-floor.mjs (the
 *    watch and the kernel requests alone; --skip-change-floor leaves it out).
 * 6. Memory: the proxy's VmRSS and VmHWM (peak) after its first periodic
 *    resync.
 *
 * Progress on stderr; the figures as JSON in --out.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Ipvs } from '../dist/lib/index.js';
import { BULK_MESSAGES, messagesOf } from '../kube-proxy-ipvs/dist/lib/proxy/heap.js';
import { changeFloor, endpointChanges, serviceOfChange, timedChange } from './controller-changes.mjs';
import { ENDPOINTS_PER_SERVICE, node, NODE_NAME, rewriteManifest, service, slice, writeJsonObjects, writeManifests } from './controller-objects.mjs';
import { coldStartPlan, ipvsMessages } from './controller-plan.mjs';
import { msBetween, now, ProxyProcess } from './controller-proxy.mjs';
import { expectKernel, freshNetns, kernelCounts, timed } from './netns-util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    services: { type: 'string', default: '200' },
    runs: { type: 'string', default: '3' },
    changes: { type: 'string', default: '200' },
    'manifest-changes': { type: 'string', default: '4' },
    'sync-period': { type: 'string', default: '30s' },
    probe: { type: 'string', default: path.join(here, '.build', 'floor-probe') },
    'address-probe': { type: 'string', default: path.join(here, '.build', 'address-probe') },
    out: { type: 'string', default: path.join(here, 'results', 'controller.json') },
    'skip-apiserver': { type: 'boolean', default: false },
    'skip-change-floor': { type: 'boolean', default: false },
    // Profiling aids (the sandbox passes no environment variables of ours through):
    // node flags for the proxy, e.g. "--cpu-prof --cpu-prof-dir=bench/.build/prof"; a folder for a
    // heap snapshot of the proxy taken after the memory measurement.
    'proxy-node-flags': { type: 'string' },
    'heap-dir': { type: 'string' },
  },
});
if (a['proxy-node-flags']) process.env.BENCH_PROXY_NODE_FLAGS = a['proxy-node-flags'];
if (a['heap-dir']) process.env.BENCH_PROXY_HEAP_DIR = path.resolve(a['heap-dir']);
const N = Number(a.services);
const RUNS = Number(a.runs);
const CHANGES = Number(a.changes);
const MANIFEST_CHANGES = Number(a['manifest-changes']);
const SYNC_PERIOD_MS = (() => {
  const m = /^(\d+)(ms|s|m)$/.exec(a['sync-period']);
  if (!m) throw new Error(`--sync-period ${a['sync-period']}: give a number with ms, s or m`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2]];
})();
const T0 = Date.now();
const say = (s) => process.stderr.write(`bench controller [${((Date.now() - T0) / 1000).toFixed(0)}s]: ${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (!existsSync('/proc/net/ip_vs')) throw new Error('no IPVS here: run through scripts/with-kernel.sh');
for (const p of [a.probe, a['address-probe']]) if (!existsSync(p)) throw new Error(`${p} missing: bench/run.mjs compiles it`);

const work = mkdtempSync(path.join(os.tmpdir(), 'controller-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// --- the cluster and what it must become in the kernel ---
say(`${N} services x ${ENDPOINTS_PER_SERVICE} endpoints: writing manifests, planning`);
const manifests = path.join(work, 'manifests');
writeManifests(manifests, N);
const jsonObjects = path.join(work, 'objects-json');
writeJsonObjects(jsonObjects, N);
const planned = coldStartPlan(N);
const files = { msgs: path.join(work, 'ipvs.nlmsg'), addresses: path.join(work, 'addresses.txt'), sets: path.join(work, 'sets.json') };
writeFileSync(files.msgs, ipvsMessages(planned.ipvs));
writeFileSync(files.addresses, planned.addresses.join('\n') + '\n');
writeFileSync(files.sets, JSON.stringify(planned.sets));
const iptablesInput = planned.iptables.find((x) => x.family === 'inet').restore;
say(`plan: ${JSON.stringify(planned.counts)}`);
planned.ipvs.length = 0; // the messages file has them; the rest of the run does not need the objects

/** The iptables-restore the proxy would pick here (the nf_tables one unless it does not work, as kube-proxy-ipvs/lib/kernel/iptables-flavour.ts). */
function iptablesRestore(ns) {
  return spawnSync('ip', ['netns', 'exec', ns, 'iptables-save', '-t', 'nat']).status === 0 ? 'iptables-restore' : 'iptables-legacy-restore';
}

// --- the floor ---
function floorRun() {
  const ns = freshNetns('ctlfloor');
  try {
    execFileSync('ip', ['-n', ns.name, 'link', 'add', 'kube-ipvs0', 'type', 'dummy']);
    execFileSync('ip', ['-n', ns.name, 'link', 'set', 'kube-ipvs0', 'up']);
    const ifindex = execFileSync('ip', ['-n', ns.name, '-o', 'link', 'show', 'kube-ipvs0']).toString().split(':')[0].trim();
    const parse = (who, out, want) => {
      const m = /ok (\d+) errors (\d+) sendmsg (\d+) recv (\d+)/.exec(out);
      if (!m || Number(m[1]) !== want || Number(m[2]) !== 0) throw new Error(`${who}: ${out}`);
      return { sendmsg: Number(m[3]), recv: Number(m[4]) };
    };
    const ipvs = timed(ns.name, [a.probe, files.msgs]);
    Object.assign(ipvs, parse('floor-probe', ipvs.stdout, planned.counts.virtualServers + planned.counts.realServers));
    const r = spawnSync(process.execPath, [path.join(here, 'ipset-floor.mjs'), '--netns', ns.path, '--sets', files.sets], { maxBuffer: 1 << 26, env: cleanEnv() });
    if (r.status !== 0) throw new Error(`ipset-floor exited ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
    const ipset = JSON.parse(String(r.stdout).trim().split('\n').pop());
    const addresses = timed(ns.name, [a['address-probe'], ifindex, files.addresses]);
    Object.assign(addresses, parse('address-probe', addresses.stdout, planned.counts.addresses));
    const iptables = timed(ns.name, [iptablesRestore(ns.name), '-w', '--noflush', '--counters'], iptablesInput);
    expectKernel(ns.name, planned.counts, 'the floor');
    // Not part of the floor: what any Node program pays before programming anything (see the report).
    const nodeStart = timed(ns.name, [process.execPath, '-e', '']);
    const parseOnly = timed(ns.name, [process.execPath, path.join(here, 'parse-floor.mjs'), jsonObjects]);
    if (parseOnly.stdout.trim() !== `objects ${2 * N + 1}`) throw new Error(`parse-floor: ${parseOnly.stdout}`);
    for (const x of [ipvs, addresses, iptables, nodeStart, parseOnly]) delete x.stdout;
    return { ipvs, ipset, addresses, iptables, nodeStart, parseOnly, wallMs: ipvs.wallMs + ipset.wallMs + addresses.wallMs + iptables.wallMs };
  } finally {
    ns.remove();
  }
}

function cleanEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')));
}

// --- cold start of the binary, and what it took ---
/** Phases of a start, from the instrument's events, in ms since spawn. */
function coldStartOf(p) {
  const at = (ev) => p.events.find((e) => e.ev === ev);
  const since = (ev) => (at(ev) ? msBetween(p.startedAt, at(ev).t) : undefined);
  const end = at('sync-end');
  const start = at('start-end');
  const sum = (x, y) => Object.fromEntries(Object.keys({ ...x, ...y }).map((s) => [s, Object.fromEntries(Object.keys({ ...x?.[s], ...y?.[s] }).map((k) => [k, (x?.[s]?.[k] ?? 0) + (y?.[s]?.[k] ?? 0)]))]));
  return {
    totalMs: since('sync-end'),
    phases: {
      nodeStartMs: since('loaded'),
      sourceBeginMs: since('source-begin'),
      sourceEndMs: since('source-end'),
      controllerStartBeginMs: since('start-begin'),
      controllerStartEndMs: since('start-end'),
      firstSyncBeginMs: since('sync-begin'),
    },
    controllerStartMs: msBetween(at('start-begin').t, start.t),
    firstSyncMs: msBetween(at('sync-begin').t, end.t),
    userUs: end.userUs,
    systemUs: end.systemUs,
    rssAtFirstSync: end.rss,
    heapUsedAtFirstSync: end.heapUsed,
    maxRssAtFirstSync: end.maxRssKb * 1024,
    firstSync: { planned: end.planned, applied: end.applied, failed: end.failed, netlink: end.netlink },
    startNetlink: start.netlink,
    netlink: sum(start.netlink, end.netlink),
  };
}

/** Spawns the binary on a fresh namespace and waits for its first sync. */
async function coldStart(args, label) {
  const ns = freshNetns('ctlproxy');
  const p = new ProxyProcess({ netns: ns.path, node: NODE_NAME, args });
  try {
    const end = await p.waitFor('the first sync', (e) => e.ev === 'sync-end');
    if (end.error || end.failed) throw new Error(`${label}: the first sync failed: ${end.error ?? `${end.failed} operations refused`}`);
    const result = coldStartOf(p);
    say(`  ${label}: first sync done ${result.totalMs.toFixed(0)} ms after spawn (sync itself ${result.firstSyncMs.toFixed(0)} ms); checking the kernel`);
    result.kernel = expectKernel(ns.name, planned.counts, label);
    return { p, ns, result };
  } catch (err) {
    await p.stop();
    ns.remove();
    throw err;
  }
}

/** The collection after a bulk resync, as text; a small resync has none. */
function afterCollection(c) {
  if (!c) return ', no collection (not bulk work)';
  const mib = (b) => (b / 2 ** 20).toFixed(1);
  return `, after the collection (${c.ms.toFixed(0)} ms) ${mib(c.heapUsed)} of ${mib(c.heapTotal)}, RSS then ${mib(c.rss)}`;
}

/** After the first periodic resync: the resident set, settled for a second. */
async function memoryAfterResync(p) {
  const e = await p.waitFor('the first periodic resync', (x) => x.ev === 'resync-end');
  if (e.error) throw new Error(`the resync failed: ${e.error}`);
  const begin = p.events.find((x) => x.ev === 'resync-begin');
  // The proxy collects a big resync's garbage as soon as the resync ends (kube-proxy-ipvs/lib/proxy/heap.ts); a
  // small one's (the CI size) it leaves to V8.
  const bulk = messagesOf(e.netlink) >= BULK_MESSAGES;
  const gc = bulk ? await p.waitFor('the collection after the resync', (x) => x.ev === 'gc-end', { from: p.events.indexOf(e) }) : undefined;
  const gcBegin = gc && p.events.slice(0, p.events.indexOf(gc)).reverse().find((x) => x.ev === 'gc-begin');
  await sleep(1000);
  const m = p.memory();
  const byMapping = p.residentByMapping();
  // Settled: the idle stretch before the next resync, where the proxy spends most of its time
  // (V8 gives back the young generation's pages only once the process has been idle a while).
  const idleMs = SYNC_PERIOD_MS - 2000 - msBetween(begin.t, now());
  // A resync that outlasts the period is followed by the next at once: "settled" would be read inside it.
  if (idleMs <= 0) throw new Error(`the first resync took ${msBetween(begin.t, e.t).toFixed(0)} ms, --sync-period ${a['sync-period']} leaves no idle stretch before the next: give a longer period`);
  await sleep(idleMs);
  const settled = { ...p.memory(), byMapping: p.residentByMapping() };
  return {
    rss: m.rss,
    peak: m.peak,
    byMapping,
    settled,
    syncPeriod: a['sync-period'],
    // V8's view at the end of the resync (no forced GC): live + not yet collected.
    heap: { used: e.heapUsed, total: e.heapTotal, external: e.external, arrayBuffers: e.arrayBuffers },
    // Right after the collection: what the live objects need.
    afterCollection: gc && { rss: gc.rss, heapUsed: gc.heapUsed, heapTotal: gc.heapTotal, external: gc.external, ms: msBetween(gcBegin.t, gc.t) },
    resyncMs: msBetween(begin.t, e.t),
    resyncPlanned: e.planned,
    resyncNetlink: e.netlink,
  };
}

/**
 * The proxy's own reaction to a change, not its rate limit: by default (as upstream's) it syncs IPVS at most
 * once a second, so a change within a second of the previous sync (every change here after the first) would
 * wait out the rest of that second.
 */
const NO_RATE_LIMIT = ['--ipvs-min-sync-period', '0s'];

const result = { date: new Date().toISOString(), kernel: execFileSync('uname', ['-r']).toString().trim(), sandbox: process.env.IPVS_NETLINK_SANDBOX ?? 'host', kernelBuild: readFileSync('/proc/version', 'utf8').trim(), services: N, endpointsPerService: ENDPOINTS_PER_SERVICE, plan: planned.counts, runs: RUNS };
const started = Date.now();

// 4a. floor, RUNS times
result.floor = [];
for (let r = 0; r < RUNS; r++) {
  say(`floor ${r + 1}/${RUNS}: probe + ipset addMany + address probe + iptables-restore`);
  const f = floorRun();
  say(`  floor ${f.wallMs.toFixed(0)} ms (IPVS ${f.ipvs.wallMs.toFixed(0)}, ipset ${f.ipset.wallMs.toFixed(0)}, addresses ${f.addresses.wallMs.toFixed(0)}, iptables ${f.iptables.wallMs.toFixed(0)})`);
  result.floor.push(f);
}

// 4b + 6: cold start from manifests, RUNS times; memory after the first resync; manifest-path changes on the last run
result.manifests = [];
for (let r = 0; r < RUNS; r++) {
  say(`cold start ${r + 1}/${RUNS}: kube-proxy-ipvs --manifests (${N} services), --ipvs-sync-period ${a['sync-period']}`);
  const { p, ns, result: run } = await coldStart(['--manifests', manifests, '--ipvs-sync-period', a['sync-period'], ...NO_RATE_LIMIT], 'kube-proxy-ipvs --manifests');
  try {
    say(`  waiting for the first periodic resync (memory)`);
    run.memory = await memoryAfterResync(p);
    say(`  after the resync (${run.memory.resyncMs.toFixed(0)} ms): RSS ${(run.memory.rss / 2 ** 20).toFixed(1)} MiB, peak ${(run.memory.peak / 2 ** 20).toFixed(1)} MiB; resident in ${Object.entries(run.memory.byMapping).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)}`).join(', ')} MiB; V8 heap at the end of the resync ${(run.memory.heap.used / 2 ** 20).toFixed(1)} used of ${(run.memory.heap.total / 2 ** 20).toFixed(1)}${afterCollection(run.memory.afterCollection)}`);
    say(`  settled, before the next resync: RSS ${(run.memory.settled.rss / 2 ** 20).toFixed(1)} MiB, peak ${(run.memory.settled.peak / 2 ** 20).toFixed(1)} MiB; resident in ${Object.entries(run.memory.settled.byMapping).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)}`).join(', ')} MiB`);
    if (a['heap-dir']) {
      const from = p.events.length;
      p.child.kill('SIGUSR2');
      const snap = await p.waitFor('the heap snapshot', (e) => e.ev === 'heap-snapshot', { from });
      // Taking the snapshot collects all garbage first: RSS and heap here are what the live objects need.
      say(`  heap snapshot: ${snap.file} (afterwards RSS ${(snap.rss / 2 ** 20).toFixed(1)} MiB, heap ${(snap.heapUsed / 2 ** 20).toFixed(1)} of ${(snap.heapTotal / 2 ** 20).toFixed(1)} MiB, external ${(snap.external / 2 ** 20).toFixed(1)} MiB)`);
    }
    if (r === RUNS - 1 && MANIFEST_CHANGES > 0) {
      const ipvs = await Ipvs.open({ netns: ns.path });
      try {
        run.manifestChanges = [];
        for (let c = 0; c < MANIFEST_CHANGES; c++) {
          const i = serviceOfChange(c, N);
          const add = c % 2 === 0;
          const x = await timedChange(p, ipvs, i, add, () => rewriteManifest(manifests, N, i, add, renameSync), `manifest change ${c}`);
          say(`  manifest change ${c + 1}/${MANIFEST_CHANGES} (${add ? 'add' : 'remove'} an endpoint of svc-${i}): ${x.latencyMs.toFixed(0)} ms (reload ${x.reloadMs?.toFixed(0)} ms, sync ${x.syncMs.toFixed(1)} ms)`);
          run.manifestChanges.push(x);
        }
      } finally {
        ipvs.close();
      }
    }
    run.exitCode = await p.stop();
    if (run.exitCode !== 0) throw new Error(`kube-proxy-ipvs exited ${run.exitCode} on SIGTERM; its log's last lines:\n${p.logTail.slice(-3000)}`);
    // Profiling runs keep the raw timeline, to cut the CPU profile into phases (bench/profile-summary.mjs --from/--to).
    if (a['proxy-node-flags']) run.events = p.events.map((e) => ({ ev: e.ev, t: String(e.t), msSinceSpawn: msBetween(p.startedAt, e.t) }));
  } finally {
    await p.stop();
    ns.remove();
  }
  result.manifests.push(run);
}

// 4c + 5: the test API server; one cold start, then the endpoint changes
if (!a['skip-apiserver']) {
  const { FakeApiServer } = await import('../kube-proxy-ipvs/test/support/fake-apiserver.js');
  const api = new FakeApiServer();
  await api.start();
  try {
    api.apply('nodes', node());
    for (let i = 0; i < N; i++) {
      api.apply('services', service(i));
      api.apply('endpointslices', slice(i));
    }
    say(`cold start: kube-proxy-ipvs --master (test API server, ${N} services), --ipvs-sync-period 1h (no resync among the changes)`);
    const { p, ns, result: run } = await coldStart(['--master', api.url, '--ipvs-sync-period', '1h', ...NO_RATE_LIMIT], 'kube-proxy-ipvs --master');
    try {
      const ipvs = await Ipvs.open({ netns: ns.path });
      try {
        run.changes = await endpointChanges(p, ipvs, api, { services: N, changes: CHANGES, label: 'API change', say });
      } finally {
        ipvs.close();
      }
      run.memoryAfterChanges = p.memory();
      // Settled as the manifests run's figure is: after an idle stretch as long as the one before its next resync.
      await sleep(SYNC_PERIOD_MS - 2000);
      run.memorySettled = { ...p.memory(), byMapping: p.residentByMapping() };
      say(`  after the changes: RSS ${(run.memoryAfterChanges.rss / 2 ** 20).toFixed(1)} MiB; settled ${((SYNC_PERIOD_MS - 2000) / 1000).toFixed(0)} s later: RSS ${(run.memorySettled.rss / 2 ** 20).toFixed(1)} MiB, peak ${(run.memorySettled.peak / 2 ** 20).toFixed(1)} MiB; resident in ${Object.entries(run.memorySettled.byMapping).map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(1)}`).join(', ')} MiB`);
      if (a['heap-dir']) {
        const from = p.events.length;
        p.child.kill('SIGUSR2');
        const snap = await p.waitFor('the heap snapshot', (e) => e.ev === 'heap-snapshot', { from });
        say(`  heap snapshot: ${snap.file} (RSS before ${(run.memoryAfterChanges.rss / 2 ** 20).toFixed(1)} MiB, afterwards ${(snap.rss / 2 ** 20).toFixed(1)} MiB, heap ${(snap.heapUsed / 2 ** 20).toFixed(1)} of ${(snap.heapTotal / 2 ** 20).toFixed(1)} MiB, external ${(snap.external / 2 ** 20).toFixed(1)} MiB)`);
      }
      run.exitCode = await p.stop();
      if (run.exitCode !== 0) throw new Error(`kube-proxy-ipvs exited ${run.exitCode} on SIGTERM; its log's last lines:\n${p.logTail.slice(-3000)}`);
      if (a['proxy-node-flags']) run.events = p.events.map((e) => ({ ev: e.ev, t: String(e.t), msSinceSpawn: msBetween(p.startedAt, e.t) }));
      run.kernelAfter = kernelCounts(ns.name);
      if (CHANGES > 0 && !a['skip-change-floor']) run.changeFloor = await changeFloor(api, ns, { services: N, changes: CHANGES, say });
    } finally {
      await p.stop();
      ns.remove();
    }
    result.apiserver = run;
  } finally {
    await api.close();
  }
}

result.elapsedS = (Date.now() - started) / 1000;
mkdirSync(path.dirname(a.out), { recursive: true });
writeFileSync(a.out, JSON.stringify(result, (k, v) => (typeof v === 'bigint' ? String(v) : v), 2) + '\n');
say(`wrote ${a.out} (${result.elapsedS.toFixed(0)} s)`);
