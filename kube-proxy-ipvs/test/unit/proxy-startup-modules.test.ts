/**
 * What the binary loads of Node's own modules and of prom-client, and
 * what it leaves out: undici (with web streams, tls, http2, zlib), which an
 * ES import of node:http would load (proxy/node-http.ts), and prom-client's
 * Pushgateway client and the @opentelemetry/api its process CPU collector
 * loads (proxy/prom-client-parts.ts). A fresh node process loads the
 * binary's modules, serves and scrapes its metrics with the default
 * collectors, and says which modules it has loaded. (With --master,
 * client-node's imports of node:http: proxy-client-node-loader.)
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import type * as PromClient from 'prom-client';
import t from 'tap';
import * as parts from '../../lib/proxy/prom-client-parts.js';
import { cleanEnv } from '../support/proxy-env.js';

const DIST = new URL('../../dist/lib/', import.meta.url).href;

// node:http as CommonJS loads it: an ES import of it is what this checks for.
const CHILD = `
import { createRequire } from 'node:module';
const { request } = createRequire(import.meta.url)('node:http');
await import(${JSON.stringify(`${DIST}cli/run.js`)});
const { ProxyMetrics } = await import(${JSON.stringify(`${DIST}proxy/metrics.js`)});
const { MetricsServer } = await import(${JSON.stringify(`${DIST}proxy/metrics-server.js`)});
const server = new MetricsServer(new ProxyMetrics(() => undefined));
const at = await server.start('127.0.0.1:0');
const text = await new Promise((resolve, reject) => {
  request('http://' + at + '/metrics', (res) => { let s = ''; res.setEncoding('utf8'); res.on('data', (c) => (s += c)); res.on('end', () => resolve(s)); }).on('error', reject).end();
});
await server.close();
const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
const packageOf = (file) => { const [a, b] = file.split('/node_modules/').at(-1).split('/'); return a.startsWith('@') ? a + '/' + b : a; };
const packages = [...new Set(Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/node_modules/')).map(packageOf))];
console.log(JSON.stringify({ builtins, packages, scraped: text.includes('process_resident_memory_bytes') && text.includes('process_cpu_seconds_total ') && text.includes('kubeproxy_sync_proxy_rules_duration_seconds') }));
`;

t.test("the binary's modules, serving metrics, load no undici, tls, http2 or zlib", async (t) => {
  const child = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD], { encoding: 'utf8', env: cleanEnv(), timeout: 60_000 });
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { builtins: string[]; packages: string[]; scraped: boolean };
  t.ok(r.scraped, "the scrape has the default collectors' and kube-proxy's series");
  t.ok(r.packages.includes('prom-client'), `packages loaded: ${r.packages.join(', ')}`);
  t.notOk(r.packages.includes('@opentelemetry/api'), '@opentelemetry/api is not loaded');
  t.ok(r.builtins.includes('http') && r.builtins.includes('child_process'), `${r.builtins.length} of Node's modules loaded, node:http among them`);
  for (const m of ['internal/deps/undici/undici', 'tls', 'http2', 'zlib', 'https']) t.notOk(r.builtins.includes(m), `${m} is not loaded`);
});

t.test("prom-client's parts are the package's own", async (t) => {
  const whole = createRequire(import.meta.url)('prom-client') as typeof PromClient;
  for (const name of ['Counter', 'Gauge', 'Histogram', 'Registry'] as const) t.equal(parts[name], whole[name], name);
});

t.test("the default collectors register what prom-client's collectDefaultMetrics does, in its order", async (t) => {
  const whole = createRequire(import.meta.url)('prom-client') as typeof PromClient;
  const theirs = new whole.Registry();
  whole.collectDefaultMetrics({ register: theirs });
  const ours = new parts.Registry();
  parts.registerDefaultMetrics(ours);
  const shape = async (r: PromClient.Registry) => (await r.getMetricsAsJSON()).map((m) => ({ name: m.name, help: m.help, type: m.type, labels: m.values.map((v) => Object.keys(v.labels).sort().join(',')).sort() }));
  t.same(await shape(ours), await shape(theirs), 'the same series, help, types and label names');
  // Ours counts the process's CPU time from its start, as Go's collector does (theirs from registration). As in a
  // scrape, the user series is read first: its collect sets all three.
  const before = process.cpuUsage();
  const value = async (name: string) => (await ours.getSingleMetric(name)!.get()).values[0].value;
  const userSeconds = await value('process_cpu_user_seconds_total');
  const systemSeconds = await value('process_cpu_system_seconds_total');
  const cpu = await value('process_cpu_seconds_total');
  const after = process.cpuUsage();
  const seconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
  t.ok(cpu >= seconds(before) && cpu <= seconds(after), `process_cpu_seconds_total ${cpu}: the process's CPU time since its start (${seconds(before)}-${seconds(after)})`);
  t.ok(Math.abs(userSeconds + systemSeconds - cpu) < 1e-9, 'user + system is the total');
  const theirs0 = (await theirs.getSingleMetric('process_cpu_seconds_total')!.get()).values[0].value;
  t.ok(theirs0 < cpu, `prom-client's own counts less (${theirs0}): only since it was registered`);
});
