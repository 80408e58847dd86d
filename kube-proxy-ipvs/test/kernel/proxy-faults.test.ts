/**
 * The kernel pulled from under a running proxy:
 *
 *  - an operator flushes IPVS and reloads its modules (`ipvsadm -C;
 *    modprobe -r ip_vs_rr ... ip_vs; modprobe ip_vs ip_vs_rr ...`): the
 *    proxy logs the failed syncs while IPVS is gone, then its resync finds
 *    the table empty and programs it again (the library resolves the new
 *    generic netlink family id), the per-namespace IPVS sysctls the reload
 *    reset are set again, and traffic flows through the ClusterIP and the
 *    NodePort as before;
 *  - the --netns target is deleted: one structured error naming it,
 *    /healthz and /livez answer 503, syncing stops (no error loop, no CPU
 *    spin), and the process keeps running until told to stop.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import t from 'tap';
import { metricValue, NODE_YAML, proxyNode, serviceYaml, sliceYaml, startProxy, until, writeManifest } from '../support/proxy-env.js';

const run = promisify(execFile);
// Inside the sandbox the modules live under the tree run.sh links there.
const modprobe = (args: string[]) => run('modprobe', process.env.IPVS_NETLINK_KERNEL === 'sandbox' ? ['-d', '/run/sandbox-modroot', ...args] : args);

async function loadedIpvsModules(): Promise<string[]> {
  return readFileSync('/proc/modules', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((m) => m === 'ip_vs' || m.startsWith('ip_vs_') || m === 'xt_ipvs');
}

t.test('IPVS flushed and its modules reloaded under a running proxy: it reprograms and traffic flows again', async (t) => {
  const modules = await loadedIpvsModules();
  t.ok(modules.includes('ip_vs'), 'IPVS is a module here');
  t.teardown(() => modprobe(['-a', ...modules]).catch(() => undefined));
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }]));
  // A short sync period: the periodic resync is what finds the flushed table.
  const proxy = await startProxy(t, env, ['--manifests', env.dir, '--ipvs-sync-period', '3s']);
  const table = await env.ipvsSave();
  t.equal(await env.get(env.client, 'http://192.168.56.10:30080/'), 'web-1 10.244.1.10', 'NodePort answers before');

  // The operator's sequence. The proxy may re-add a virtual server between the flush and the unload
  // (its resync runs every 3 s), which makes modprobe -r fail with "in use": flush and try again, as
  // an operator would.
  const unloadOrder = [...modules.filter((m) => m !== 'ip_vs'), 'ip_vs'];
  for (let attempt = 1; ; attempt++) {
    await env.node.exec('ipvsadm', ['-C']);
    try {
      await modprobe(['-r', '-a', ...unloadOrder]);
      break;
    } catch (err) {
      if (attempt === 5) throw err;
    }
  }
  t.notOk((await loadedIpvsModules()).includes('ip_vs'), 'ip_vs is unloaded');
  const failedSyncs = () => proxy.log().split('"msg":"sync failed; retrying with a resync"').length - 1;
  const failedBefore = failedSyncs(); // a resync may have failed during the unload already
  await until('a resync that failed while IPVS is gone', () => failedSyncs() > failedBefore, 30_000);
  // The proxy held still from the reload to the read: a resync in between would set the sysctl again before the read.
  process.kill(proxy.child.pid!, 'SIGSTOP');
  try {
    await modprobe(['-a', ...modules]);
    t.same(await env.node.exec('sysctl', ['-n', 'net.ipv4.vs.conntrack']), '0\n', 'the reload reset the namespace\'s IPVS sysctls');
  } finally {
    process.kill(proxy.child.pid!, 'SIGCONT');
  }

  await until('the table is back', async () => JSON.stringify(await env.ipvsSave()) === JSON.stringify(table), 30_000);
  t.pass('the resync programmed every virtual and real server again');
  await until('sysctls set again', async () => (await env.node.exec('sysctl', ['-n', 'net.ipv4.vs.conntrack'])) === '1\n', 10_000);
  t.pass('net.ipv4.vs.conntrack is 1 again (masqueraded IPVS traffic needs it)');
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), 'web-1 10.244.1.10', 'ClusterIP answers after the reload');
  t.equal(await env.get(env.client, 'http://192.168.56.10:30080/'), 'web-1 10.244.1.10', 'NodePort from outside answers after the reload');
  const failures = proxy
    .log()
    .split('\n')
    .filter((l) => l.includes('"msg":"sync failed; retrying with a resync"'));
  t.ok(failures.length >= 1, `the syncs that failed while IPVS was gone were logged (${failures.length})`);
  const failure = JSON.parse(failures[0]) as Record<string, unknown>;
  t.match(failure, { kind: 'resync', err: String });
  t.notOk('v' in failure, 'an error line (JSON error lines carry no v)');
  await until('healthy again', async () => (await fetch(`${proxy.healthz}/healthz`)).status === 200);
  t.equal(await proxy.stop(), 0);
});

/** CPU seconds (user + system) the process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

t.test('the target network namespace deleted under a running proxy: a clear error, 503, no spinning', async (t) => {
  const env = await proxyNode(t);
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10'));
  const proxy = await startProxy(t, env, ['--manifests', env.dir, '--ipvs-sync-period', '2s']);
  t.equal((await fetch(`${proxy.healthz}/healthz`)).status, 200);
  await run('ip', ['netns', 'delete', env.node.name]);

  await until('the error', () => proxy.log().includes('the target network namespace is gone'), 10_000);
  const line = proxy
    .log()
    .split('\n')
    .find((l) => l.includes('the target network namespace is gone'))!;
  const gone = JSON.parse(line) as Record<string, unknown>;
  t.match(gone, { netns: env.node.path, reason: /no longer exists/ }, 'one structured error naming the namespace');
  t.notOk('v' in gone, 'logged as an error');
  t.equal((await fetch(`${proxy.healthz}/healthz`)).status, 503, '/healthz 503');
  t.equal((await fetch(`${proxy.healthz}/livez`)).status, 503, '/livez 503');

  // Nothing keeps trying: over 6 s (three sync periods) no sync runs and almost no CPU is used.
  const syncs = await metricValue(proxy, 'kubeproxy_sync_proxy_rules_duration_seconds_count');
  const errors = proxy.log().split('\n').filter((l) => l.includes('sync failed')).length;
  const cpu = cpuSeconds(proxy.child.pid!);
  await sleep(6000);
  const used = cpuSeconds(proxy.child.pid!) - cpu;
  t.equal(await metricValue(proxy, 'kubeproxy_sync_proxy_rules_duration_seconds_count'), syncs, 'no sync ran since');
  t.equal(proxy.log().split('\n').filter((l) => l.includes('sync failed')).length, errors, 'no failing retries either');
  // A retry loop without backoff would use most of a core (about 6 s here); idling with the
  // health and metrics servers up (and this test scraping them) stays well under 2 s in the sandbox.
  t.ok(used < 2, `the process idles (${used.toFixed(2)} CPU seconds in 6 s)`);
  t.equal(proxy.log().split('\n').filter((l) => l.includes('the target network namespace is gone')).length, 1, 'said once');
  t.equal(proxy.child.exitCode, null, 'still running, serving health and metrics');
  t.equal(await proxy.stop(), 0, 'stops cleanly on SIGTERM');
});
