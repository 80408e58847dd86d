/**
 * Churn: CHURN_SECONDS (default 100; about three minutes in all in the
 * sandbox) of random Service and EndpointSlice
 * changes through the test API server, with watch cuts and one 410 Gone
 * relist on the way, while clients keep making requests to three Services
 * that always have a ready endpoint (their endpoints roll: one is added
 * before one is taken away, as a Deployment's rolling update does; their
 * specs change too: affinity, an extra port, NodePort on and off). Ten
 * other Services and their slices appear, change and disappear at random
 * (every type, externalIPs, LoadBalancer VIPs, ETP=Local, empty and
 * not-ready endpoints, slices without their Service).
 *
 * Afterwards: the kernel equals `plan` of the API server's final objects
 * exactly (ipvsadm -Sn, ipset save, ip addr, iptables-save); no request to
 * those Services failed, and every answer came from one of their
 * endpoints; and the proxy's memory is flat (see memoryVerdict).
 *
 *   CHURN_SECONDS=300 CHURN_SEED=42 bash scripts/with-kernel.sh npx tap test/kernel/proxy-churn.test.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { ipvsadmSave } from '../support/controller-kernel.js';
import { FakeApiServer } from '../support/fake-apiserver.js';
import type { Netns } from '../../../test/support/netns.js';
import { prng } from '../../../test/support/prng.js';
import { type HeapReading, INSPECT_FLAG, heapProbe, inspectorUrl } from '../support/heap-probe.js';
import { proxyNode, startProxy, until } from '../support/proxy-env.js';
import { kernelMatchesPlan, manifestsFolder, planIpvsadm, runPlan } from '../support/proxy-plan.js';

const SECONDS = Number(process.env.CHURN_SECONDS ?? 100);
const SEED = Number(process.env.CHURN_SEED ?? Date.now() % 1_000_000);
/** Mean time between two changes. */
const CHANGE_EVERY_MS = 250;

const PODS_A = ['10.244.1.10', '10.244.1.11', '10.244.1.12', '10.244.1.13'];
const PODS_B = ['10.244.2.10', '10.244.2.11', '10.244.2.12', '10.244.2.13'];
const PODS = [...PODS_A, ...PODS_B];
const nodeOf = (ip: string) => (PODS_A.includes(ip) ? 'node-a' : 'node-b');

/** One server per pods namespace, on every address there: answers "pod <the address it was reached on>". */
const POD_SERVER = `
require('http').createServer((q, s) => s.end('pod ' + q.socket.localAddress)).listen(8080, '0.0.0.0', () => console.log('listening'));
`;

/**
 * Keeps requesting each target in turn until SIGTERM, then prints a JSON
 * summary. Each request is a fresh connection that the client resets (RST)
 * once the answer is in, so IPVS forgets it within seconds (CLOSE state)
 * instead of holding a TIME_WAIT entry for two minutes: removed real
 * servers then drain quickly and the final comparison need not wait.
 */
const CLIENT = `
const net = require('net');
const targets = process.argv.slice(1).map((t) => { const [host, port] = t.split(':'); return { host, port: Number(port) }; });
const stats = {};
for (const t of targets) stats[t.host + ':' + t.port] = { ok: 0, failed: 0, failures: [], answers: {}, maxMs: 0 };
let stop = false;
process.on('SIGTERM', () => { stop = true; });
function once(t) {
  return new Promise((resolve) => {
    const started = Date.now();
    let body = '';
    let done = false;
    const s = net.connect(t.port, t.host);
    const finish = (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.resetAndDestroy();
      resolve({ err, body: body.split('\\r\\n\\r\\n')[1], ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish('timeout after 5 s'), 5000);
    s.on('connect', () => s.write('GET / HTTP/1.0\\r\\n\\r\\n'));
    s.on('data', (d) => (body += d));
    s.on('end', () => finish(body.startsWith('HTTP/1.1 200') ? undefined : 'bad answer: ' + JSON.stringify(body.slice(0, 80))));
    s.on('error', (e) => finish(e.code || e.message));
  });
}
(async () => {
  while (!stop) {
    for (const t of targets) {
      const key = t.host + ':' + t.port;
      const r = await once(t);
      const st = stats[key];
      st.maxMs = Math.max(st.maxMs, r.ms);
      if (r.err) { st.failed++; st.failures.push(new Date().toISOString() + ' ' + r.err); }
      else { st.ok++; st.answers[r.body] = (st.answers[r.body] || 0) + 1; }
    }
  }
  console.log(JSON.stringify(stats));
})();
`;

