/**
 * The kube-proxy-ipvs binary on a manifests folder, programming a fresh
 * network namespace: real requests reach the backends through a ClusterIP
 * (from the node) and a NodePort (from an outside client), and edits of
 * the manifests (scaling the endpoints down and up, deleting the Service)
 * are followed.
 */
import t from 'tap';
import { NODE_YAML, proxyNode, serviceYaml, sliceYaml, startProxy, until, writeManifest } from '../support/proxy-env.js';

t.test('ClusterIP and NodePort reach the backends; scaling and deletion are followed', async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'web-2');
  await env.backend('10.244.1.12', 'web-3');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }, { ip: '10.244.2.11', node: 'node-b' }]));
  const proxy = await startProxy(t, env, ['--manifests', env.dir]);

  t.same(await env.ipvsSave(), [
    '-A -t 10.96.0.10:80 -s rr',
    '-A -t 192.168.56.10:30080 -s rr',
    '-a -t 10.96.0.10:80 -r 10.244.1.10:8080 -m -w 1',
    '-a -t 10.96.0.10:80 -r 10.244.2.11:8080 -m -w 1',
    '-a -t 192.168.56.10:30080 -r 10.244.1.10:8080 -m -w 1',
    '-a -t 192.168.56.10:30080 -r 10.244.2.11:8080 -m -w 1',
  ]);
  const viaClusterIP = await env.getMany(env.node, 'http://10.96.0.10/', 4);
  t.same([...new Set(viaClusterIP)].sort(), ['web-1 10.244.1.10', 'web-2 10.244.2.11'], 'ClusterIP from the node: both backends');
  const viaNodePort = await env.getMany(env.client, 'http://192.168.56.10:30080/', 4);
  t.same([...new Set(viaNodePort)].sort(), ['web-1 10.244.1.10', 'web-2 10.244.2.11'], 'NodePort from outside: both backends');

  // Scale up to three.
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }, { ip: '10.244.2.11', node: 'node-b' }, { ip: '10.244.1.12' }]));
  await until('three real servers', async () => (await env.ipvsSave()).filter((l) => l.startsWith('-a -t 10.96.0.10:80')).length === 3);
  const three = await env.getMany(env.node, 'http://10.96.0.10/', 6);
  t.same([...new Set(three)].sort(), ['web-1 10.244.1.10', 'web-2 10.244.2.11', 'web-3 10.244.1.12'], 'scaled up: all three answer');

  // Scale down to one: idle real servers (no connections) are removed at once.
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.12' }]));
  await until('one real server', async () => (await env.ipvsSave()).filter((l) => l.startsWith('-a -t 10.96.0.10:80') && l.endsWith('-w 1')).length === 1);
  const one = await env.getMany(env.node, 'http://10.96.0.10/', 4);
  t.same([...new Set(one)], ['web-3 10.244.1.12'], 'scaled down: only the remaining backend answers');

  // Delete the Service: its virtual servers and the ClusterIP go.
  writeManifest(env, 'web.yaml', '');
  await until('no virtual servers', async () => (await env.ipvsSave()).length === 0);
  const addrs = await env.node.exec('ip', ['-4', '-o', 'addr', 'show', 'dev', 'kube-ipvs0']);
  t.notMatch(addrs, /10\.96\.0\.10/, 'the ClusterIP is unbound');
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), undefined, 'nothing answers');
  t.equal(await proxy.stop(), 0, 'exits 0 on SIGTERM');
});
