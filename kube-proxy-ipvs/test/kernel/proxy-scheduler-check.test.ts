/**
 * --ipvs-scheduler is checked by the kernel when the IPVS proxier starts,
 * as upstream's CanUseIPVSProxier: a dummy virtual server
 * 198.51.100.0:20000/TCP is added with the scheduler and deleted again.
 * With the real binary and `ipvsadm -Sn` as the witness:
 *  - a scheduler this kernel has not got (user-mode-linux 6.1 builds every
 *    scheduler but ip_vs_twos) and a name no kernel has: exit 1 with
 *    upstream's "can't use the IPVS proxier: no such file or directory"
 *    and our hint, --init-only included; nothing in the IPVS table;
 *  - one it has: the proxy starts and programs with it, and no dummy is
 *    left (198.51.100.0/24 is excluded, so the proxy's own syncs would not
 *    remove a leftover either); --init-only exits 0 with the table empty,
 *    having said so once per family.
 */
import t from 'tap';
import { NODE_YAML, proxyNode, runBinary, serviceYaml, sliceYaml, startProxy, writeManifest, type ProxyNode } from '../support/proxy-env.js';

async function manifests(t: Parameters<typeof proxyNode>[0]): Promise<ProxyNode> {
  const env = await proxyNode(t);
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10'));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }]));
  return env;
}

const oneShot = (env: ProxyNode, args: string[]) =>
  runBinary([], ['--manifests', env.dir, '--hostname-override', 'node-a', '--netns', env.node.path, '--healthz-bind-address', '', '--metrics-bind-address', '', ...args]);

t.test('a scheduler the kernel has not got: the start fails as upstream, exit 1, nothing in the IPVS table', async (t) => {
  const env = await manifests(t);
  const r = await oneShot(env, ['--ipvs-scheduler', 'twos']);
  t.equal(r.code, 1, 'exit 1');
  t.match(
    r.stderr,
    /can't use the IPVS proxier: no such file or directory \(--ipvs-scheduler \(ipvs\.scheduler\) \\"twos\\": the kernel has no IPVS scheduler of that name: module ip_vs_twos is not loaded and could not be loaded; load it on the node \(modprobe ip_vs_twos\) or choose another scheduler\)/,
  );
  t.same(await env.ipvsSave(), [], 'ipvsadm -Sn: no virtual server, the dummy included');
  t.equal((await env.node.tryExec('ip', ['link', 'show', 'kube-ipvs0'])).code, 1, 'nothing programmed: no kube-ipvs0');

  const init = await oneShot(env, ['--ipvs-scheduler', 'fastest', '--init-only']);
  t.equal(init.code, 1, '--init-only makes the proxier too: exit 1');
  t.match(init.stderr, /can't use the IPVS proxier: no such file or directory \(--ipvs-scheduler \(ipvs\.scheduler\) \\"fastest\\": the kernel has no IPVS scheduler of that name \(no module ip_vs_fastest\); Linux's IPVS schedulers are rr, /);
  t.same(await env.ipvsSave(), [], 'ipvsadm -Sn still shows nothing');
});

t.test('a scheduler the kernel has: the proxy starts with it, and no dummy virtual server is left', async (t) => {
  const env = await manifests(t);
  const init = await oneShot(env, ['--ipvs-scheduler', 'sh', '--init-only', '-v', '1']);
  t.equal(init.code, 0, `--init-only exits 0 (${init.stderr.slice(-300)})`);
  t.same(await env.ipvsSave(), [], 'ipvsadm -Sn: the dummy was deleted (--init-only programs nothing else)');
  const initialized = init.stderr.split('\n').filter((l) => l.includes('"System initialized and --init-only specified"'));
  t.same(initialized.map((l) => /ipFamily="([^"]*)"/.exec(l)?.[1]), ['IPv4', 'IPv6'], "once per family, with the family, as each family's NewProxier says it (this host serves both)");
  t.match(init.stderr, /"Using ipvs Proxier"/, 'the mode');
  t.match(init.stderr, /"Changed sysctl" name="net\/ipv4\/vs\/conntrack" before=0 after=1/, 'a sysctl it changed in the fresh namespace, as EnsureSysctl logs it (at V(1): -v 1)');
  t.equal((await env.node.exec('sysctl', ['-n', 'net.ipv4.vs.conntrack'])).trim(), '1', 'sysctl reads it back');

  await env.backend('10.244.1.10', 'web-1');
  const proxy = await startProxy(t, env, ['--manifests', env.dir, '--ipvs-scheduler', 'sh', '--ipvs-exclude-cidrs', '198.51.100.0/24']);
  const table = await env.ipvsSave();
  t.ok(table.includes('-A -t 10.96.0.10:80 -s sh'), `the Service's virtual server uses sh (${table.join(' | ')})`);
  t.notOk(
    table.some((l) => l.includes('198.51.100.0')),
    'no dummy virtual server 198.51.100.0:20000, though the proxy leaves 198.51.100.0/24 alone',
  );
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), 'web-1 10.244.1.10', 'and it serves');
  t.equal(await proxy.stop(), 0, 'stops cleanly');
});
