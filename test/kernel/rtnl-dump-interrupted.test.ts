/**
 * A dump the kernel marks inconsistent (NLM_F_DUMP_INTR: the table changed
 * between two chunks) is read again, so callers never get a torn list. The
 * address table sets the flag whenever an address changes mid-dump; another
 * process keeps changing one while we list 1,500 others.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { Rtnl } from '../../lib/index.js';
import { freshNetns } from '../support/netns.js';

t.test('interrupted address dumps are restarted and never torn', async (t) => {
  const ns = await freshNetns(t);
  const rt = await Rtnl.open({ netns: ns.path });
  t.teardown(() => rt.close());
  await rt.ensureDummyLink('dump0');
  const stable = Array.from({ length: 1500 }, (_, i) => `10.${100 + (i >> 8)}.${i & 255}.1`);
  const added = await rt.addAddresses('dump0', stable);
  t.equal(added.filter((r) => r.ok).length, stable.length, 'all stable addresses added');

  // Churn: add and delete one other address as fast as `ip -batch` can.
  const script = Array.from({ length: 400 }, () => 'addr add 10.250.0.1/32 dev dump0\naddr del 10.250.0.1/32 dev dump0\n').join('');
  const churn = spawn('ip', ['netns', 'exec', ns.name, 'sh', '-c', `while :; do printf '%s' "$0" | ip -batch - 2>/dev/null; done`, script], { stdio: 'ignore' });
  t.teardown(() => churn.kill('SIGKILL'));

  // Bounded by time, not by a number of dumps: on a sandbox kernel with one
  // CPU the churn runs only when the scheduler lets it, which under load can
  // be seldom, and the first dumps may pass before it has even started.
  const deadline = Date.now() + 90_000;
  let attempts = 0;
  while (rt.counters().dumpsRestarted === 0 && Date.now() < deadline) {
    attempts++;
    const listed = new Set((await rt.listAddresses('dump0')).map((a) => a.address));
    for (const a of stable) {
      if (!listed.has(a)) {
        t.fail(`dump ${attempts} lost ${a}`);
        return;
      }
    }
  }
  churn.kill('SIGKILL');
  t.ok(rt.counters().dumpsRestarted > 0, `the kernel interrupted a dump within 90 s (${attempts} attempts) and it was read again`);
  t.comment(`${attempts} dumps, ${rt.counters().dumpsRestarted} restarted`);
});
