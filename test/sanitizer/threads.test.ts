/**
 * The addon's threads under ThreadSanitizer: test/sanitizer/
 * handles-across-threads.mjs (handles used on the JavaScript thread while
 * their jobs and a conntrack event stream's reader run on others) run by a
 * node process with the sanitizer's runtime loaded and the addon built with it
 * (scripts/asan-test.sh host-tsan builds it and names it in
 * IPVS_NETLINK_TSAN_ADDON).
 *
 * node itself is not built with the sanitizer, so V8's own threads are
 * reported too (their atomics are invisible to it); a report fails the
 * test only when the addon's own code makes one of the racing accesses.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import t from 'tap';

import { freshNetns } from '../support/netns.js';

const run = promisify(execFile);
const addon = process.env.IPVS_NETLINK_TSAN_ADDON;
const runtime = process.env.IPVS_NETLINK_TSAN_RUNTIME;
const program = path.join(import.meta.dirname, 'handles-across-threads.mjs');

if (!addon || !runtime) throw new Error('run this file with scripts/asan-test.sh host-tsan: it builds the addon with ThreadSanitizer and names it and the runtime');

t.test("the addon's threads while the JavaScript thread uses the same handles: no data race in the addon", async (t) => {
  const ns = await freshNetns(t, 'tsan');
  const logs = await mkdtemp(path.join(tmpdir(), 'ipvs-netlink-tsan-'));
  t.teardown(() => rm(logs, { recursive: true, force: true }));
  const { stdout } = await run(process.execPath, [program, ns.name], {
    env: {
      ...process.env,
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
  t.ok(out.reads > 100, `counters() was read while the jobs ran (${out.reads} times)`);

  t.ok(out.timedOut, 'ipset: the first call timed out on its deaf socket (so a job replaced the socket)');
  t.equal(out.added, 20_000, 'ipset: the load went in whole');
  t.match(await ns.exec('ipset', ['list', '-t', 'load']), /Number of entries: 20000/, 'ipset list -t counts every entry');
  t.equal(out.closedWhileWaiting, 'ETIMEDOUT', 'ipset: a call close() came during waited for its answer, which never came, to its timeout');
  t.ok(out.ipsetCounters.messagesSent > 0 && out.ipsetCounters.messagesReceived > 0, 'ipset: the counters counted');

  t.equal(out.addressesAdded, 2_000, 'rtnetlink: every address added');
  t.equal(out.addressesListed, 2_000, 'rtnetlink: and listed back');
  const shown = (await ns.exec('ip', ['-o', '-4', 'addr', 'show', 'dev', 'lo'])).split('\n').filter((l) => / inet 10\./.test(l));
  t.equal(shown.length, 2_000, 'ip addr shows the 2,000 addresses');

  t.equal(out.eventsSeen, 300, 'conntrack: a new event for each entry the tool created');
  t.equal(out.conntrackCount, 0, 'conntrack: the tool deleted them all while the stream was closed');

  const reports = readdirSync(logs)
    .map((f) => readFileSync(path.join(logs, f), 'utf8'))
    .join('\n')
    .split(/^={18}$/m)
    .filter((r) => r.includes('WARNING: ThreadSanitizer'));
  const ours = reports.filter(racesInAddon);
  if (ours.length) t.comment(`the addon's frames are offsets: addr2line -f -C -e ${addon} OFFSET names them`);
  t.same(ours, [], `no race in the addon's own code (${reports.length - ours.length} about node's own threads, ignored)`);
});

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
