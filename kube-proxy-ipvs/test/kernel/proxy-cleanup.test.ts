/**
 * `kube-proxy-ipvs --cleanup` leaves the kernel as it found it: after the
 * proxy ran and stopped, cleanup removes its virtual servers, ipsets,
 * kube-ipvs0 and KUBE-* chains, and keeps what others made (a virtual
 * server inside --ipvs-exclude-cidrs, a foreign ipset, foreign chains).
 */
import t from 'tap';
import { NODE_YAML, type ProxyNode, proxyNode, runCleanup, serviceYaml, sliceYaml, startProxy, writeManifest } from '../support/proxy-env.js';

/** iptables when it works here, else the legacy tools (the sandbox kernel has no nf_tables). */
async function iptablesTool(env: ProxyNode): Promise<string> {
  return (await env.node.tryExec('iptables-save', [])).code === 0 ? 'iptables' : 'iptables-legacy';
}

async function snapshot(env: ProxyNode) {
  const tool = await iptablesTool(env);
  const iptables = async () => {
    for (const save of [`${tool}-save`]) {
      const r = await env.node.tryExec(save, []);
      if (r.code === 0) return r.stdout.split('\n').filter((l) => l.startsWith(':') || l.startsWith('-A')).map((l) => l.replace(/\[\d+:\d+\]/, '')).sort();
    }
    return ['(no iptables)'];
  };
  return {
    ipvs: await env.ipvsSave(),
    ipsets: (await env.node.exec('ipset', ['list', '-n'])).split('\n').filter(Boolean).sort(),
    links: (await env.node.exec('ip', ['-o', 'link', 'show'])).split('\n').filter(Boolean).map((l) => l.split(':')[1].trim().split('@')[0]).sort(),
    iptables: await iptables(),
  };
}

t.test('--cleanup restores the kernel as it was before the proxy', async (t) => {
  const env = await proxyNode(t);
  // Someone else's state, made before the proxy ever ran.
  await env.node.exec('ipvsadm', ['-A', '-t', '10.99.0.1:443', '-s', 'wlc']);
  await env.node.exec('ipset', ['create', 'FOREIGN', 'hash:ip']);
  const iptables = await iptablesTool(env);
  for (const table of ['nat', 'filter']) {
    await env.node.exec(iptables, ['-t', table, '-N', 'FOREIGN-CHAIN']);
    await env.node.exec(iptables, ['-t', table, '-A', 'FOREIGN-CHAIN', '-j', 'RETURN']);
  }
  const before = await snapshot(env);

  await env.backend('10.244.1.10', 'web-1');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }]));
  const proxy = await startProxy(t, env, ['--manifests', env.dir, '--ipvs-exclude-cidrs', '10.99.0.0/16']);
  const running = await snapshot(env);
  t.ok(running.ipvs.length > before.ipvs.length, 'the proxy programmed virtual servers');
  t.ok(running.ipsets.includes('KUBE-CLUSTER-IP'), 'and its ipsets');
  t.ok(running.links.includes('kube-ipvs0'), 'and kube-ipvs0');
  t.ok(running.iptables.some((l) => l.startsWith(':KUBE-SERVICES')), 'and its chains');
  t.ok(running.ipvs.includes('-A -t 10.99.0.1:443 -s wlc'), 'the excluded virtual server was left alone');
  t.ok(running.iptables.includes('-A FOREIGN-CHAIN -j RETURN'), 'and the foreign chains');
  await proxy.stop();

  const r = await runCleanup(env, ['--ipvs-exclude-cidrs', '10.99.0.0/16']);
  t.equal(r.code, 0, `cleanup exits 0 ${r.stderr.slice(-500)}`);
  t.same(await snapshot(env), before, 'the kernel is as it was found');
  const again = await runCleanup(env, ['--ipvs-exclude-cidrs', '10.99.0.0/16']);
  t.equal(again.code, 0, 'cleanup on a clean node is a no-op that succeeds');
  t.same(await snapshot(env), before);
});
