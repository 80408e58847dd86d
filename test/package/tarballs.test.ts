/**
 * What `npm pack` puts in each tarball: an allow-list, so that a file nobody
 * meant to ship (a fuzz corpus, a test, a source map, a build folder) fails
 * here. Each shipped file is accounted for by a source in the repository:
 * dist/lib/X.js and X.d.ts by lib/X.ts, native/ files by binding.gyp.
 * Also: the library's runtime dependencies (at most three, none of
 * Kubernetes'), no install scripts, and what an install pulls in.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { project, repo, tarball } from './support/env.js';

const list = (file: string) => execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, '')).sort();
const read = (file: string, inside: string) => execFileSync('tar', ['-xzOf', file, `package/${inside}`], { encoding: 'utf8' });
const sources = (dir: string): string[] =>
  readdirSync(path.join(repo, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => f.replace(/\.ts$/, ''));
const licenseText = readFileSync(path.join(repo, 'LICENSE'), 'utf8');

function checkCommon(t: Test, file: string, files: string[]) {
  t.ok(files.includes('LICENSE') && read(file, 'LICENSE') === licenseText, 'LICENSE: the Apache-2.0 text, as the repository\'s');
  t.ok(licenseText.includes('Apache License') && licenseText.includes('Version 2.0, January 2004'), 'which is the Apache License 2.0');
  t.equal(JSON.parse(read(file, 'package.json')).license, 'Apache-2.0');
  t.ok(files.includes('README.md'), 'a README');
  t.same(files.filter((f) => /\.map$|(^|\/)(test|tests|fuzz|corpus|build|\.sandbox|bench)\//.test(f)), [], 'no source maps, tests, fuzzers or build folders');
  const js = files.filter((f) => f.endsWith('.js'));
  t.same(js.filter((f) => read(file, f).includes('sourceMappingURL')), [], 'no JavaScript points at a map that is not shipped');
}

t.test('ipvs-netlink: exactly what a user needs', async (t) => {
  const file = tarball('ipvs-netlink');
  const files = list(file);
  const libSources = sources('lib');
  const gyp = readFileSync(path.join(repo, 'binding.gyp'), 'utf8');
  const compiled = [...gyp.matchAll(/"(native\/[^"]+\.cc)"/g)].map((m) => m[1]);
  const allowed = (f: string) =>
    ['package.json', 'README.md', 'LICENSE', 'binding.gyp', 'prebuilds/linux-x64/node.glibc.node', 'prebuilds/linux-arm64/node.glibc.node'].includes(f) ||
    (/^dist\/lib\/(.+)\.(js|d\.ts)$/.test(f) && libSources.includes(f.replace(/^dist\/lib\/|\.(js|d\.ts)$/g, ''))) ||
    compiled.includes(f) ||
    (/^native\/[a-z_]+\/[a-z0-9_]+\.h$/.test(f) && !f.startsWith('native/fuzz/'));
  t.same(files.filter((f) => !allowed(f)), [], 'every file is on the allow-list');
  for (const s of libSources) t.ok(files.includes(`dist/lib/${s}.js`) && files.includes(`dist/lib/${s}.d.ts`), `lib/${s}.ts ships as .js and .d.ts`);
  t.same(compiled.filter((c) => !files.includes(c)), [], 'every source binding.gyp compiles ships (a build from source works)');
  t.ok(files.includes('prebuilds/linux-x64/node.glibc.node') && files.includes('prebuilds/linux-arm64/node.glibc.node'), 'prebuilds for x64 and arm64');
  checkCommon(t, file, files);

  const pkg = JSON.parse(read(file, 'package.json'));
  const deps = Object.keys(pkg.dependencies ?? {});
  t.ok(deps.length <= 3, `at most three runtime dependencies (${deps.join(', ')})`);
  t.same(deps.filter((d) => /kubernetes/i.test(d)), [], 'none of them Kubernetes\'');
  t.same(Object.keys(pkg.scripts ?? {}).filter((s) => /^(pre|post)?install$|^prepare$/.test(s)), [], 'no install scripts: npm runs nothing and warns of nothing');
  t.equal(pkg.gypfile, false, 'and npm does not add node-gyp rebuild for binding.gyp');
  t.match(pkg.engines, { node: '>=22.12.0' }, 'engines: the maintained lines with require(esm)');
  t.same(pkg.exports['.'], { types: './dist/lib/index.d.ts', default: './dist/lib/index.js' }, 'one entry for import and require');
});

t.test('installing the library pulls in its dependencies and nothing else', async (t) => {
  const lock = JSON.parse(readFileSync(path.join(project('esm'), 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
  const installed = Object.keys(lock.packages).filter((k) => k.startsWith('node_modules/')).map((k) => k.replace(/^node_modules\//, '')).sort();
  t.same(installed, ['ipaddr.js', 'ipvs-netlink', 'node-addon-api', 'node-gyp-build']);
});

t.test('kube-proxy-ipvs: the proxy\'s compiled JavaScript, and no library inside', async (t) => {
  const file = tarball('kube-proxy-ipvs');
  const files = list(file);
  const libSources = sources('kube-proxy-ipvs/lib');
  const allowed = (f: string) => ['package.json', 'README.md', 'LICENSE'].includes(f) || (/^dist\/lib\/(.+)\.js$/.test(f) && libSources.includes(f.replace(/^dist\/lib\/|\.js$/g, '')));
  t.same(files.filter((f) => !allowed(f)), [], 'every file is on the allow-list');
  for (const s of libSources) t.ok(files.includes(`dist/lib/${s}.js`), `kube-proxy-ipvs/lib/${s}.ts ships`);
  checkCommon(t, file, files);
  const pkg = JSON.parse(read(file, 'package.json'));
  t.equal(pkg.dependencies['ipvs-netlink'], `^${JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')).version}`, 'depends on the library by version');
  t.match(pkg.bin, { 'kube-proxy-ipvs': './dist/lib/cli/main.js' });
  t.match(read(file, 'dist/lib/cli/main.js'), /^#!\/usr\/bin\/env -S node --max-semi-space-size=2\n/, 'the binary starts with its interpreter line (node and its heap flag)');
});
