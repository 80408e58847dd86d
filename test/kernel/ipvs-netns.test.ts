/**
 * Ipvs and Rtnl handles in other network namespaces (Ipset: see
 * ipset-netns.test.ts, which explains the behaviour we want when the
 * namespace is deleted):
 *  - opened through /proc/PID/ns/net of a process alone in its namespace;
 *  - the namespace deleted (`ip netns del`) under an open handle: every later
 *    call fails at once with a NetlinkError (ENOENT) naming the namespace
 *    and saying it is gone, before and after a forced socket replacement.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import t from 'tap';
import { Ipvs, NetlinkError, Rtnl } from '../../lib/index.js';
import { createNetns, deleteNetns } from '../support/netns.js';

const run = promisify(execFile);
const GONE = /network namespace \/run\/netns\/\S+ (is gone|no longer exists|was deleted)/;

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

t.test('Ipvs and Rtnl opened through /proc/PID/ns/net', async (t) => {
  const child = spawn('unshare', ['-n', 'sleep', '600'], { stdio: 'ignore' });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
  });
  for (let i = 0; i < 100 && !(await readlink(`/proc/${child.pid}/exe`).catch(() => '')).endsWith('/sleep'); i++) await sleep(20);
  const path = `/proc/${child.pid}/ns/net`;
  const inside = async (...args: string[]) => (await run('nsenter', ['-t', String(child.pid), '-n', ...args])).stdout;

  const rt = await Rtnl.open({ netns: path });
  t.teardown(() => rt.close());
  await rt.ensureDummyLink('d0');
  t.same((await rt.addAddresses('d0', ['10.0.1.1/24'])).map((r) => r.ok), [true]);
  t.match(await inside('ip', '-o', '-4', 'addr', 'show', 'dev', 'd0'), /inet 10\.0\.1\.1\/24/, 'ip in that namespace shows the address');

  const ipvs = await Ipvs.open({ netns: path });
  t.teardown(() => ipvs.close());
  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' });
  await ipvs.addDestination({ protocol: 'tcp', address: '10.0.0.1', port: 80 }, { address: '10.0.1.2', port: 80 });
  t.same((await inside('ipvsadm', '-Sn')).trim().split('\n'), ['-A -t 10.0.0.1:80 -s rr', '-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 1'], 'ipvsadm in that namespace shows the service');
  t.notMatch(await run('ipvsadm', ['-Sn']).then((r) => r.stdout), /10\.0\.0\.1:80/, 'ours does not');
});

t.test('the namespace is deleted under open Ipvs and Rtnl handles: later calls fail clearly, none hangs', async (t) => {
  const ns = await createNetns('ipvs');
  t.teardown(() => deleteNetns(ns));
  const ipvs = await Ipvs.open({ netns: ns.path, timeoutMs: 500 });
  t.teardown(() => ipvs.close());
  const deafIpvs = await Ipvs.open({ netns: ns.path, timeoutMs: 500, testDeafSockets: 1 } as never);
  t.teardown(() => deafIpvs.close());
  const rt = await Rtnl.open({ netns: ns.path, timeoutMs: 500 });
  t.teardown(() => rt.close());
  await ipvs.addService({ protocol: 'tcp', address: '10.0.0.1', port: 80, scheduler: 'rr' });
  t.match((await settles(deafIpvs.listServices())).error, { code: 'ETIMEDOUT' }, 'a deaf socket times out and is dropped: the next call needs a new one');
  await deleteNetns(ns);

  for (const [what, call] of [
    ['listServices', () => ipvs.listServices()],
    ['addService', () => ipvs.addService({ protocol: 'tcp', address: '10.0.0.2', port: 80 })],
    ['Rtnl listAddresses', () => rt.listAddresses()],
  ] as const) {
    const r = await settles<unknown>(call());
    t.type(r.error, NetlinkError, `${what}: fails`);
    t.match(r.error, { code: 'ENOENT', message: GONE }, `${what}: saying the namespace is gone`);
  }
  const after = await settles(deafIpvs.listServices());
  t.type(after.error, NetlinkError, 'the replacement cannot reopen the path');
  t.match(after.error, { code: 'ENOENT', message: GONE }, 'and says the namespace is gone');
});
