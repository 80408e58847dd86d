/**
 * The addon's threads under ThreadSanitizer for IPVS, in the QEMU sandbox
 * kernel (the sanitizer cannot start in user-mode-linux, and this host's
 * kernel has no IPVS): handles-across-threads.mjs's IPVS part, a batch
 * applied and dumped while counters are read and a dump is closed as it
 * starts. Node starts slowly under both the sanitizer and emulation (this
 * file takes minutes), so it is a nightly run (scripts/nightly.sh, through
 * scripts/asan-test.sh qemu-tsan); CI runs threads.test.ts, the same
 * socket core's threads on this host's kernel.
 */
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';

import t from 'tap';

import { addon, noRaceInAddon, program, programEnv, root, run, runtime } from './tsan-reports.js';

t.test('IPVS in the QEMU sandbox kernel (the sanitizer cannot start in user-mode-linux): no data race in the addon', async (t) => {
  // Its logs go where the guest sees the host's files (its /tmp is its own).
  mkdirSync(path.join(root, '.sandbox'), { recursive: true });
  const logs = await mkdtemp(path.join(root, '.sandbox', 'tsan-logs-'));
  t.teardown(() => rm(logs, { recursive: true, force: true }));
  // The guest takes only some of the caller's environment: the run's goes in the command.
  const script = [
    'set -e',
    // lo up, as test/support/netns.ts leaves a namespace: the kernel refuses
    // a destination while the namespace has no routing table at all.
    'ip netns add tsan',
    'ip -n tsan link set lo up',
    `TSAN_OPTIONS=halt_on_error=0:report_signal_unsafe=0:exitcode=0:log_path=${logs}/tsan LD_PRELOAD=${runtime} IPVS_NETLINK_ADDON=${addon} node ${program} tsan ipvs`,
    "echo rules $(ip netns exec tsan ipvsadm -Sn | grep -c '^-a')",
  ].join('\n');
  const { stdout } = await run('bash', [path.join(root, 'scripts', 'with-kernel.sh'), 'bash', '-c', script], {
    cwd: root,
    env: { ...programEnv, WITH_KERNEL: 'qemu', SANDBOX_QUIET: '1' },
    maxBuffer: 16 << 20,
    timeout: 900_000,
  });
  const lines = stdout.trim().split('\n');
  const out = JSON.parse(lines.find((l) => l.startsWith('{')) as string);
  t.ok(out.sanitizer, "the program ran with ThreadSanitizer's runtime loaded");
  t.ok(out.reads > 10, `counters() was read while the jobs ran (${out.reads} times)`);
  t.equal(out.applied, 8_000, 'IPVS: every op of the apply succeeded');
  t.equal(out.dumpedDestinations, 6_000, 'IPVS: the dump read every destination back');
  t.ok(lines.includes('rules 6000'), 'ipvsadm -Sn lists the 6,000 destinations');
  t.equal(out.closedDump, 'EBADF', 'IPVS: a dump closed as it started ends EBADF');
  noRaceInAddon(t, logs);
});
