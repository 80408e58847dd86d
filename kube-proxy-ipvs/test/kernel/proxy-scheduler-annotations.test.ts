/**
 * Per-Service IPVS schedulers, end to end: the binary on manifests whose
 * Services carry our scheduler annotations and kube-router's. `ipvsadm -Sn`
 * shows each Service's scheduler and flags, as `plan` says; an unknown
 * scheduler and one the kernel has not got (user-mode-linux 6.1 has no
 * ip_vs_twos) are logged, counted on /metrics, and the Service runs on the
 * global scheduler. With mh (no port hashing) a client stays on its
 * backend while another backend leaves and comes back; and changing a
 * Service's annotation updates its virtual server in place, an established
 * connection going on.
 */
import t from 'tap';
import { keepAliveClient, metricValue, NODE_YAML, proxyNode, sliceYaml, startProxy, until, writeManifest, type ProxyNode } from '../support/proxy-env.js';
import { planIpvsadm, runPlan } from '../support/proxy-plan.js';

const OURS = 'ipvs.kube-proxy-ipvs.io/scheduler';
const OURS_FLAGS = 'ipvs.kube-proxy-ipvs.io/scheduler-flags';

function annotated(name: string, clusterIP: string, annotations: Record<string, string>): string {
  const lines = Object.entries(annotations).map(([k, v]) => `    ${k}: "${v}"`);
  return `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: e2e
  annotations:
${lines.join('\n')}
spec:
  clusterIP: ${clusterIP}
  clusterIPs: [${clusterIP}]
  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080}]
`;
}

const BACKENDS = [
  { ip: '10.244.1.10', name: 'web-1' },
  { ip: '10.244.2.11', name: 'web-2', node: 'node-b' },
  { ip: '10.244.1.12', name: 'web-3' },
];
/** Outside clients, each its own source address (mh hashes it). */
const CLIENTS = ['192.168.56.101', '192.168.56.102', '192.168.56.103'];

/** Who answers each of `n` new connections from each client, in one shell in the client's namespace: client → the backends seen. */
async function backendsOf(env: ProxyNode, clients: readonly string[], n = 3): Promise<Map<string, string[]>> {
  const script = clients.map((c) => `for i in $(seq ${n}); do echo "${c} $(curl -sS -m 5 --interface ${c} http://10.96.0.10/ 2>&1 | cut -d' ' -f1)"; done`).join('\n');
  const seen = new Map<string, string[]>(clients.map((c) => [c, []]));
  for (const line of (await env.client.exec('sh', ['-c', script])).split('\n').filter(Boolean)) {
    const [client, backend] = line.split(' ');
    const list = seen.get(client)!;
    if (!list.includes(backend)) list.push(backend);
  }
  return seen;
}

