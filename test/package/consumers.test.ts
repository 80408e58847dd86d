/**
 * The installed library used as people use it: an ES module project and a
 * CommonJS project, each using both `import` and `require` in one process
 * (one copy of each class either way), on Node.js 22 and 24 and Bun; and a
 * strict TypeScript consumer compiled against the installed declarations.
 * The installs themselves ran with no compiler on PATH (package-test.sh).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { project, repo, runtime } from './support/env.js';

const consumers = path.join(repo, 'test/package/consumers');
const run = (command: string[], cwd: string, file: string) => spawnSync(command[0]!, [...command.slice(1), file], { cwd, encoding: 'utf8', timeout: 120_000 });
// The entry's runtime exports (types aside): a change here is a change of the public API.
const expectedExports = [
  'Conntrack', 'ConntrackEventStream', 'GenerationChangedError', 'Ipset', 'IpsetBulkError', 'IpsetError', 'IpsetUnsupportedError', 'Ipvs', 'NetlinkError', 'Nftables',
  'NftablesEventStream', 'NftablesTransactionError', 'Rtnl', 'SET_TYPES', 'STATUS_FLAGS', 'dataTypes', 'formatList', 'formatRule', 'keyOf', 'pinNativeHeapThresholds', 'rulesetChanges',
  'trimNativeHeap',
];

t.test('the addon the installs use is the prebuild: nothing was compiled', async (t) => {
  for (const p of ['esm', 'cjs', 'types', 'proxy', 'tests']) {
    const pkg = path.join(project(p), 'node_modules/ipvs-netlink');
    t.ok(existsSync(path.join(pkg, 'prebuilds/linux-x64/node.glibc.node')), `${p}: prebuilds installed`);
    t.notOk(existsSync(path.join(pkg, 'build')), `${p}: no build/ folder`);
  }
});

for (const name of ['node22', 'node24', 'bun'] as const) {
  t.test(`${name}: import and require give the same library`, async (t) => {
    const rt = runtime(name);
    for (const [dir, file] of [['esm', 'consumer.mjs'], ['cjs', 'consumer.cjs'], ['esm', 'refusal.cjs'], ['cjs', 'refusal.cjs']] as const) {
      copyFileSync(path.join(consumers, file), path.join(project(dir), file));
    }
    for (const [dir, file] of [['esm', 'consumer.mjs'], ['cjs', 'consumer.cjs']] as const) {
      const r = run(rt.command, project(dir), file);
      t.equal(r.status, 0, `${dir}/${file} runs: ${r.stderr}`);
      t.equal(r.stderr, '', `${dir}/${file}: nothing on stderr (no warning)`);
      const report = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
      t.same(report.exports, expectedExports, `${dir}: the entry's exports`);
      t.equal(report.sameClasses, true, `${dir}: every export is the same object through import and require`);
      t.equal(report.address, true, `${dir}: ipvs-netlink/address loads`);
      t.match(report.error, /^(ENOENT|EPERM)$/, `${dir}: the kernel refused a call`);
      t.equal(report.instanceofImported, true, `${dir}: and its error is an instance of the other side's NetlinkError`);
    }
  });
}

t.test('a strict TypeScript consumer compiles against the installed declarations', async (t) => {
  const dir = project('types');
  for (const f of ['strict-consumer.mts', 'strict-consumer.cts', 'wrong-consumer.mts', 'tsconfig.strict.json']) copyFileSync(path.join(consumers, f), path.join(dir, f));
  const tsc = [process.execPath, path.join(dir, 'node_modules/typescript/bin/tsc')];
  const ok = spawnSync(tsc[0]!, [tsc[1]!, '-p', 'tsconfig.strict.json'], { cwd: dir, encoding: 'utf8' });
  t.equal(ok.status, 0, 'strict + exactOptionalPropertyTypes + noUncheckedIndexedAccess, no skipLibCheck');
  t.equal(ok.stdout, '', ok.stdout);
  const wrong = spawnSync(tsc[0]!, [tsc[1]!, '--strict', '--exactOptionalPropertyTypes', '--module', 'nodenext', '--target', 'es2022', '--types', 'node', '--noEmit', 'wrong-consumer.mts'], { cwd: dir, encoding: 'utf8' });
  t.not(wrong.status, 0, 'a program with a wrong protocol and an unknown field does not compile');
  t.match(wrong.stdout, /'"tcpp"' is not assignable/, 'the typo is caught by the package\'s types');
  t.match(wrong.stdout, /'schedular' does not exist/, 'so is the unknown field');
  for (const name of ['node22', 'node24'] as const) {
    const rt = runtime(name);
    const esm = run(rt.command, dir, 'out/strict-consumer.mjs');
    t.equal(esm.status, 0, `${name}: the compiled ES module runs: ${esm.stderr}`);
    t.match(JSON.parse(esm.stdout.trim() || '{}'), { address: true, error: /^(ENOENT|EPERM)$/ }, `${name}: and reads the kernel's refusal as a NetlinkError`);
    const cjs = run(rt.command, dir, 'out/strict-consumer.cjs');
    t.equal(cjs.status, 0, `${name}: the compiled CommonJS module runs (require of the ES module): ${cjs.stderr}`);
    t.same(JSON.parse(cjs.stdout.trim() || '{}'), { found: false }, `${name}: and its NetlinkError check works`);
  }
});
