/**
 * Start-up refusals that explain themselves, with the real binary:
 *  - without CAP_NET_ADMIN (dropped from the bounding set with setpriv, so
 *    even root runs without it): the preflight message, exit 1, and
 *    nothing programmed;
 *  - with no IPVS in the kernel (ip_vs unloaded, as on a node that never
 *    loaded it): "IPVS is not available ... modprobe ip_vs", exit 1.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { NODE_YAML, proxyNode, runBinary, serviceYaml, writeManifest } from '../support/proxy-env.js';

const run = promisify(execFile);
const modprobe = (args: string[]) => run('modprobe', process.env.IPVS_NETLINK_KERNEL === 'sandbox' ? ['-d', '/run/sandbox-modroot', ...args] : args);

t.test('without CAP_NET_ADMIN: the preflight says what is needed, exit 1, nothing programmed', async (t) => {
  const env = await proxyNode(t);
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10'));
  const args = ['--manifests', env.dir, '--hostname-override', 'node-a', '--netns', env.node.path, '--healthz-bind-address', '', '--metrics-bind-address', ''];
  const r = await runBinary(['setpriv', '--bounding-set', '-net_admin', '--inh-caps', '-net_admin', '--'], args);
  t.equal(r.code, 1, 'exit 1');
  t.match(r.stderr, /kube-proxy-ipvs needs CAP_NET_ADMIN to program IPVS, ipsets, addresses and iptables: run it as root, or in a privileged pod \/ a container with capabilities NET_ADMIN and NET_RAW/);
  t.same((await env.node.exec('ipvsadm', ['-Sn'])).trim(), '', 'no virtual server');
  t.equal((await env.node.tryExec('ip', ['link', 'show', 'kube-ipvs0'])).code, 1, 'no kube-ipvs0');
  // The control: the same command with the capability starts (and is stopped by the --cleanup mode's exit).
  const ok = await runBinary([], [...args, '--cleanup']);
  t.equal(ok.code, 0, `with CAP_NET_ADMIN the same command line runs (${ok.stderr.slice(-300)})`);
});

t.test('with no IPVS in the kernel: a clear message, exit 1', async (t) => {
  const modules = readFileSync('/proc/modules', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter((m) => m === 'ip_vs' || m.startsWith('ip_vs_') || m === 'xt_ipvs');
  t.ok(modules.includes('ip_vs'), 'IPVS is a module here');
  t.teardown(() => modprobe(['-a', ...modules]).catch(() => undefined));
  const env = await proxyNode(t);
  writeManifest(env, 'node.yaml', NODE_YAML);
  writeManifest(env, 'web.yaml', serviceYaml('web', '10.96.0.10'));
  // Unloading needs every virtual server gone (earlier tests' namespaces may still be winding down).
  for (let attempt = 1; ; attempt++) {
    try {
      await modprobe(['-r', '-a', ...modules.filter((m) => m !== 'ip_vs'), 'ip_vs']);
      break;
    } catch (err) {
      if (attempt === 10) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  t.notOk(readFileSync('/proc/modules', 'utf8').includes('ip_vs '), 'ip_vs is not loaded');
  const r = await runBinary([], ['--manifests', env.dir, '--hostname-override', 'node-a', '--netns', env.node.path, '--healthz-bind-address', '', '--metrics-bind-address', '']);
  t.equal(r.code, 1, 'exit 1');
  t.match(r.stderr, /IPVS is not available: .*\. On a node: modprobe ip_vs ip_vs_rr \(and the schedulers you use\), then restart kube-proxy-ipvs/, 'says what is missing and what to do');
  t.equal((await env.node.tryExec('ip', ['link', 'show', 'kube-ipvs0'])).code, 1, 'nothing programmed: no kube-ipvs0');
});
