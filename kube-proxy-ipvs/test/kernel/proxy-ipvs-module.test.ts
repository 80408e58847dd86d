/**
 * A node where nothing loaded ip_vs, on a kernel that does not load it on
 * demand (before 5.16): kube-proxy's IPVS library runs `modprobe -va ip_vs`
 * when it makes its handle, so upstream starts there; so does ours, which
 * runs it when opening IPVS finds no family, then opens again.
 *
 * Every IPVS module is unloaded for this file and the kernel's module
 * helper (kernel.modprobe) is a script that, as such a kernel, finds
 * nothing for the IPVS family's alias, loads the IPVS modules (the
 * scheduler the start-up check asks for; in the sandbox from its module
 * tree) and hands every other request to the helper it replaced. The
 * proxy's own `modprobe` is a script first on its PATH that records how it
 * was run; `/proc/modules` and `ipvsadm` are the witnesses.
 *
 * The files after this one share its kernel, so it ends by putting the
 * modules back as they were, and checks that: a module the start had the
 * kernel load and left loaded (nf_tables, for one, makes iptables pick its
 * nft flavour) changed what the next files found.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { NODE_YAML, proxyNode, runBinary, writeManifest } from '../support/proxy-env.js';
import { scratchDir } from '../support/scratch.js';

const run = promisify(execFile);
const sandbox = process.env.IPVS_NETLINK_KERNEL === 'sandbox';
// Inside the sandbox the modules live under the tree its boot links there.
const MODROOT = sandbox ? ['-d', '/run/sandbox-modroot'] : [];
const modprobe = (args: string[]) => run('modprobe', [...MODROOT, ...args]);

const allLoaded = () =>
  readFileSync('/proc/modules', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((m) => m !== '');
const loaded = () => allLoaded().filter((m) => m === 'ip_vs' || m.startsWith('ip_vs_') || m === 'xt_ipvs');

/** Unloads what was added since `before` and loads what went missing; the difference left, both ways. */
async function restoreModules(before: string[]): Promise<{ missing: string[]; added: string[] }> {
  // One at a time, newest first (/proc/modules lists the latest first): a module another added one uses goes after it.
  for (const m of allLoaded().filter((m) => !before.includes(m))) await modprobe(['-r', m]).catch(() => undefined);
  const now = () => new Set(allLoaded());
  const missing = before.filter((m) => !now().has(m));
  if (missing.length > 0) await modprobe(['-a', ...missing]).catch(() => undefined);
  const after = now();
  return { missing: before.filter((m) => !after.has(m)), added: [...after].filter((m) => !before.includes(m)) };
}

/** A folder with a `modprobe` that appends its arguments to `calls` and then runs `body`. */
function fakeModprobe(body: string): { bin: string; calls: string } {
  const bin = scratchDir('modprobe-');
  const calls = join(bin, 'calls');
  writeFileSync(calls, '');
  writeFileSync(join(bin, 'modprobe'), `#!/bin/sh\necho "$*" >> ${calls}\n${body}\n`, { mode: 0o755 });
  return { bin, calls };
}

t.test('ip_vs not loaded and not loaded on demand: the start runs modprobe -va ip_vs, as upstream', async (t) => {
  const before = allLoaded();
  const modules = loaded();
  t.ok(modules.includes('ip_vs'), `IPVS is a module here (${modules.join(' ')})`);
  const helper = readFileSync('/proc/sys/kernel/modprobe', 'utf8').trim();
  let restored = false;
  t.teardown(async () => {
    writeFileSync('/proc/sys/kernel/modprobe', helper);
    if (!restored) await restoreModules(before);
  });
  // The kernel's helper as a kernel before 5.16 has it: nothing answers for the IPVS family's alias.
  const kernelHelper = join(scratchDir('kmod-'), 'modprobe');
  writeFileSync(
    kernelHelper,
    `#!/bin/sh\ncase "$*" in\n*family-IPVS*) exit 1;;\n*ip_vs*) exec modprobe ${MODROOT.join(' ')} "$@";;\nesac\nexec ${helper} "$@"\n`,
    { mode: 0o755 },
  );
  writeFileSync('/proc/sys/kernel/modprobe', kernelHelper);

  const env = await proxyNode(t);
  writeManifest(env, 'node.yaml', NODE_YAML);
  await env.node.exec('ipvsadm', ['-C']).catch(() => undefined);
  await modprobe(['-r', '-a', ...modules.filter((m) => m !== 'ip_vs'), 'ip_vs']);
  t.same(loaded(), [], 'every IPVS module unloaded');
  const initOnly = (bin: string) =>
    runBinary(['env', `PATH=${bin}:${process.env.PATH}`], ['--init-only', '--manifests', env.dir, '--hostname-override', 'node-a', '--netns', env.node.path, '--healthz-bind-address', '', '--metrics-bind-address', '']);

  const missing = fakeModprobe('echo "modprobe: FATAL: Module ip_vs not found in directory /lib/modules/$(uname -r)" >&2\nexit 1');
  const refused = await initOnly(missing.bin);
  t.equal(refused.code, 1, 'modprobe finds no module: the start fails');
  t.equal(readFileSync(missing.calls, 'utf8'), '-va ip_vs\n', 'after running modprobe -va ip_vs once');
  t.match(refused.stderr, /"Running modprobe ip_vs failed" message="modprobe: FATAL: Module ip_vs not found[^"]*" error="exit status 1"/, "logged as upstream's IPVS library logs it");
  t.match(refused.stderr, /IPVS is not available: .*modprobe ip_vs/, 'then the open\'s own error, saying what to do');
  t.same(loaded(), [], 'nothing loaded');

  const real = fakeModprobe(`exec /sbin/modprobe ${MODROOT.join(' ')} "$@"`);
  const started = await initOnly(real.bin);
  t.equal(started.code, 0, `modprobe loads it: --init-only completes (${started.stderr.slice(-400)})`);
  t.equal(readFileSync(real.calls, 'utf8'), '-va ip_vs\n', 'modprobe -va ip_vs, once');
  t.match(started.stderr, /"IPVS was not loaded: loaded it with modprobe ip_vs"/);
  t.ok(loaded().includes('ip_vs'), '/proc/modules lists ip_vs');
  t.ok(loaded().includes('ip_vs_rr'), 'and the start-up check had the kernel load its scheduler');
  t.same((await env.node.exec('ipvsadm', ['-Sn'])).trim(), '', 'ipvsadm reads the (empty) table: the dummy virtual server was added and deleted');

  const again = fakeModprobe('exit 1');
  const loadedAlready = await initOnly(again.bin);
  t.equal(loadedAlready.code, 0, 'with ip_vs loaded');
  t.equal(readFileSync(again.calls, 'utf8'), '', 'modprobe is not run');

  writeFileSync('/proc/sys/kernel/modprobe', helper);
  restored = true;
  t.same(await restoreModules(before), { missing: [], added: [] }, "the kernel's modules are as this file found them");
});
