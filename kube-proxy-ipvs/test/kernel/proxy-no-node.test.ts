/**
 * The binary on a node whose Node object does not exist (a new node, a
 * manifests folder without one), with an IPv4 and an IPv6 Service: it
 * waits as kube-proxy does, logs upstream's loopback line and runs
 * dual-stack (the host has both families; the node declares none), both
 * Services carry traffic, /healthz answers kube-proxy's body with
 * nodeEligible false, the conntrack sysctls and the OOM score are set as
 * kube-proxy sets them (read back with sysctl and /proc), and the Node is
 * taken when it appears.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { NODE_YAML, proxyNode, serviceYaml, sliceYaml, startProxy, until, writeManifest } from '../support/proxy-env.js';


/** Whether a JSON log line has this message and these pairs (in whatever order the logger writes them). */
function logged(log: string, msg: string, pairs: Record<string, unknown>): boolean {
  return log.split('\n').some((line) => {
    if (!line.startsWith('{')) return false;
    const e = JSON.parse(line) as Record<string, unknown>;
    return e.msg === msg && Object.entries(pairs).every(([k, v]) => (v instanceof RegExp ? typeof e[k] === 'string' && v.test(e[k]) : e[k] === v));
  });
}
const run = promisify(execFile);

const V6_SERVICE = `apiVersion: v1
kind: Service
metadata: {name: web6, namespace: e2e}
spec:
  clusterIP: 'fd00:96::10'
  clusterIPs: ['fd00:96::10']
  ipFamilies: [IPv6]
  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web6-1, namespace: e2e, labels: {kubernetes.io/service-name: web6}}
addressType: IPv6
ports: [{name: http, protocol: TCP, port: 8080}]
endpoints:
  - {addresses: ['fd00:244:1::10'], conditions: {ready: true}, nodeName: node-a}
`;

const SERVER6 = `require('http').createServer((q, s) => s.end('web6 ' + q.socket.localAddress)).listen(8080, 'fd00:244:1::10', () => console.log('listening'));`;

