/**
 * The addon's threads under ThreadSanitizer: test/sanitizer/
 * handles-across-threads.mjs (handles used on the JavaScript thread while
 * their jobs and a conntrack event stream's reader run on others) run by a
 * node process with the sanitizer's runtime loaded and the addon built with it
 * (scripts/asan-test.sh host-tsan builds it and names it in
 * IPVS_NETLINK_TSAN_ADDON): ipset, rtnetlink and conntrack on this host's
 * kernel, IPVS in the QEMU sandbox kernel (node starts slowly under both
 * the sanitizer and emulation).
 *
 * node itself is not built with the sanitizer, so V8's own threads are
 * reported too (their atomics are invisible to it); a report fails the
 * test only when the addon's own code makes one of the racing accesses.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import t, { type Test } from 'tap';

import { freshNetns } from '../support/netns.js';

const run = promisify(execFile);
const addon = process.env.IPVS_NETLINK_TSAN_ADDON;
const runtime = process.env.IPVS_NETLINK_TSAN_RUNTIME;
const program = path.join(import.meta.dirname, 'handles-across-threads.mjs');
const root = path.join(import.meta.dirname, '..', '..');

/**
 * The environment for the program: tap's own settings left out (its
 * NODE_OPTIONS loads tap's process recorder, which would count the
 * program, and in the QEMU guest its coverage too, as part of this test).
 */
const programEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && k !== 'NODE_V8_COVERAGE' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')));

if (!addon || !runtime) throw new Error('run this file with scripts/asan-test.sh host-tsan: it builds the addon with ThreadSanitizer and names it and the runtime');

t.test("ipset, rtnetlink, conntrack and nf_tables on this host's kernel: no data race in the addon", async (t) => {
  const ns = await freshNetns(t, 'tsan');
  const logs = await mkdtemp(path.join(tmpdir(), 'ipvs-netlink-tsan-'));
  t.teardown(() => rm(logs, { recursive: true, force: true }));
  const { stdout } = await run(process.execPath, [program, ns.name], {
    env: {
      ...programEnv,
      LD_PRELOAD: runtime,
      IPVS_NETLINK_ADDON: addon,
      // Every report, not only the first (node's own come first), to the log.
      TSAN_OPTIONS: `halt_on_error=0:report_signal_unsafe=0:exitcode=0:log_path=${logs}/tsan`,
    },
    maxBuffer: 16 << 20,
    timeout: 240_000,
  });
  const out = JSON.parse(stdout.trim().split('\n').pop() as string);
  t.ok(out.sanitizer, "the program ran with ThreadSanitizer's runtime loaded");
  t.ok(out.reads > 10, `counters() was read while the jobs ran (${out.reads} times)`);

  t.ok(out.timedOut, 'ipset: the first call timed out on its deaf socket (so a job replaced the socket)');
  t.equal(out.added, 20_000, 'ipset: the load went in whole');
  t.match(await ns.exec('ipset', ['list', '-t', 'load']), /Number of entries: 20000/, 'ipset list -t counts every entry');
  t.equal(out.closedWhileWaiting, 'ETIMEDOUT', 'ipset: a call closed while it waited for an answer that never came still ends at its timeout');
  t.ok(out.ipsetCounters.messagesSent > 0 && out.ipsetCounters.messagesReceived > 0, 'ipset: the counters counted');

  t.equal(out.addressesAdded, 2_000, 'rtnetlink: every address added');
  t.equal(out.addressesListed, 2_000, 'rtnetlink: and listed back');
  const shown = (await ns.exec('ip', ['-o', '-4', 'addr', 'show', 'dev', 'lo'])).split('\n').filter((l) => / inet 10\./.test(l));
  t.equal(shown.length, 2_000, 'ip addr shows the 2,000 addresses');

  t.equal(out.eventsSeen, 300, 'conntrack: a new event for each entry the tool created');
  t.equal(out.conntrackCount, 0, 'conntrack: the tool deleted them all while the stream was closed');
  t.equal(out.elementsAnnounced, 500, "nf_tables: the tool's transaction announced, every element");
  t.equal(out.tablesAfterClose, 50, 'nf_tables: the tool went on committing while the stream was closed');

  noRaceInAddon(t, logs);
});

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

/** Fails `t` on each report in `logs` whose race is the addon's own. */
function noRaceInAddon(t: Test, logs: string): void {
  const reports = readdirSync(logs)
    .map((f) => readFileSync(path.join(logs, f), 'utf8'))
    .join('\n')
    .split(/^={18}$/m)
    .filter((r) => r.includes('WARNING: ThreadSanitizer'));
  const ours = reports.filter(racesInAddon);
  if (ours.length) t.comment(`the addon's frames are offsets: addr2line -f -C -e ${addon} OFFSET names them`);
  t.same(ours, [], `no race in the addon's own code (${reports.length - ours.length} about node's own threads, ignored)`);
}

/**
 * Whether one of a report's two racing accesses ("Write of size 8 at ... by
 * thread T9:", "Previous read ...") is made by the addon's own code: the
 * first frame of that stack outside the sanitizer's runtime (its
 * interceptors of memcpy and the like come first) is in the addon. The
 * addon shows up in other stacks too: where a thread was created (its first
 * job starts libuv's workers), where memory was allocated, and under V8's
 * own accesses when the addon called into V8; none of those say who raced.
 */
function racesInAddon(report: string): boolean {
  const accesses = report.split(/\n\s*\n/).filter((p) => /^(Previous )?(atomic )?(read|write)\b/i.test(p.trimStart()));
  return accesses.some((stack) => {
    const first = stack.split('\n').find((line) => /^\s*#\d/.test(line) && !line.includes('libtsan'));
    return first !== undefined && first.includes('ipvs_netlink.node');
  });
}
