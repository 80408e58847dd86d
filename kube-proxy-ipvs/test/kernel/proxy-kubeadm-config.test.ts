/**
 * The migration from kubeadm's kube-proxy DaemonSet in IPVS mode, and back,
 * as the README's guide says it: the binary started as that DaemonSet
 * starts kube-proxy (--config with kubeadm's generated config.conf,
 * unchanged, and --hostname-override; plus this project's --manifests and
 * --netns, which win over the file's kubeconfig).
 *
 * 1. On a node holding the state kube-proxy's IPVS mode leaves (built with
 *    ipvsadm, ipset and iptables-restore in kube-proxy's own shapes:
 *    test/fixtures/upstream-ipvs/), it takes everything over as it is: no
 *    IPVS, ipset or address change, iptables rewritten to the very same
 *    rules, and a connection established before it started goes on. It
 *    defaults the file as upstream (syncs at once; /healthz and /livez on
 *    0.0.0.0:10256, /metrics and /configz on 127.0.0.1:10249), and an edit
 *    of the file makes it exit 1, as upstream's does, for the pod to
 *    restart with the new file.
 * 2. On a clean node it programs exactly kube-proxy's shapes, and
 *    kube-proxy's next sync (its own commands, run against what is left
 *    once this proxy stops) finds nothing to change: the way back.
 *
 * No kube-proxy binary runs here (there is no Go toolchain); its shapes
 * and its sync's commands are written out from its source.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { BINARY, cleanEnv, keepAliveClient, NODE_YAML, proxyNode, serviceYaml, sliceYaml, until, writeManifest, type ProxyNode } from '../support/proxy-env.js';
import { kubeIpvs0Up, loadUpstreamState, nodeViews, UPSTREAM, upstreamResync } from '../support/upstream-state.js';
import { scratchDir } from '../support/scratch.js';

const KUBEADM = new URL('../fixtures/config/kubeadm-ipvs-config.conf', import.meta.url).pathname;
const METRICS = 'http://127.0.0.1:10249';
const HEALTHZ = 'http://127.0.0.1:10256';

async function status(url: string): Promise<number | undefined> {
  return fetch(url).then((r) => r.status, () => undefined);
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${METRICS}/metrics`)).text();
  return Number(new RegExp(`^${name.replace(/[{}"]/g, '\\$&')}\\S* (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

interface KubeadmProxy {
  child: ChildProcess;
  log(): string;
}

/** As kubeadm's DaemonSet runs kube-proxy: the ConfigMap's folder holding config.conf, --config and --hostname-override. */
async function startAsKubeadm(t: Test, env: ProxyNode, config: string): Promise<KubeadmProxy> {
  const child = spawn('sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', ...BINARY, `--config=${config}`, '--hostname-override=node-a', '--manifests', env.dir, '--netns', env.node.path], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: cleanEnv(),
  });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await until('a first sync, counted on /metrics at 127.0.0.1:10249', async () => (await metric('kubeproxy_sync_proxy_rules_duration_seconds_count').catch(() => 0)) >= 1, 60_000);
  return { child, log: () => log };
}

