/**
 * The binary's way into @kubernetes/client-node (client-node-loader.ts):
 * KubeConfig without the package's generated API client, with node:http as
 * CommonJS loads it (no undici, no http2) and without node-fetch. A fresh
 * node process records every module it loads (a `load` hook, so a module
 * only resolved and then redirected does not count), takes the path the
 * binary takes, and then uses what it loaded: a kubeconfig from --master,
 * its credentials applied to a request, a list and a watch against the
 * test API server.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import module from 'node:module';
import t from 'tap';
import { FakeApiServer } from '../support/fake-apiserver.js';
import { cleanEnv } from '../support/proxy-env.js';

const LOADER = new URL('../../dist/lib/proxy/sources/client-node-loader.js', import.meta.url).href;

const CHILD = `
import module from 'node:module';
const loaded = [];
module.registerHooks?.({ load(url, context, nextLoad) { loaded.push(url); return nextLoad(url, context); } });
const { loadApiServerModules, slimClientNode } = await import(${JSON.stringify(LOADER)});
const [{ ApiServerSource }, { loadKubeConfig }] = await loadApiServerModules();
const kc = loadKubeConfig({ master: process.argv[1] });
const options = {};
await kc.applyToHTTPSOptions(options);
const events = [];
const source = new ApiServerSource({ kubeconfig: kc, nodeName: 'node-a', logger: { warn() {}, info() {}, error() {}, child() { return this; } } });
await source.start({ event: (e) => events.push(e.type + ' ' + e.kind + ' ' + e.object.metadata.name), synced() {}, rejected() {} });
await source.stop();
const generated = loaded.filter((u) => /\\/@kubernetes\\/client-node\\/dist\\/gen\\/(apis|types|models)\\//.test(u));
const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice('NativeModule '.length));
console.log(JSON.stringify({ hooks: typeof module.registerHooks === 'function', slim: slimClientNode(), generated: generated.length, standIn: loaded.some((u) => u.endsWith('/client-node-config-deps.js')), httpStandIn: loaded.some((u) => u.endsWith('/proxy/node-http.js')), nodeFetch: loaded.some((u) => u.includes('/node_modules/node-fetch/')), headersStandIn: loaded.some((u) => u.endsWith('/client-node-fetch-headers.js')), undici: builtins.includes('internal/deps/undici/undici'), http2: builtins.includes('http2'), agent: options.agent?.constructor.name, events }));
`;

t.test('the binary loads KubeConfig without the generated API client, and lists and watches with it', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.close());
  api.apply('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] } });
  // A child of its own: this test process has loaded client-node whole already (through tap's loader).
  // Asynchronously: the test API server answers from this process.
  const child = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD, api.url], { encoding: 'utf8', env: cleanEnv(), timeout: 60_000 });
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { hooks: boolean; slim: boolean; generated: number; standIn: boolean; httpStandIn: boolean; nodeFetch: boolean; headersStandIn: boolean; undici: boolean; http2: boolean; agent: string; events: string[] };
  t.same(r.events, ['add Service web'], 'listed through the loaded modules');
  t.equal(r.agent, 'Agent', "the kubeconfig's agent for http://");
  if (typeof (module as { registerHooks?: unknown }).registerHooks === 'function') {
    t.ok(r.slim, 'the hook is installed (client-node still imports exactly createConfiguration and ServerConfiguration)');
    t.ok(r.standIn, 'KubeConfig took its two imports from the stand-in');
    t.equal(r.generated, 0, 'no module of the generated API client was loaded');
    t.ok(r.httpStandIn, "KubeConfig took node:http from the proxy's CommonJS-loaded one");
    t.ok(r.headersStandIn, "and node-fetch's Headers from the stand-in");
    t.notOk(r.nodeFetch, 'node-fetch is not loaded (the watches are requests of the proxy\'s own)');
    t.notOk(r.undici, 'undici is not loaded (an ES import of node:http loads it)');
    t.notOk(r.http2, 'nor http2');
  } else {
    // No hooks to record with either: what is left to check is that the fallback works (above).
    t.notOk(r.slim, 'no module hooks on this runtime: the whole package loads');
  }
});
