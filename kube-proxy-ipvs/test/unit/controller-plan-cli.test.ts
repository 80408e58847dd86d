/**
 * `kube-proxy-ipvs plan` end to end: the built binary on the manifests in
 * kube-proxy-ipvs/test/fixtures/manifests (a folder with a Node, a
 * multi-document file, a kind: List, ClusterIP/NodePort/LoadBalancer,
 * ETP=Local, headless, dual-stack, session affinity, a terminating
 * endpoint), against the reviewed output in cluster.expected.json; and
 * plan taking the proxy's flags, --config and node addresses.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '../support/scratch.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const fixtures = `${root}kube-proxy-ipvs/test/fixtures/manifests`;

function run(...args: string[]) {
  return spawnSync(process.execPath, [`${root}kube-proxy-ipvs/dist/lib/cli/main.js`, ...args], { encoding: 'utf8', cwd: root });
}

t.before(() => {
  // Someone else's half-done file elsewhere must not stop us: tsc emits anyway; the binary is what we check.
  for (const project of ['tsconfig.json', 'kube-proxy-ipvs/tsconfig.json']) spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', project], { cwd: root, encoding: 'utf8' });
});

t.test('a folder of manifests → the expected plan (the node, dual-stack, from its Node object)', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/cluster`, '--hostname-override', 'node-a');
  t.equal(r.status, 0, r.stderr);
  t.strictSame(JSON.parse(r.stdout), JSON.parse(readFileSync(`${fixtures}/cluster.expected.json`, 'utf8')));
});

t.test('one file without a Node: the address from --bind-address; --ipvs-scheduler and --masquerade-all', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/cluster/20-web-list.yaml`, '--hostname-override', 'node-a', '--bind-address', '192.168.1.10', '--ipvs-scheduler', 'lc', '--masquerade-all');
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  t.strictSame(out.virtualServers, [
    { protocol: 'TCP', address: '10.96.10.20', port: 80, scheduler: 'lc', persistent: false, timeout: 0, realServers: [{ address: '10.244.1.20', port: 8080, weight: 1 }, { address: '10.244.2.20', port: 8080, weight: 1 }] },
    { protocol: 'TCP', address: '192.168.1.10', port: 30080, scheduler: 'lc', persistent: false, timeout: 0, realServers: [{ address: '10.244.1.20', port: 8080, weight: 1 }] },
  ]);
  t.match(out.iptables, '--match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ');
  t.match(out.ip6tables, '-A KUBE-SERVICES', 'a dual-stack host: IPv6 rules too, with an IPv4-only node');
  t.ok('KUBE-6-CLUSTER-IP' in out.ipsets, 'and the IPv6 sets');
});

/** The cluster fixtures with another Node object for node-a. */
function clusterWithNode(addresses: Array<[string, string]>): string {
  const dir = scratchDir('kp-plan-node-');
  for (const f of readdirSync(`${fixtures}/cluster`)) if (f !== '00-node.yaml') copyFileSync(`${fixtures}/cluster/${f}`, join(dir, f));
  const list = addresses.map(([type, address]) => `{type: ${type}, address: "${address}"}`).join(', ');
  writeFileSync(join(dir, '00-node.yaml'), `apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {addresses: [${list}]}\n`);
  return dir;
}

const nodePorts = (stdout: string) =>
  (JSON.parse(stdout).virtualServers as Array<{ address: string; port: number }>).filter((v) => v.port > 30000).map((v) => `${v.address}:${v.port}`);

t.test('--nodeport-addresses and --cluster-cidr; the Node\'s ExternalIP is one of its addresses, as for the proxy', async (t) => {
  const dir = clusterWithNode([['InternalIP', '192.168.1.10'], ['ExternalIP', '10.0.0.10']]);
  const r = run('plan', '--manifests', dir, '--hostname-override', 'node-a', '--nodeport-addresses', '10.0.0.0/8', '--cluster-cidr', '10.244.0.0/16');
  t.equal(r.status, 0, r.stderr);
  t.strictSame(nodePorts(r.stdout), ['10.0.0.10:30080', '10.0.0.10:31443']);
  t.match(JSON.parse(r.stdout).iptables, '--match-set KUBE-CLUSTER-IP dst,dst ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ');
});

