/**
 * The library's own tests against the installed copy (package-test.sh
 * compiled them into tests/, where lib/ is the installed dist/lib and the
 * addon is the prebuild), one runtime per test file here
 * (library-tests-*.test.ts), so that each has its own time limit and its
 * own line in the results. Each file's TAP is a subtest, every assertion
 * shown. Under Bun, whose runtime tap cannot start on, the tests' `tap` is
 * support/tap-lite.mjs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { project, qemuArm64, repo, runtime } from './env.js';

const tests = project('tests');
export const files = (dir: string, prefix = '') =>
  readdirSync(path.join(tests, dir)).filter((f) => f.startsWith(prefix) && f.endsWith('.test.js')).sort().map((f) => path.join(dir, f));
// All the unit tests but those that type-check the repository's sources
// (and the README's examples) with the TypeScript compiler: compile time,
// not the runtime under test, and neither the sources nor the README are
// installed; consumers.test.ts compiles a strict consumer against the
// installed types.
export const typeOnly = ['test/unit/ipset-types.test.js', 'test/unit/ipvs-rtnl-types.test.js', 'test/unit/readme-snippets.test.js'];
export const unit = files('test/unit').filter((f) => !typeOnly.includes(f));
// The unit files that read the resident set (*-rss.test.js) to see what
// glibc's malloc gave back: only node on this machine's kernel shows it.
// Under qemu-user node reads a resident set of 0, and Bun's buffers come
// from its own allocator (nor does it take node's way to a collection).
export const readsResidentSet = (f: string) => f.endsWith('-rss.test.js');
// The files that measure their own process's memory (the resident set, or
// V8's heap in the leak tests): what earlier files left in the same process
// would blur it, so each has a process of its own.
const measuresOwnMemory = (f: string) => readsResidentSet(f) || f.endsWith('-leak.test.js');
export const hostIpset = files('test/kernel', 'ipset-');
// The unit files whose own imports are all of lib/util/: the library's plain
// JavaScript, the same code on every architecture and reaching no addon.
export const plainJavaScript = (f: string) =>
  [...readFileSync(path.join(tests, f), 'utf8').matchAll(/from '(\.[^']*)'/g)].every((m) => m[1]!.includes('/lib/util/'));
const support = path.join(repo, 'test/package/support');

export type RuntimeName = 'node22' | 'node24' | 'node24-arm64' | 'bun';

/** Runs FILES on the runtime NAME, each file's TAP a subtest of this file. */
export function suite(name: RuntimeName, list: string[], what: string): void {
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
  // A start of node, with tap loaded, costs seconds under qemu and about
  // two here: one process for the suite, but for the files that measure
  // their own memory. Bun starts in a fraction of that: one per file, as
  // tap runs them.
  if (rt.bun) {
    for (const f of list) start([f], `${f} on ${name}`);
    return;
  }
  const shared = list.filter((f) => !measuresOwnMemory(f));
  if (shared.length > 0) start(shared, `${what} on ${name}`);
  for (const f of list.filter(measuresOwnMemory)) start([f], `${f} on ${name}`);
}