t.test('annotated schedulers and flags are programmed; invalid or missing ones fall back, logged and counted; mh keeps clients; a change is in place', async (t) => {
  const env = await proxyNode(t);
  await env.client.exec('ip', ['route', 'add', 'default', 'via', '192.168.56.10']);
  for (const c of CLIENTS) await env.client.exec('ip', ['addr', 'add', `${c}/24`, 'dev', 'eth0']);
  for (const b of BACKENDS) await env.backend(b.ip, b.name);
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'mh.yaml', annotated('mh', '10.96.0.10', { [OURS]: 'mh', [OURS_FLAGS]: 'mh-fallback' }));
  writeManifest(env, 'mh-slice.yaml', sliceYaml('mh', BACKENDS));
  const services: Array<[string, string, Record<string, string>]> = [
    ['kr', '10.96.0.11', { 'kube-router.io/service.scheduler': 'mh', 'kube-router.io/service.schedflags': 'flag-1,flag-2' }],
    ['sh', '10.96.0.12', { [OURS]: 'sh', [OURS_FLAGS]: 'sh-fallback,sh-port' }],
    ['bad', '10.96.0.13', { [OURS]: 'fastest' }],
    ['twos', '10.96.0.14', { [OURS]: 'twos' }],
  ];
  for (const [name, ip, annotations] of services) {
    writeManifest(env, `${name}.yaml`, annotated(name, ip, annotations));
    writeManifest(env, `${name}-slice.yaml`, sliceYaml(name, [BACKENDS[0]]));
  }
  const proxy = await startProxy(t, env, ['--manifests', env.dir]);

  const virtualServers = (await env.ipvsSave()).filter((l) => l.startsWith('-A '));
  t.same(virtualServers, [
    '-A -t 10.96.0.10:80 -s mh -b mh-fallback',
    '-A -t 10.96.0.11:80 -s mh -b mh-fallback,mh-port',
    '-A -t 10.96.0.12:80 -s sh -b sh-fallback,sh-port',
    '-A -t 10.96.0.13:80 -s rr',
    '-A -t 10.96.0.14:80 -s rr',
  ], 'ipvsadm -Sn: each Service\'s scheduler and flags; the unknown one and the one the kernel lacks on the global rr');
  const planned = await runPlan(env.dir, ['--nodeport-addresses', '192.168.56.0/24']);
  t.same(
    planIpvsadm(planned).filter((l) => l.startsWith('-A ')),
    virtualServers.map((l) => (l.startsWith('-A -t 10.96.0.14:80') ? '-A -t 10.96.0.14:80 -s twos' : l)),
    'plan says the same, but for the module it cannot know the kernel lacks',
  );

  const warnings = proxy
    .log()
    .split('\n')
    .filter((l) => l.includes('"annotation"'))
    .map((l) => JSON.parse(l) as Record<string, string>);
  t.match(warnings, [
    { service: 'e2e/bad', annotation: OURS, value: 'fastest', reason: 'invalid-annotation', scheduler: 'rr', msg: /is not an IPVS scheduler/ },
    { service: 'e2e/twos', annotation: OURS, value: 'twos', reason: 'module-missing', scheduler: 'rr', msg: /no module ip_vs_twos/ },
  ], 'one structured warning per Service, naming it, the annotation and the scheduler used');
  t.match(proxy.log(), /the kernel has no IPVS scheduler twos/, 'the missing module is said once');
  t.equal(await metricValue(proxy, 'kubeproxy_ipvs_scheduler_annotation_problems_total{reason="invalid-annotation"}'), 1);
  t.equal(await metricValue(proxy, 'kubeproxy_ipvs_scheduler_annotation_problems_total{reason="module-missing"}'), 1);

  // mh hashes the client's address only (no mh-port): every new connection of a client lands on one backend.
  const before = new Map<string, string>();
  for (const [c, seen] of await backendsOf(env, CLIENTS)) {
    t.equal(seen.length, 1, `client ${c}: one backend for every connection (${seen.join(', ')})`);
    before.set(c, seen[0]);
  }
  // Take away a backend the first client is not on, then bring it back.
  const client = CLIENTS[0];
  const mine = before.get(client)!;
  const gone = BACKENDS.find((b) => b.name !== mine)!;
  writeManifest(env, 'mh-slice.yaml', sliceYaml('mh', BACKENDS.filter((b) => b !== gone)));
  await until(`${gone.name} out of mh`, async () => !(await env.ipvsSave()).some((l) => l.includes(`10.96.0.10:80 -r ${gone.ip}:8080 -m -w 1`)));
  t.same((await backendsOf(env, [client])).get(client), [mine], `client ${client} stays on ${mine} while ${gone.name} is away`);
  writeManifest(env, 'mh-slice.yaml', sliceYaml('mh', BACKENDS));
  await until(`${gone.name} back in mh`, async () => (await env.ipvsSave()).some((l) => l.includes(`10.96.0.10:80 -r ${gone.ip}:8080 -m -w 1`)));
  t.same((await backendsOf(env, [client])).get(client), [mine], `client ${client} stays on ${mine} once ${gone.name} is back`);

  // A change of annotation: the virtual server is updated, not re-made; the open connection goes on.
  const ask = keepAliveClient(t, env, '10.96.0.11');
  const first = await ask();
  t.match(first, { body: /^web-1 / }, 'a keep-alive connection through the kube-router-annotated Service');
  const stats = async () => (await env.node.exec('ipvsadm', ['-Ln', '--stats', '-t', '10.96.0.11:80'])).split('\n').find((l) => l.startsWith('TCP'))!;
  const conns = Number((await stats()).trim().split(/\s+/)[2]);
  writeManifest(env, 'kr.yaml', annotated('kr', '10.96.0.11', { [OURS]: 'wlc' }));
  await until('kr on wlc', async () => (await env.ipvsSave()).includes('-A -t 10.96.0.11:80 -s wlc'));
  t.ok(Number((await stats()).trim().split(/\s+/)[2]) >= conns, 'its connection count kept counting: the same virtual server, updated in place');
  t.same(await ask(), { body: first.body, port: first.port, reused: true }, 'the established connection is answered, on the same backend');
  t.equal(await proxy.stop(), 0);
});
