/**
 * The library's own tests against the installed copy (package-test.sh
 * compiled them into tests/, where lib/ is the installed dist/lib and the
 * addon is the prebuild): the unit tests on Node.js 22 and 24, on Node.js 24
 * for arm64 under qemu-user with the arm64 prebuild, and on Bun; the host
 * ipset kernel tests (root) on Node.js 22 and 24 and on Bun (all but the
 * leak test there, see below). Under Bun, whose runtime tap cannot start
 * on, the tests' `tap` is support/tap-lite.mjs.
 * Each file's TAP is a subtest here, every assertion shown.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { project, qemuArm64, repo, runtime } from './support/env.js';

const tests = project('tests');
const files = (dir: string, prefix = '') =>
  readdirSync(path.join(tests, dir)).filter((f) => f.startsWith(prefix) && f.endsWith('.test.js')).sort().map((f) => path.join(dir, f));
// All the unit tests but those that type-check the repository's sources
// with the TypeScript compiler (compile time, not the runtime under test;
// consumers.test.ts compiles a strict consumer against the installed types).
const typeOnly = ['test/unit/ipset-types.test.js', 'test/unit/ipvs-rtnl-types.test.js'];
const unit = files('test/unit').filter((f) => !typeOnly.includes(f));
const hostIpset = files('test/kernel', 'ipset-');
const support = path.join(repo, 'test/package/support');

function suite(name: 'node22' | 'node24' | 'node24-arm64' | 'bun', list: string[], what: string) {
  const rt = runtime(name);
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', TAP: '1' };
  const pre: string[] = [];
  if (rt.bun) pre.push('--no-install', '--preload', path.join(support, 'bun-tap.mjs'));
  if (name === 'node24-arm64') {
    const wrapper = path.join(tests, 'node-arm64');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${[...qemuArm64, rt.command.at(-1)].join(' ')} "$@"\n`, { mode: 0o755 });
    env.PACKAGE_TEST_EXEC_PATH = wrapper;
    pre.push('--import', path.join(support, 'exec-path.mjs'));
  }
  const [cmd, ...args] = rt.command;
  const start = (files: string[], label: string) => t.spawn(cmd!, [...args, ...pre, path.join(support, 'run-files.mjs'), ...files], { cwd: tests, env }, label);
  // Under qemu a start of node costs seconds: one process for the suite.
  // Elsewhere one per file, as tap runs them (the leak test measures its
  // own process's memory, which earlier files in the same process would blur).
  if (name === 'node24-arm64') start(list, `${what} on ${name}`);
  else for (const f of list) start([f], `${f} on ${name}`);
}

t.test('the suites were found', async (t) => {
  t.same(files('test/unit').filter((f) => typeOnly.includes(f)), typeOnly, 'the unit files left out are the type checks');
  t.ok(unit.length >= 5, `unit test files: ${unit.join(' ')}`);
  t.ok(hostIpset.length >= 5, `host ipset test files: ${hostIpset.join(' ')}`);
});
// Under qemu-user, all but the file that opens a conntrack socket: qemu-user
// translates only the netlink protocols it knows (route, audit, uevent)
// and refuses NETLINK_NETFILTER with EPROTONOSUPPORT, whatever the library.
const netfilterSocket = ['test/unit/conntrack-api.test.js'];
t.test('arm64 under qemu-user: the unit file left out is the one that opens a netfilter socket', async (t) => {
  t.same(unit.filter((f) => netfilterSocket.includes(f)), netfilterSocket);
});
for (const name of ['node22', 'node24', 'bun'] as const) suite(name, unit, 'unit tests');
suite('node24-arm64', unit.filter((f) => !netfilterSocket.includes(f)), 'unit tests');
suite('node22', hostIpset, 'host ipset kernel tests');
suite('node24', hostIpset, 'host ipset kernel tests');
// Bun: all but the leak test, whose memory measurement forces V8's garbage
// collector (v8.setFlagsFromString('--expose-gc')): Bun runs
// JavaScriptCore, which has no such flag, so there is nothing to measure with.
const leak = hostIpset.filter((f) => f.endsWith('ipset-leak.test.js'));
t.test('Bun: the one host ipset file left out is the V8 leak test', async (t) => {
  t.same(leak, ['test/kernel/ipset-leak.test.js']);
});
suite('bun', hostIpset.filter((f) => !leak.includes(f)), 'host ipset kernel tests but the V8 leak test');