interface TargetStats {
  ok: number;
  failed: number;
  failures: string[];
  answers: Record<string, number>;
  maxMs: number;
}

function startClient(t: { teardown(fn: () => unknown): void }, ns: Netns, targets: string[]): { child: ChildProcess; result: () => Promise<Record<string, TargetStats>> } {
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', CLIENT, ...targets], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return {
    child,
    async result() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      return JSON.parse(out) as Record<string, TargetStats>;
    },
  };
}

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [k: string]: unknown };

function service(name: string, spec: Record<string, unknown>, status?: Record<string, unknown>): Obj {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'churn' }, spec, ...(status ? { status } : {}) };
}

function slice(service: string, endpoints: Array<{ ip: string; ready?: boolean; terminating?: boolean }>): Obj {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${service}-1`, namespace: 'churn', labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    ports: [
      { name: 'http', protocol: 'TCP', port: 8080 },
      { name: 'alt', protocol: 'TCP', port: 8080 },
    ],
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready ?? true, serving: e.ready ?? true ? true : (e.terminating ?? false), terminating: e.terminating ?? false },
      nodeName: nodeOf(e.ip),
    })),
  };
}

/** The three Services the clients use: always at least one ready endpoint. */
interface Stable {
  name: string;
  clusterIP: string;
  nodePort?: number;
  /** Keeps its NodePort whatever happens (the outside client uses it). */
  nodePortFixed: boolean;
  ready: string[];
  /** Endpoints on their way out: serving and terminating, not ready (one step before removal). */
  terminating: string[];
  affinity: boolean;
  altPort: boolean;
  /** Every endpoint it ever had: the answers must come from these. */
  ever: Set<string>;
}

function stableService(s: Stable): Obj {
  const ports = [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, ...(s.nodePort ? { nodePort: s.nodePort } : {}) }];
  if (s.altPort) ports.push({ name: 'alt', protocol: 'TCP', port: 81, targetPort: 8080, ...(s.nodePort ? { nodePort: s.nodePort + 1 } : {}) });
  return service(s.name, {
    type: s.nodePort ? 'NodePort' : 'ClusterIP',
    clusterIP: s.clusterIP,
    clusterIPs: [s.clusterIP],
    ports,
    ...(s.affinity ? { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 30 } } } : {}),
  });
}

function stableSlice(s: Stable): Obj {
  return slice(s.name, [...s.ready.map((ip) => ({ ip })), ...s.terminating.map((ip) => ({ ip, ready: false, terminating: true }))]);
}

/** A random Service for churn-k (k = 0..9), every shape kube-proxy handles. */
function randomChurnService(k: number, rnd: () => number): Obj {
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const type = pick(['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer']);
  const ports = [{ name: 'http', protocol: pick(['TCP', 'TCP', 'UDP']), port: 80, targetPort: 8080, ...(type !== 'ClusterIP' ? { nodePort: 30300 + 2 * k } : {}) }];
  if (rnd() < 0.4) ports.push({ name: 'alt', protocol: 'TCP', port: 8443, targetPort: 8080, ...(type !== 'ClusterIP' ? { nodePort: 30301 + 2 * k } : {}) });
  const local = type !== 'ClusterIP' && rnd() < 0.4;
  const spec: Record<string, unknown> = { type, clusterIP: `10.96.2.${k + 1}`, clusterIPs: [`10.96.2.${k + 1}`], ports };
  if (local) spec.externalTrafficPolicy = 'Local';
  if (local && type === 'LoadBalancer') spec.healthCheckNodePort = 32100 + k;
  if (rnd() < 0.3) spec.externalIPs = [`198.51.100.${k + 1}`];
  if (rnd() < 0.2) Object.assign(spec, { sessionAffinity: 'ClientIP' });
  if (rnd() < 0.15) spec.internalTrafficPolicy = 'Local';
  const status = type === 'LoadBalancer' && rnd() < 0.7 ? { loadBalancer: { ingress: [{ ip: `203.0.113.${k + 1}` }] } } : undefined;
  return service(`churn-${k}`, spec, status);
}

function randomChurnSlice(k: number, rnd: () => number): Obj {
  const endpoints = PODS.filter(() => rnd() < 0.35).map((ip) => ({ ip, ready: rnd() < 0.8, terminating: rnd() < 0.5 }));
  return slice(`churn-${k}`, endpoints);
}

const MiB = 1024 * 1024;

/**
 * "Flat": what the proxy keeps does not grow with the changes it handles.
 * heapProbe() reads it after a full collection in the proxy (so V8's own
 * schedule of collections is out of the reading) when the warm-up ends
 * (the first 30 % of the run: the informers' caches, the kernel mirror and
 * the compiled code at their working size), every 20 s after, and when the
 * churn stops; the first and the last readings are compared.
 * - Its data (the heap's objects and its buffers) may grow by less than
 *   1 MiB. The objects in play are bounded (13 Services, 13 slices, one
 *   Node), so they stop growing once every shape has been seen; what still
 *   moves is a few hundred KiB (the churned Services present at either
 *   reading, a watch's buffers). With about four changes a second the
 *   steady phase sees some 280 changes in the default run, so a leak of
 *   about 4 KiB per change fails it (a proxy changed to keep 4 KiB per
 *   watch event did). Keeping each event's object alone (a few hundred
 *   bytes here, where the objects are small) passes the default run:
 *   slower leaks need longer runs (CHURN_SECONDS).
 * - The resident set may grow by less than 6 MiB: it also holds what the
 *   heap does not (the addon's and node's C heap, the malloc arenas the
 *   proxy trims after each periodic resync, not at the probe), and moves a
 *   few MiB more than the data does. A native leak of about 20 KiB per
 *   change fails it.
 * - Compiled code is reported, not judged: V8 compiles and optimises more
 *   of the program for minutes, leak or not.
 */
function memoryVerdict(probes: HeapReading[]): { objectsOk: boolean; rssOk: boolean; objectGrowth: number; rssGrowth: number; summary: string } {
  const first = probes[0];
  const last = probes.at(-1)!;
  const objectGrowth = (last.objectBytes - first.objectBytes) / MiB;
  const rssGrowth = (last.rssBytes - first.rssBytes) / MiB;
  const reading = (p: HeapReading) =>
    `${((p.at - first.at) / 1000).toFixed(0)} s: objects ${(p.objectBytes / MiB).toFixed(2)}, code ${(p.codeBytes / MiB).toFixed(2)}, RSS ${(p.rssBytes / MiB).toFixed(1)} (collection ${p.collectMs.toFixed(0)} ms)`;
  const summary = `MiB after a full collection, from the end of the warm-up: ${probes.map(reading).join('; ')}`;
  return { objectsOk: objectGrowth < 1, rssOk: rssGrowth < 6, objectGrowth, rssGrowth, summary };
}

t.test(`churn for ${SECONDS} s (seed ${SEED}): kernel equals plan, no failed request, flat memory`, async (t) => {
  const rnd = prng(SEED);
  const env = await proxyNode(t);
  await env.client.exec('ip', ['route', 'add', 'default', 'via', '192.168.56.10']);
  for (const [ns, ips, gw] of [
    [env.podsA, PODS_A, '10.244.1.1'],
    [env.podsB, PODS_B, '10.244.2.1'],
  ] as const) {
    for (const ip of ips) await ns.exec('ip', ['addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    await ns.exec('ip', ['route', 'add', 'default', 'via', gw]);
    const server = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', POD_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    t.teardown(() => server.kill('SIGKILL'));
    await once(server.stdout!, 'data');
  }

  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.close());
  api.apply('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.56.10' }] } });
  const stable: Stable[] = [
    { name: 'stable-1', clusterIP: '10.96.1.1', nodePortFixed: false, ready: ['10.244.1.10', '10.244.2.10'], terminating: [], affinity: false, altPort: false, ever: new Set() },
    { name: 'stable-2', clusterIP: '10.96.1.2', nodePort: 30200, nodePortFixed: true, ready: ['10.244.1.11'], terminating: [], affinity: false, altPort: false, ever: new Set() },
    { name: 'stable-3', clusterIP: '10.96.1.3', nodePortFixed: false, ready: ['10.244.2.12', '10.244.1.13'], terminating: [], affinity: true, altPort: true, ever: new Set() },
  ];
  for (const s of stable) {
    s.ready.forEach((ip) => s.ever.add(ip));
    api.apply('services', stableService(s));
    api.apply('endpointslices', stableSlice(s));
  }
  const proxy = await startProxy(t, env, ['--master', api.url], { nodeFlags: [INSPECT_FLAG] });
  const inspector = await inspectorUrl(proxy.log);

  const inside = startClient(t, env.node, ['10.96.1.1:80', '10.96.1.2:80', '10.96.1.3:80']);
  const outside = startClient(t, env.client, ['192.168.56.10:30200']);

  // --- churn ---
  const churnServices = new Map<number, Obj>();
  const churnSlices = new Map<number, Obj>();
  const counts: Record<string, number> = {};
  const count = (what: string) => (counts[what] = (counts[what] ?? 0) + 1);
  const probes: HeapReading[] = [];
  const started = Date.now();
  let nextProbe = started + SECONDS * 1000 * 0.3;
  let nextCut = started + 20_000;
  let compacted = false;
  while (Date.now() - started < SECONDS * 1000) {
    const r = rnd();
    if (r < 0.45) {
      // A stable Service changes: endpoints roll one step, or its spec changes.
      const s = stable[Math.floor(rnd() * stable.length)];
      const step = rnd();
      if (step < 0.6) {
        if (s.terminating.length > 0 && rnd() < 0.5) {
          s.terminating.shift();
          count('stable: terminating endpoint removed');
        } else if (s.ready.length < 3 && (s.ready.length === 1 || rnd() < 0.5)) {
          const free = PODS.filter((ip) => !s.ready.includes(ip) && !s.terminating.includes(ip));
          const ip = free[Math.floor(rnd() * free.length)];
          s.ready.push(ip);
          s.ever.add(ip);
          count('stable: endpoint added');
        } else {
          // Never the last ready one: it becomes terminating first, or goes at once.
          const ip = s.ready.splice(Math.floor(rnd() * s.ready.length), 1)[0];
          if (rnd() < 0.5) s.terminating.push(ip);
          count('stable: endpoint removed');
        }
        api.apply('endpointslices', stableSlice(s));
      } else {
        if (step < 0.75) s.affinity = !s.affinity;
        else if (step < 0.9) s.altPort = !s.altPort;
        else if (!s.nodePortFixed) s.nodePort = s.nodePort ? undefined : 30210 + stable.indexOf(s) * 2;
        api.apply('services', stableService(s));
        count('stable: spec changed');
      }
    } else {
      const k = Math.floor(rnd() * 10);
      const which = rnd();
      if (which < 0.5) {
        if (churnServices.has(k) && rnd() < 0.3) {
          api.delete('services', 'churn', `churn-${k}`);
          churnServices.delete(k);
          count('churn: service deleted');
        } else {
          const svc = randomChurnService(k, rnd);
          api.apply('services', svc);
          churnServices.set(k, svc);
          count('churn: service created or changed');
        }
      } else if (churnSlices.has(k) && rnd() < 0.3) {
        api.delete('endpointslices', 'churn', `churn-${k}-1`);
        churnSlices.delete(k);
        count('churn: slice deleted');
      } else {
        const sl = randomChurnSlice(k, rnd);
        api.apply('endpointslices', sl);
        churnSlices.set(k, sl);
        count('churn: slice created or changed');
      }
    }
    const now = Date.now();
    if (now >= nextCut) {
      // A network blip every 20 s; once, halfway, with the history compacted: 410 Gone and a relist.
      if (!compacted && now - started > (SECONDS * 1000) / 2) {
        api.compact();
        compacted = true;
        count('watch: compacted (410, relist)');
      } else {
        api.dropWatches();
        count('watch: cut');
      }
      nextCut = now + 20_000;
    }
    if (now >= nextProbe) {
      probes.push(await heapProbe(inspector));
      nextProbe = Date.now() + 20_000;
    }
    await sleep(rnd() * 2 * CHANGE_EVERY_MS);
  }
  const churnMs = Date.now() - started;
  probes.push(await heapProbe(inspector));
  t.comment(`${Object.values(counts).reduce((a, b) => a + b, 0)} changes in ${(churnMs / 1000).toFixed(0)} s: ${JSON.stringify(counts)}`);

  // --- the clients: nothing failed, every answer from one of the Service's endpoints ---
  const results = { ...(await inside.result()), ...(await outside.result()) };
  const targets: Array<[string, Stable]> = [
    ['10.96.1.1:80', stable[0]],
    ['10.96.1.2:80', stable[1]],
    ['10.96.1.3:80', stable[2]],
    ['192.168.56.10:30200', stable[1]],
  ];
  for (const [target, s] of targets) {
    const r = results[target];
    t.comment(`${target}: ${r.ok} answered, ${r.failed} failed, slowest ${r.maxMs} ms, answers ${JSON.stringify(r.answers)}`);
    t.ok(r.ok > 0, `${target} was exercised`);
    t.same(r.failures, [], `${target} (${s.name}): no request failed${r.failures.length ? ` (first: ${r.failures.slice(0, 3).join('; ')})` : ''}`);
    t.same(Object.keys(r.answers).filter((a) => !s.ever.has(a.replace(/^pod /, ''))), [], `${target}: every answer came from one of ${s.name}'s endpoints`);
  }

  // --- the kernel converges to plan of the final objects ---
  const finalObjects = (['nodes', 'services', 'endpointslices'] as const).flatMap((r) => api.objects(r));
  const plan = await runPlan(manifestsFolder(finalObjects as Obj[]));
  const convergeStart = Date.now();
  // Real servers removed while they still had connections drain at weight 0 and go at the next
  // graceful-termination pass (every minute): wait for them.
  await until('the table to equal the plan', async () => JSON.stringify(await ipvsadmSave(env.node)) === JSON.stringify(planIpvsadm(plan)), 150_000).catch(async (err) => {
    const have = await ipvsadmSave(env.node);
    const want = planIpvsadm(plan);
    t.comment(`extra: ${JSON.stringify(have.filter((l) => !want.includes(l)))}\nmissing: ${JSON.stringify(want.filter((l) => !have.includes(l)))}`);
    throw err;
  });
  t.comment(`converged ${((Date.now() - convergeStart) / 1000).toFixed(1)} s after the churn stopped`);
  await kernelMatchesPlan(t, env.node, plan, 'after the churn');

  // --- memory ---
  const verdict = memoryVerdict(probes);
  t.comment(verdict.summary);
  t.ok(verdict.objectsOk, `the proxy's data (heap objects and buffers) is flat: ${verdict.objectGrowth.toFixed(2)} MiB of growth after the warm-up, under 1 MiB`);
  t.ok(verdict.rssOk, `the proxy's resident set is flat: ${verdict.rssGrowth.toFixed(1)} MiB of growth after the warm-up, under 6 MiB`);
  t.equal(await proxy.stop(), 0);
});