t.test('plan works out the node as the proxy does: its Node object\'s InternalIPs and ExternalIPs, --bind-address as the primary', async (t) => {
  const dir = clusterWithNode([['InternalIP', '192.168.1.10'], ['ExternalIP', '203.0.113.7'], ['Hostname', 'node-a']]);
  const both = run('plan', '--manifests', dir, '--hostname-override', 'node-a');
  t.equal(both.status, 0, both.stderr);
  t.strictSame(nodePorts(both.stdout), ['192.168.1.10:30080', '192.168.1.10:31443', '203.0.113.7:30080', '203.0.113.7:31443'], 'NodePorts on both addresses the proxy would take from the Node');
  const primary = run('plan', '--manifests', dir, '--hostname-override', 'node-a', '--bind-address', '192.168.1.20', '--nodeport-addresses', 'primary');
  t.equal(primary.status, 0, primary.stderr);
  t.strictSame(nodePorts(primary.stdout), ['192.168.1.20:30080', '192.168.1.20:31443'], '--bind-address is the primary address');
  const external = clusterWithNode([['ExternalIP', '203.0.113.7']]);
  const only = run('plan', '--manifests', external, '--hostname-override', 'node-a');
  t.equal(only.status, 0, `a Node with only an ExternalIP is served by the proxy, so it is planned: ${only.stderr}`);
});

