/**
 * `kube-proxy-ipvs plan` end to end: the built binary on the manifests in
 * kube-proxy-ipvs/test/fixtures/manifests (a folder with a Node, a multi-document file, a
 * kind: List, ClusterIP/NodePort/LoadBalancer, ETP=Local, headless,
 * dual-stack, session affinity, a terminating endpoint), against the
 * reviewed output in cluster.expected.json.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = `${root}kube-proxy-ipvs/test/fixtures/manifests`;

function run(...args: string[]) {
  return spawnSync(process.execPath, [`${root}kube-proxy-ipvs/dist/lib/cli/main.js`, ...args], { encoding: 'utf8', cwd: root });
}

t.before(() => {
  // Someone else's half-done file elsewhere must not stop us: tsc emits anyway; the binary is what we check.
  for (const project of ['tsconfig.json', 'kube-proxy-ipvs/tsconfig.json']) spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', project], { cwd: root, encoding: 'utf8' });
});

t.test('a folder of manifests → the expected plan', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/cluster`, '--hostname-override', 'node-a', '--node-ip', '192.168.1.10,fd00:1::10');
  t.equal(r.status, 0, r.stderr);
  t.strictSame(JSON.parse(r.stdout), JSON.parse(readFileSync(`${fixtures}/cluster.expected.json`, 'utf8')));
});

t.test('one file, node address from the Node object, --ipvs-scheduler and --masquerade-all', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/cluster/20-web-list.yaml`, '--hostname-override', 'node-a', '--node-ip', '192.168.1.10', '--ipvs-scheduler', 'lc', '--masquerade-all');
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.strictSame(out.virtualServers, [
    { protocol: 'TCP', address: '10.96.10.20', port: 80, scheduler: 'lc', persistent: false, timeout: 0, realServers: [{ address: '10.244.1.20', port: 8080, weight: 1 }, { address: '10.244.2.20', port: 8080, weight: 1 }] },
    { protocol: 'TCP', address: '192.168.1.10', port: 30080, scheduler: 'lc', persistent: false, timeout: 0, realServers: [{ address: '10.244.1.20', port: 8080, weight: 1 }] },
  ]);
  t.match(out.iptables, '--match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ');
  t.equal(out.ip6tables, undefined);
});

t.test('--nodeport-addresses and --cluster-cidr', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/cluster`, '--hostname-override', 'node-a', '--node-ip', '192.168.1.10,10.0.0.10', '--nodeport-addresses', '10.0.0.0/8', '--cluster-cidr', '10.244.0.0/16');
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.strictSame(out.virtualServers.filter((v: { port: number }) => v.port > 30000).map((v: { address: string; port: number }) => `${v.address}:${v.port}`), ['10.0.0.10:30080', '10.0.0.10:31443']);
  t.match(out.iptables, '--match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ');
});

t.test('an invalid manifest: non-zero exit, message names file, object and field', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/invalid`, '--hostname-override', 'node-a', '--node-ip', '192.168.1.10');
  t.not(r.status, 0);
  t.equal(r.stdout, '');
  t.match(r.stderr, 'invalid/bad-port.yaml: Service shop/broken: spec.ports[1].port must be an integer from 1 to 65535, got "eighty"');
});

t.test('a YAML syntax error names the file and document', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/broken-yaml.yaml`, '--hostname-override', 'node-a', '--node-ip', '192.168.1.10');
  t.not(r.status, 0);
  t.match(r.stderr, /broken-yaml\.yaml: document 1: /);
});

t.test('the examples/ demo manifests plan cleanly', async (t) => {
  const r = run('plan', '--manifests', `${root}examples`, '--hostname-override', 'node-a');
  t.equal(r.status, 0, r.stderr);
  t.equal(JSON.parse(r.stdout).virtualServers.length, 3);
});

t.test('missing required flags exit non-zero', async (t) => {
  const r = run('plan', '--manifests', fixtures);
  t.not(r.status, 0);
  t.match(r.stderr, '--hostname-override');
});
