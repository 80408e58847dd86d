/**
 * kube-proxy-ipvs installed from its tarball with the library's (no
 * compiler on PATH): the binary starts on Node.js 22 and 24 and answers
 * --version as kube-proxy does; it uses the library installed beside it;
 * its API server modules load from the installed client-node without the
 * generated API client or node-fetch, which makeApiClient still loads when
 * called (kube-proxy-ipvs/lib/proxy/sources/client-node-loader.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { project, repo, runtime } from './support/env.js';

const dir = project('proxy');
const bin = path.join(dir, 'node_modules/.bin/kube-proxy-ipvs');
const version = JSON.parse(readFileSync(path.join(repo, 'kube-proxy-ipvs/package.json'), 'utf8')).version as string;

t.test('one copy of the library: the one installed beside the proxy', async (t) => {
  t.ok(existsSync(path.join(dir, 'node_modules/ipvs-netlink/prebuilds')));
  t.notOk(existsSync(path.join(dir, 'node_modules/kube-proxy-ipvs/node_modules/ipvs-netlink')), 'not a second one inside the proxy');
});

for (const name of ['node22', 'node24'] as const) {
  t.test(`${name}: --version`, async (t) => {
    const [node] = runtime(name).command;
    const main = realpathSync(bin);
    const plain = spawnSync(node!, [main, '--version'], { cwd: dir, encoding: 'utf8' });
    t.equal(plain.status, 0, plain.stderr);
    t.match(plain.stdout, /^Kubernetes v1\.\d+\.\d+\n$/, 'what kube-proxy prints');
    const raw = spawnSync(node!, [main, '--version=raw'], { cwd: dir, encoding: 'utf8' });
    t.equal(raw.status, 0, raw.stderr);
    t.match(raw.stdout, `ImplementationVersion:"${version}"`, '--version=raw: this package\'s version');
    t.match(raw.stdout, `NodeVersion:"v${name.slice(4)}.`, 'and the Node.js it runs on');
    // Run as a program, as the image and npm's bin link run it: its first
    // line (env -S, with node's heap flags) finds node on PATH.
    const PATH = `${path.dirname(node!)}:${process.env.PATH ?? ''}`;
    const direct = spawnSync(bin, ['--version'], { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH } });
    t.equal(direct.status, 0, direct.stderr);
    t.match(direct.stdout, /^Kubernetes v1\.\d+\.\d+\n$/, 'the bin itself, through its first line');
  });
}

for (const name of ['node22', 'node24'] as const) {
  t.test(`${name}: the API server modules load, without client-node's generated API client or node-fetch`, async (t) => {
    const [node] = runtime(name).command;
    const loader = path.join(dir, 'node_modules/kube-proxy-ipvs/dist/lib/proxy/sources/client-node-loader.js');
    const script = `
      import module from 'node:module';
      const loaded = [];
      module.registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
      const m = await import(${JSON.stringify(loader)});
      const [{ ApiServerSource }, { loadKubeConfig }] = await m.loadApiServerModules();
      const kc = loadKubeConfig({ master: 'http://127.0.0.1:1' });
      const before = { generated: loaded.filter((u) => u.includes('/client-node/dist/gen/apis/')).length, nodeFetch: loaded.some((u) => u.includes('/node-fetch/')), undici: process.moduleLoadList.includes('NativeModule internal/deps/undici/undici') };
      // What KubeConfig takes from the generated client is loaded when first used.
      const api = kc.makeApiClient(class { constructor(c) { this.url = c.baseServer.makeRequestContext('/api', 'GET').getUrl(); } });
      console.log(JSON.stringify({ slim: m.slimClientNode(), source: typeof ApiServerSource, server: kc.getCurrentCluster().server, ...before, apiClientUrl: api.url }));`;
    const r = spawnSync(node!, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
    t.equal(r.status, 0, r.stderr);
    t.same(JSON.parse(r.stdout), { slim: true, source: 'function', server: 'http://127.0.0.1:1', generated: 0, nodeFetch: false, undici: false, apiClientUrl: 'http://127.0.0.1:1/api' });
  });
}