t.test('plan reads --config as the proxy does: the file wins over config flags', async (t) => {
  const dir = scratchDir('kp-plan-config-');
  const config = join(dir, 'config.yaml');
  writeFileSync(config, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nhostnameOverride: node-a\nipvs: {scheduler: wlc}\n');
  const r = run('plan', '--manifests', `${fixtures}/cluster`, '--config', config);
  t.equal(r.status, 0, r.stderr);
  t.ok(JSON.parse(r.stdout).virtualServers.every((v: { scheduler: string }) => v.scheduler === 'wlc'), 'the scheduler and the node name from the file');
  const flag = run('plan', '--manifests', `${fixtures}/cluster`, '--config', config, '--ipvs-scheduler', 'sh');
  t.ok(JSON.parse(flag.stdout).virtualServers.every((v: { scheduler: string }) => v.scheduler === 'wlc'), 'the file wins over --ipvs-scheduler, as upstream');
  writeFileSync(config, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nhostnameOverride: node-a\nipvs: {schedular: wlc}\n');
  const lenient = run('plan', '--manifests', `${fixtures}/cluster`, '--config', config);
  t.equal(lenient.status, 0, 'an unknown field falls back to lenient decoding, as for the proxy');
  writeFileSync(config, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nipvs: {syncPeriod: 30}\n');
  const bad = run('plan', '--manifests', `${fixtures}/cluster`, '--config', config);
  t.not(bad.status, 0);
  t.match(bad.stderr, 'cannot unmarshal number into Go struct field KubeProxyConfiguration.ipvs.syncPeriod', 'a wrong type is refused');
});

t.test('an invalid manifest: non-zero exit, message names file, object and field', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/invalid`, '--hostname-override', 'node-a', '--bind-address', '192.168.1.10');
  t.not(r.status, 0);
  t.equal(r.stdout, '');
  t.match(r.stderr, 'invalid/bad-port.yaml: Service shop/broken: spec.ports[1].port must be an integer from 1 to 65535, got "eighty"');
});

t.test('a YAML syntax error names the file and document', async (t) => {
  const r = run('plan', '--manifests', `${fixtures}/broken-yaml.yaml`, '--hostname-override', 'node-a', '--bind-address', '192.168.1.10');
  t.not(r.status, 0);
  t.match(r.stderr, /broken-yaml\.yaml: document 1: /);
});

t.test('the examples/ demo manifests plan cleanly', async (t) => {
  const r = run('plan', '--manifests', `${root}examples`, '--hostname-override', 'node-a');
  t.equal(r.status, 0, r.stderr);
  t.equal(JSON.parse(r.stdout).virtualServers.length, 3);
});

t.test('no --manifests, or a node without an address: non-zero exit, saying what to pass', async (t) => {
  const none = run('plan', '--hostname-override', 'node-a');
  t.not(none.status, 0);
  t.match(none.stderr, '--manifests');
  const r = run('plan', '--manifests', `${fixtures}/cluster`, '--hostname-override', 'node-z');
  t.not(r.status, 0);
  t.match(r.stderr, 'no address for node "node-z"', 'the proxy\'s own start-up error');
  t.match(r.stderr, '--hostname-override');
});

t.test("the binary's exits, as kube-proxy's (cobra): flag errors print the usage and exit 1", async (t) => {
  const unknown = run('--ipvs-schedular=rr');
  t.equal(unknown.status, 1);
  t.match(unknown.stderr, /^Usage:\n  kube-proxy \[flags\][\s\S]*\nError: unknown flag: --ipvs-schedular\n$/, 'usage, then the error naming the flag');
  const plan = run('plan', '--no-such-flag');
  t.equal(plan.status, 1, 'plan reads the same command line');
  t.match(plan.stderr, /Error: unknown flag: --no-such-flag/);
  const args = run('--cleanup', 'false');
  t.equal(args.status, 1);
  t.match(args.stderr, /Error: "kube-proxy" does not take any arguments, got \["false"\]/);
  const version = run('--version');
  t.same([version.status, version.stdout], [0, 'Kubernetes v1.37.0\n'], '--version prints and exits 0 before anything else is read');
  const help = run('-h');
  t.equal(help.status, 0);
  t.match(help.stdout, /--conntrack-max-per-core int32 +Maximum number of NAT connections/);
  const bad = run('--config', '/nonexistent.yaml');
  t.equal(bad.status, 1);
  t.match(bad.stderr, /^E\d{4} [\d:.]+ +\d+ [^\]]+\] "command failed" err="failed complete: open \/nonexistent.yaml: no such file or directory"\n$/, "component-base's cli.Run: logged, as klog writes it");
  const unwritable = run('--write-config-to', '/nonexistent/dir/out.yaml');
  t.equal(unwritable.status, 1);
  t.match(unwritable.stderr, /\nE\d{4} [^\n]*"Error running ProxyServer" err="open \/nonexistent\/dir\/out\.yaml: no such file or directory"\nE\d{4} [^\n]*"command failed" err="open \/nonexistent\/dir\/out\.yaml: no such file or directory"\n$/, '--write-config-to fails inside Run, as upstream\'s: logged twice');
});

t.test('scheduler annotations: the flags in the JSON; one that cannot be applied warned about on stderr, the Service on the global scheduler', async (t) => {
  const dir = scratchDir('kp-plan-sched-');
  const svc = (name: string, ip: string, annotations: string) =>
    `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: e2e, annotations: {${annotations}}}\nspec: {clusterIP: ${ip}, ports: [{name: http, port: 80}]}\n`;
  writeFileSync(join(dir, 'mh.yaml'), svc('mh', '10.96.0.10', '"kube-router.io/service.scheduler": mh, "kube-router.io/service.schedflags": "flag-1,flag-2"'));
  writeFileSync(join(dir, 'bad.yaml'), svc('bad', '10.96.0.11', '"ipvs.kube-proxy-ipvs.io/scheduler": fastest'));
  const r = run('plan', '--manifests', dir, '--hostname-override', 'node-a', '--bind-address', '192.168.1.10', '--ipvs-scheduler', 'wlc');
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { virtualServers: Array<{ address: string; scheduler: string; flags?: string[] }> };
  t.same(out.virtualServers.map((v) => [v.address, v.scheduler, v.flags]), [['10.96.0.10', 'mh', ['mh-fallback', 'mh-port']], ['10.96.0.11', 'wlc', undefined]]);
  t.equal(r.stderr, 'warning: Service e2e/bad: ipvs.kube-proxy-ipvs.io/scheduler="fastest" is not an IPVS scheduler; use one of rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, mh, fo, ovf, twos; its virtual servers use scheduler wlc\n');
});