t.test("from kubeadm's kube-proxy (IPVS mode) to this one with its config.conf unchanged, and back", async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  await env.backend('10.244.2.11', 'web-2');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10', 30080));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }, { ip: '10.244.2.11', node: 'node-b' }]));
  // As the ConfigMap volume lays it out: a folder holding config.conf.
  const config = join(scratchDir('kp-kubeadm-'), 'config.conf');
  copyFileSync(KUBEADM, config);

  // 1. kube-proxy's state, and a connection through it.
  await loadUpstreamState(env.node);
  const upstream = await nodeViews(env.node);
  t.same(upstream.ipvs, UPSTREAM.ipvsadm.split('\n').filter(Boolean).sort(), 'kube-proxy\'s virtual servers are in place');
  const ask = keepAliveClient(t, env, '10.96.0.10');
  const before = await ask();
  t.match(before, { body: /^web-\d 10\.244\.\d\.1\d$/ }, 'a connection through the ClusterIP on kube-proxy\'s state');

  const first = await startAsKubeadm(t, env, config);
  t.same(await nodeViews(env.node), upstream, 'taken over as it is: the same virtual servers, sets, KUBE-* rules and jumps in the same order, kube-ipvs0 and its address');
  for (const family of ['ipvs', 'ipset', 'rtnl']) {
    t.equal(await metric(`kubeproxy_netlink_operations_total{family="${family}",result="ok"}`), 0, `no ${family} change was sent (nothing flushed, nothing re-added)`);
  }
  t.same(await ask(), { body: before.body, port: before.port, reused: true }, 'the established connection goes on, on the same backend');
  t.ok(await kubeIpvs0Up(env.node), 'kube-ipvs0 is up (kube-proxy creates it and leaves it down; either works for both)');
  t.equal(await status(`${HEALTHZ}/healthz`), 200, '/healthz on 0.0.0.0:10256');
  t.equal(await status(`${HEALTHZ}/livez`), 200, '/livez');
  const configz = (await (await fetch(`${METRICS}/configz`)).json()) as Record<string, Record<string, unknown>>;
  // kube-proxy registers its internal configuration: Go field names, no kind/apiVersion (proxy-configz.test.ts).
  t.match(configz['kubeproxy.config.k8s.io'], { Mode: 'ipvs', IPVS: { Scheduler: '' }, SyncPeriod: '30s', HealthzBindAddress: '0.0.0.0:10256', Linux: { OOMScoreAdj: -999 } }, '/configz: the effective configuration, defaulted');
  t.notOk('kind' in configz['kubeproxy.config.k8s.io']!, 'an internal object has no TypeMeta to show');
  t.match(first.log(), /^I\d{4} [\d:.]+ +\d+ [^\]]+\] "/m, 'logs in klog\'s text format by default');
  t.notMatch(first.log(), /lenient/, 'kubeadm\'s file decodes strictly');

  // A ConfigMap update swaps the volume's ..data symlink; a plain edit of the file is the simplest change of content.
  const exited = once(first.child, 'exit');
  writeFileSync(config, readFileSync(config, 'utf8').replace('scheduler: ""', 'scheduler: lc'));
  const [code] = (await exited) as [number | null];
  t.equal(code, 1, 'a changed config file ends the process with exit 1');
  t.match(first.log(), /content of the proxy server's configuration file was updated/);
  copyFileSync(KUBEADM, config);

  // 2. A clean node: what this proxy programs is kube-proxy's shapes, line for line.
  await env.node.exec('sh', ['-c', 'ipvsadm -C; for t in iptables-legacy ip6tables-legacy; do for tb in nat filter; do $t -t $tb -F; $t -t $tb -X; done; done; ipset destroy; ip link del kube-ipvs0']);
  const second = await startAsKubeadm(t, env, config);
  t.same(await nodeViews(env.node), upstream, 'programmed from scratch: exactly kube-proxy\'s virtual servers, sets (names, types, sizes), rules and jumps, kube-ipvs0 and its address');
  t.equal(await env.get(env.node, 'http://10.96.0.10/').then((b) => b?.split(' ')[0].startsWith('web-')), true, 'ClusterIP traffic reaches a backend');

  // The way back: stopped, it leaves everything in place, and kube-proxy's next sync changes nothing.
  const stopped = once(second.child, 'exit');
  second.child.kill('SIGTERM');
  t.equal(((await stopped) as [number | null])[0], 0, 'SIGTERM: exit 0, the kernel left programmed');
  t.same((await upstreamResync(env.node)).failed, [], 'kube-proxy\'s ipset create -exist, iptables-restore --noflush and iptables -C all succeed on what it left');
  t.same(await nodeViews(env.node), upstream, 'and change nothing: kube-proxy takes it over as it is');
});
