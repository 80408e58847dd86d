/**
 * Restarting the proxy interrupts nothing: the kernel state is left in
 * place when it stops, adopted (not flushed) when it starts again, and an
 * established connection through a ClusterIP keeps working across the
 * restart, on the same backend.
 */
import t from 'tap';
import { keepAliveClient, netlinkOps, NODE_YAML, proxyNode, serviceYaml, sliceYaml, startProxy, writeManifest } from '../support/proxy-env.js';

t.test('a restart flushes nothing and keeps an established connection', async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'web-2');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }, { ip: '10.244.2.11' }]));
  const first = await startProxy(t, env, ['--manifests', env.dir]);
  const firstOps = await netlinkOps(first);
  t.ok(firstOps['ipvs ok']! >= 6 && firstOps['ipset ok']! > 0 && firstOps['rtnl ok']! > 0, `the first start programmed everything over netlink (${JSON.stringify(firstOps)})`);
  const table = await env.ipvsSave();
  const sets = await env.node.exec('ipset', ['list', '-n']);
  const addrs = await env.node.exec('ip', ['-o', 'addr', 'show', 'dev', 'kube-ipvs0']);

  const ask = keepAliveClient(t, env, '10.96.0.10');
  const before = await ask();
  t.match(before, { body: /^web-\d/ }, 'answered through the ClusterIP');

  t.equal(await first.stop(), 0, 'stopped cleanly');
  t.same(await env.ipvsSave(), table, 'stopping leaves the virtual servers in place');
  const during = await ask();
  t.same({ ...during, reused: true }, { body: before.body, port: before.port, reused: true }, 'the connection works while no proxy runs');

  const second = await startProxy(t, env, ['--manifests', env.dir]);
  t.same(await env.ipvsSave(), table, 'the restarted proxy adopted the table: nothing flushed or re-added');
  t.equal(await env.node.exec('ipset', ['list', '-n']), sets, 'same ipsets');
  t.equal(await env.node.exec('ip', ['-o', 'addr', 'show', 'dev', 'kube-ipvs0']), addrs, 'same addresses');
  const after = await ask();
  t.same(after, { body: before.body, port: before.port, reused: true }, 'same connection, same backend after the restart');
  t.same(
    await netlinkOps(second),
    { 'ipvs ok': 0, 'ipvs error': 0, 'ipset ok': 0, 'ipset error': 0, 'rtnl ok': 0, 'rtnl error': 0 },
    'the restarted proxy sent no IPVS, ipset or address change at all (netlink operation counters)',
  );
  t.equal(await second.stop(), 0);
});
