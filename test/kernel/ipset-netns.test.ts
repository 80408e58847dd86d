// Handles in other network namespaces, at the library level (Ipset here, on
// the host kernel and in the sandbox; Ipvs and Rtnl in ipvs-netns.test.ts):
//  - opened through /proc/PID/ns/net of a process alone in its namespace
//    (no /run/netns entry), the way a container's namespace is reached;
//  - the namespace deleted (`ip netns del`) under an open handle. The
//    socket keeps the namespace alive, but nothing else can reach it any
//    more, and a replacement socket cannot reopen the path. The behaviour
//    we want: every later call fails at once with a NetlinkError (ENOENT)
//    that names the namespace and says it is gone, whether the old socket
//    is still open or was replaced after a timeout, and also when a new
//    namespace was made under the same name; nothing hangs.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';

import { Ipset } from '../../lib/ipset/index.js';
import { NetlinkError } from '../../lib/netlink/errors.js';
import { createNetns, deleteNetns } from '../support/netns.js';

const run = promisify(execFile);

/** A process alone in a new network namespace; killed when the test ends. */
async function loneNamespace(t: { teardown(fn: () => unknown): void }): Promise<ChildProcess & { pid: number }> {
  const child = spawn('unshare', ['-n', 'sleep', '600'], { stdio: 'ignore' });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
  });
  // unshare execs sleep once the namespace exists: wait for the exec.
  for (let i = 0; i < 100; i++) {
    const exe = await readlink(`/proc/${child.pid}/exe`).catch(() => '');
    if (exe.endsWith('/sleep')) break;
    await sleep(20);
  }
  return child as ChildProcess & { pid: number };
}

/** Settles within 10 s, or fails the test: a call must never hang. */
async function settles<T>(p: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('the call did not settle within 10 s')), 10_000);
  });
  try {
    return { value: await Promise.race([p, guard]) };
  } catch (error) {
    return { error };
  } finally {
    clearTimeout(timer);
  }
}

const GONE = /network namespace \/run\/netns\/\S+ (is gone|no longer exists|was deleted)/;

t.test('a handle opened through /proc/PID/ns/net', async (t) => {
  const lone = await loneNamespace(t);
  const path = `/proc/${lone.pid}/ns/net`;
  const ipset = await Ipset.open({ netns: path });
  t.teardown(() => ipset.close());
  const name = `procns${process.pid}`;
  await ipset.create(name, 'hash:ip');
  await ipset.addMany(name, ['10.0.0.1', '10.0.0.2']);
  const inside = async (args: string[]) => (await run('nsenter', ['-t', String(lone.pid), '-n', 'ipset', ...args])).stdout;
  t.same((await inside(['save', name])).split('\n').filter((l) => l.startsWith('add ')).sort(), [`add ${name} 10.0.0.1`, `add ${name} 10.0.0.2`], 'the set is in that process namespace');
  t.same(await ipset.listNames(), [name], 'and the handle sees only that namespace');
  await t.rejects(run('ipset', ['list', '-n', name]), 'not in ours');
});

t.test('the namespace is deleted under an open handle: later calls fail clearly, none hangs', async (t) => {
  const ns = await createNetns('ipset');
  t.teardown(() => deleteNetns(ns));
  const ipset = await Ipset.open({ netns: ns.path, timeoutMs: 500 });
  t.teardown(() => ipset.close());
  // A second handle whose first socket never hears the kernel: its first
  // call times out and the socket is replaced.
  const replaced = await Ipset.open({ netns: ns.path, timeoutMs: 500, testDeafSockets: 1 } as never);
  t.teardown(() => replaced.close());
  await ipset.create('s', 'hash:ip');
  const first = await settles(replaced.listNames());
  t.match(first.error, { code: 'ETIMEDOUT' }, 'the deaf socket times out and is dropped: the next call needs a new one');
  await deleteNetns(ns);

  const next = await settles(ipset.add('s', '10.0.0.1'));
  t.type(next.error, NetlinkError, 'the next call on the still-open socket fails');
  t.match(next.error, { code: 'ENOENT', message: GONE }, 'saying the namespace is gone');

  const after = await settles(replaced.listNames());
  t.type(after.error, NetlinkError, 'the replacement cannot reopen the path');
  t.match(after.error, { code: 'ENOENT', message: GONE }, 'and says the namespace is gone');

  // The same name again is another namespace: the handle must not carry on
  // in the old one as if nothing happened.
  await run('ip', ['netns', 'add', ns.name]);
  t.teardown(() => run('ip', ['netns', 'delete', ns.name]).catch(() => undefined));
  const reused = await settles(ipset.listNames());
  t.match(reused.error, { code: 'ENOENT', message: GONE }, 'a new namespace under the old path is not the one the handle was opened in');
  const reopened = await settles(replaced.listNames());
  t.match(reopened.error, { code: 'ENOENT', message: GONE }, 'nor for a handle that would open a fresh socket there');
});