t.test('no Node object: loopback assumed, both families programmed and served, upstream health body, conntrack and OOM set', async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  // IPv6 on the node and pods-a link, and a backend there.
  await env.node.exec('ip', ['addr', 'add', 'fd00:244:1::1/64', 'dev', 'pods-1', 'nodad']);
  await env.podsA.exec('ip', ['addr', 'add', 'fd00:244:1::10/64', 'dev', 'eth0', 'nodad']);
  await env.podsA.exec('ip', ['-6', 'route', 'add', 'default', 'via', 'fd00:244:1::1']);
  const server = execFile('ip', ['netns', 'exec', env.podsA.name, process.execPath, '-e', SERVER6]);
  t.teardown(() => {
    server.kill('SIGKILL');
  });
  await until('the IPv6 backend', async () => (await env.podsA.tryExec('ss', ['-ltn', 'sport = :8080'])).stdout.includes('fd00:244:1::10'));

  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10'));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }]));
  writeManifest(env, 'web6.yaml', V6_SERVICE);
  const established = Number(await env.node.exec('sysctl', ['-n', 'net.netfilter.nf_conntrack_tcp_timeout_established']));
  t.not(established, 86400, `a fresh namespace's established timeout (${established}) is not kube-proxy's`);

  const proxy = await startProxy(t, env, ['--manifests', env.dir], { waitMs: 150_000 });
  const log = proxy.log();
  t.match(log, /"msg":"Timed out waiting for node to exist"/, 'it waited for the Node');
  t.match(log, /"msg":"Can't determine this node's IP, assuming loopback; if this is incorrect, please set the --bind-address flag"/, "upstream's loopback line");
  t.ok(logged(log, 'kube-proxy running in dual-stack mode', { 'primary ipFamily': 'IPv4' }), 'dual-stack from the host');
  t.ok(logged(log, 'Version info', { version: /^v1\.\d+\.\d+/ }) && logged(log, 'Using ipvs Proxier', {}), "upstream's lines that tell the version and the mode");
  t.notMatch(log, /Creating dualStackProxier/, 'nothing more about dual-stack: createProxier no longer says it');
  t.equal(log.split('\n').filter((l) => l.includes('"msg":"IPVS scheduler not specified, use rr by default"')).length, 2, 'no scheduler configured: said once per family, as NewProxier says it');
  t.ok(['IPv4', 'IPv6'].every((ipFamily) => logged(log, 'IPVS scheduler not specified, use rr by default', { ipFamily })), 'each with its family, as NewProxier\'s logger has it');

  const table = await env.ipvsSave();
  t.ok(table.includes('-A -t 10.96.0.10:80 -s rr'), `the IPv4 ClusterIP is programmed:\n${table.join('\n')}`);
  t.ok(table.includes('-A -t [fd00:96::10]:80 -s rr'), 'and the IPv6 one');
  t.ok(table.some((l) => l.startsWith('-a -t [fd00:96::10]:80 -r [fd00:244:1::10]:8080 -m')), 'with its real server');
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), 'web-1 10.244.1.10', 'IPv4 ClusterIP traffic flows');
  t.equal(await env.get(env.node, 'http://[fd00:96::10]/'), 'web6 fd00:244:1::10', 'IPv6 ClusterIP traffic flows');

  const hz = await fetch(`${proxy.healthz}/healthz`);
  t.equal(hz.status, 503, 'no Node: /healthz 503');
  t.equal(hz.headers.get('content-type'), 'application/json');
  t.equal(hz.headers.get('x-content-type-options'), 'nosniff');
  const text = await hz.text();
  const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d*[1-9])?Z';
  t.match(
    text,
    new RegExp(`^\\{"lastUpdated":"${time}","currentTime":"${time}","nodeEligible":false,"healthy":true,"status":\\{"IPv4":\\{"lastUpdated":"${time}","healthy":true\\},"IPv6":\\{"lastUpdated":"${time}","healthy":true\\}\\}\\}$`),
    `kube-proxy's body, byte for byte in shape: ${text}`,
  );
  const lz = await fetch(`${proxy.healthz}/livez`);
  t.equal(lz.status, 200, '/livez does not judge the node');
  t.notMatch(await lz.text(), /nodeEligible/);

  const sysctl = async (key: string, inNode = true) => Number(inNode ? await env.node.exec('sysctl', ['-n', key]) : (await run('sysctl', ['-n', key])).stdout);
  t.equal(await sysctl('net.netfilter.nf_conntrack_tcp_timeout_established'), 86400, 'established timeout 24h, in the programmed namespace');
  t.equal(await sysctl('net.netfilter.nf_conntrack_tcp_timeout_close_wait'), 3600, 'close-wait 1h');
  t.ok((await sysctl('net.netfilter.nf_conntrack_max', false)) >= 131072, 'nf_conntrack_max at least conntrack.min');
  t.ok(Number(readFileSync('/sys/module/nf_conntrack/parameters/hashsize', 'utf8')) >= 32768, 'hash size at least a quarter of it');
  t.equal(readFileSync(`/proc/${proxy.child.pid}/oom_score_adj`, 'utf8').trim(), '-999', 'OOM score adj -999');
  t.ok(logged(log, 'Set sysctl', { entry: 'net/netfilter/nf_conntrack_tcp_timeout_established', value: 86400 }), "upstream's Set sysctl line");

  writeManifest(env, 'node.yaml', NODE_YAML);
  await until('the Node taken', () => proxy.log().includes('"msg":"NodeIPs changed for the node"'));
  await until('/healthz 200', async () => (await fetch(`${proxy.healthz}/healthz`)).status === 200);
  t.pass('the Node, when it appears, makes /healthz 200');
  t.equal(await env.get(env.node, 'http://[fd00:96::10]/'), 'web6 fd00:244:1::10', 'IPv6 still served with an IPv4-only node');
  t.equal(await proxy.stop(), 0);
});
