/**
 * The kube-proxy-ipvs binary on a manifests folder, programming a fresh
 * network namespace: real requests reach the backends through a ClusterIP
 * (from the node) and a NodePort (from an outside client), and edits of
 * the manifests (scaling the endpoints down and up, deleting the Service)
 * are followed. Then every other way in from outside: a LoadBalancer
 * ingress VIP and an externalIP (masqueraded: the backend sees the node),
 * and externalTrafficPolicy: Local on all three external paths (only the
 * node-local endpoint, which sees the client's own address: no SNAT).
 */
import t from 'tap';
import { externalServiceYaml, NODE_YAML, proxyNode, serviceHealth, serviceYaml, sliceYaml, startProxy, until, writeManifest } from '../support/proxy-env.js';

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

const CLIENT_IP = '192.168.56.100';

t.test('LoadBalancer VIP, externalIP, and externalTrafficPolicy: Local (node-local endpoints, client address kept)', async (t) => {
  const env = await proxyNode(t);
  // The outside client reaches the LB and external IPs through the node, as a router would send them.
  await env.client.exec('ip', ['route', 'add', 'default', 'via', '192.168.56.10']);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'web-2');
  await env.backend('10.244.1.12', 'local-1');
  await env.backend('10.244.2.13', 'remote-1');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'lb.yaml', externalServiceYaml({ name: 'lb', clusterIP: '10.96.0.20', nodePort: 30081, lbIP: '203.0.113.10', externalIP: '198.51.100.20' }));
  writeManifest(env, 'lb-slice.yaml', sliceYaml('lb', [{ ip: '10.244.1.10' }, { ip: '10.244.2.11', node: 'node-b' }]));
  writeManifest(env, 'local.yaml', externalServiceYaml({ name: 'local', clusterIP: '10.96.0.30', nodePort: 30082, lbIP: '203.0.113.30', externalIP: '198.51.100.30', local: true, healthCheckNodePort: 32001 }));
  writeManifest(env, 'local-slice.yaml', sliceYaml('local', [{ ip: '10.244.1.12' }, { ip: '10.244.2.13', node: 'node-b' }]));
  const proxy = await startProxy(t, env, ['--manifests', env.dir]);

  const table = await env.ipvsSave();
  for (const vip of ['203.0.113.30:80', '198.51.100.30:80', '192.168.56.10:30082']) {
    t.same(table.filter((l) => l.startsWith(`-a -t ${vip} `)), [`-a -t ${vip} -r 10.244.1.12:8080 -m -w 1`], `ETP=Local ${vip}: only the node-local endpoint`);
  }
  t.equal(table.filter((l) => l.startsWith('-a -t 10.96.0.30:80 ')).length, 2, 'its ClusterIP (internal traffic policy Cluster) keeps both');
  const bound = await env.node.exec('ip', ['-4', '-o', 'addr', 'show', 'dev', 'kube-ipvs0']);
  for (const vip of ['203.0.113.10', '198.51.100.20', '203.0.113.30', '198.51.100.30']) t.match(bound, new RegExp(`inet ${vip.replace(/\./g, '\\.')}/32`), `${vip} bound to kube-ipvs0`);

  // ETP=Cluster: both backends answer through the LB VIP and the externalIP, and see the node (masquerade), not the client.
  for (const [what, url] of [['LoadBalancer VIP', 'http://203.0.113.10/source'], ['externalIP', 'http://198.51.100.20/source']]) {
    const answers = await env.getMany(env.client, url, 6);
    t.same([...new Set(answers)].sort(), ['web-1 10.244.1.10 from 10.244.1.1', 'web-2 10.244.2.11 from 10.244.2.1'], `${what}, ETP=Cluster: both backends, source masqueraded to the node`);
  }
  // ETP=Local: the local endpoint only, and it sees the client itself.
  for (const [what, url] of [
    ['LoadBalancer VIP', 'http://203.0.113.30/source'],
    ['externalIP', 'http://198.51.100.30/source'],
    ['NodePort', 'http://192.168.56.10:30082/source'],
  ]) {
    const answers = await env.getMany(env.client, url, 4);
    t.same([...new Set(answers)], [`local-1 10.244.1.12 from ${CLIENT_IP}`], `${what}, ETP=Local: only the node-local endpoint, which sees the client's real address`);
  }
  // The load balancer's health check: the node's health-check node port, on its address, in its namespace.
  const healthCheck = () => serviceHealth(env.client, 'http://192.168.56.10:32001/');
  await until('the health check node port', async () => (await healthCheck()).code === 200);
  t.same(await healthCheck(), { code: 200, localEndpoints: 1 }, 'health-check node port on the node address answers 200 with one local endpoint');
  const internal = await env.getMany(env.node, 'http://10.96.0.30/', 6);
  t.same([...new Set(internal)].sort(), ['local-1 10.244.1.12', 'remote-1 10.244.2.13'], 'the same Service through its ClusterIP: both endpoints');

  // Scale the Local service: a second local endpoint joins the external paths; losing it leaves one.
  await env.backend('10.244.1.14', 'local-2');
  writeManifest(env, 'local-slice.yaml', sliceYaml('local', [{ ip: '10.244.1.12' }, { ip: '10.244.2.13', node: 'node-b' }, { ip: '10.244.1.14' }]));
  await until('two local endpoints', async () => (await env.ipvsSave()).filter((l) => l.startsWith('-a -t 203.0.113.30:80 ')).length === 2);
  const two = await env.getMany(env.client, 'http://203.0.113.30/source', 6);
  t.same([...new Set(two)].sort(), [`local-1 10.244.1.12 from ${CLIENT_IP}`, `local-2 10.244.1.14 from ${CLIENT_IP}`], 'scaled up: both local endpoints, still no SNAT');
  await until('two local endpoints in the health check', async () => (await healthCheck()).localEndpoints === 2);
  // Only node-b's endpoint left: the health check says 503 so the load balancer skips this node.
  writeManifest(env, 'local-slice.yaml', sliceYaml('local', [{ ip: '10.244.2.13', node: 'node-b' }]));
  await until('no local endpoint', async () => (await healthCheck()).code === 503);
  t.same(await healthCheck(), { code: 503, localEndpoints: 0 }, 'no local endpoint: 503');
  t.equal(await proxy.stop(), 0);
});
