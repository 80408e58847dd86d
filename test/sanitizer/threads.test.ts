/**
 * The addon's threads under ThreadSanitizer on this host's kernel:
 * handles-across-threads.mjs (ipset, rtnetlink, conntrack and nf_tables
 * handles used on the JavaScript thread while their jobs and a conntrack
 * event stream's reader run on others) run by a node process with the
 * sanitizer's runtime loaded and the addon built with it (scripts/
 * asan-test.sh host-tsan builds both and names them). IPVS, which this
 * kernel lacks, is threads-ipvs-qemu.test.ts, a nightly run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import t from 'tap';

import { freshNetns } from '../support/netns.js';
import { addon, noRaceInAddon, program, programEnv, run, runtime } from './tsan-reports.js';

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
