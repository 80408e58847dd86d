/**
 * The binary started as kubeadm's DaemonSet starts kube-proxy: --config
 * with kubeadm's generated config.conf, unchanged (every field at its zero
 * value), and --hostname-override; plus this project's --manifests and
 * --netns (which win over the file's kubeconfig). It must default the file
 * as upstream does: it programs a Service at once (ipvs.syncPeriod 0s →
 * 30s, minSyncPeriod 0), serves /healthz and /livez on 0.0.0.0:10256 and /metrics
 * on 127.0.0.1:10249. Then an edit of the config file makes it
 * exit 1, as upstream's does, so the pod restarts with the new file.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { cleanEnv, MAIN, NODE_YAML, proxyNode, serviceYaml, sliceYaml, until, writeManifest } from '../support/proxy-env.js';

const KUBEADM = new URL('../fixtures/config/kubeadm-ipvs-config.conf', import.meta.url).pathname;

async function status(url: string): Promise<number | undefined> {
  return fetch(url).then((r) => r.status, () => undefined);
}

t.test("kubeadm's config.conf, unchanged: programs, serves health and metrics on the default addresses", async (t) => {
  const env = await proxyNode(t);
  await env.backend('10.244.1.10', 'web-1');
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10'));
  writeManifest(env, 'web-slice.yaml', sliceYaml('web', [{ ip: '10.244.1.10' }]));
  // As the ConfigMap volume lays it out: a folder holding config.conf.
  const dir = mkdtempSync(join(tmpdir(), 'kp-kubeadm-'));
  const config = join(dir, 'config.conf');
  copyFileSync(KUBEADM, config);

  const child = spawn('sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', process.execPath, MAIN, `--config=${config}`, '--hostname-override=node-a', '--manifests', env.dir, '--netns', env.node.path], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: cleanEnv(),
  });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  const syncs = async () => Number(/^kubeproxy_sync_proxy_rules_duration_seconds_count\S* (\d+)/m.exec(await (await fetch('http://127.0.0.1:10249/metrics')).text())?.[1] ?? 0);
  await until('a first sync, counted on /metrics at 127.0.0.1:10249', async () => (await syncs().catch(() => 0)) >= 1, 60_000);
  t.equal(await status('http://127.0.0.1:10256/healthz'), 200, '/healthz on 0.0.0.0:10256');
  t.same(await env.ipvsSave(), ['-A -t 10.96.0.10:80 -s rr', '-a -t 10.96.0.10:80 -r 10.244.1.10:8080 -m -w 1'], 'the Service is programmed with the default scheduler');
  t.equal(await env.get(env.node, 'http://10.96.0.10/'), 'web-1 10.244.1.10', 'ClusterIP traffic reaches the backend');
  t.equal(await status('http://127.0.0.1:10256/livez'), 200, '/livez');
  const configz = (await (await fetch('http://127.0.0.1:10249/configz')).json()) as Record<string, Record<string, unknown>>;
  t.match(configz['kubeproxy.config.k8s.io'], { kind: 'KubeProxyConfiguration', apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', mode: 'ipvs', ipvs: { syncPeriod: '30s', scheduler: '' }, healthzBindAddress: '0.0.0.0:10256', oomScoreAdj: -999 }, '/configz: the effective configuration, defaulted');
  t.match(log, /^I\d{4} [\d:.]+ +\d+ [^\]]+\] "/m, 'logs in klog\'s text format by default');
  t.notMatch(log, /lenient/, 'kubeadm\'s file decodes strictly');

  // A ConfigMap update swaps the volume's ..data symlink; a plain edit of the file is the simplest change of content.
  const exited = once(child, 'exit');
  writeFileSync(config, readFileSync(config, 'utf8').replace('scheduler: ""', 'scheduler: lc'));
  const [code] = (await exited) as [number | null];
  t.equal(code, 1, 'a changed config file ends the process with exit 1');
  t.match(log, /content of the proxy server's configuration file was updated/);
});
