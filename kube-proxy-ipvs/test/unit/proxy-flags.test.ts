/**
 * Flags and KubeProxyConfiguration → options: kube-proxy's defaults,
 * Go durations, config file with flags overriding it, and clear errors
 * for invalid values, unknown fields and unknown flags.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import t from 'tap';
import { parseConfig } from '../../lib/proxy/config-file.js';
import { formatDuration, parseDuration } from '../../lib/proxy/duration.js';
import { addProxyFlags, type RawFlags, resolveOptions } from '../../lib/proxy/flags.js';
import { parseHostPort } from '../../lib/proxy/options.js';

/** Parses argv as the binary would, returning the resolved options (or throwing commander's/our error). */
function parse(...argv: string[]) {
  const cmd = addProxyFlags(new Command('kube-proxy-ipvs'))
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} });
  cmd.parse(argv, { from: 'user' });
  return resolveOptions(cmd.opts<RawFlags>()).options;
}

t.test('Go durations', async (t) => {
  t.equal(parseDuration('30s'), 30_000);
  t.equal(parseDuration('5m'), 300_000);
  t.equal(parseDuration('1h2m'), 3_720_000);
  t.equal(parseDuration('1.5h'), 5_400_000);
  t.equal(parseDuration('300ms'), 300);
  t.equal(parseDuration('0'), 0);
  t.equal(parseDuration('2h45m30.5s'), 9_930_500);
  for (const bad of ['', '5', '5x', '1h 2m', 'm', '-']) t.throws(() => parseDuration(bad), /invalid duration/, JSON.stringify(bad));
  t.equal(formatDuration(3_720_000), '1h2m0s');
  t.equal(formatDuration(300), '300ms');
});

t.test('defaults are kube-proxy\'s', async (t) => {
  const o = parse('--hostname-override', 'node-a');
  t.match(o, {
    proxyMode: 'ipvs',
    hostnameOverride: 'node-a',
    bindAddress: '0.0.0.0',
    masqueradeAll: false,
    masqueradeBit: 14,
    healthzBindAddress: '0.0.0.0:10256',
    metricsBindAddress: '127.0.0.1:10249',
    cleanup: false,
    verbosity: 0,
    ipvs: { scheduler: 'rr', syncPeriodMs: 30_000, minSyncPeriodMs: 0, excludeCIDRs: [], strictARP: false, tcpTimeoutMs: 0, tcpFinTimeoutMs: 0, udpTimeoutMs: 0 },
  });
});

t.test('every flag', async (t) => {
  const o = parse(
    '--proxy-mode=ipvs', '--hostname-override=Node-A', '--bind-address=192.168.1.10', '--cluster-cidr=10.244.0.0/16,fd00:244::/56',
    '--nodeport-addresses=primary', '--masquerade-all', '--ipvs-scheduler=lc', '--ipvs-sync-period=1m', '--ipvs-min-sync-period=2s',
    '--ipvs-exclude-cidrs=10.0.0.0/8', '--ipvs-strict-arp=true', '--ipvs-tcp-timeout=15m', '--ipvs-tcpfin-timeout=2m', '--ipvs-udp-timeout=5m',
    '--healthz-bind-address=[::]:10256', '--metrics-bind-address=0.0.0.0:9999', '-v', '4', '--manifests', '/etc/objects', '--netns', '/run/netns/x',
  );
  t.match(o, {
    hostnameOverride: 'node-a',
    bindAddress: '192.168.1.10',
    clusterCIDRs: ['10.244.0.0/16', 'fd00:244::/56'],
    nodePortAddresses: ['primary'],
    masqueradeAll: true,
    ipvs: { scheduler: 'lc', syncPeriodMs: 60_000, minSyncPeriodMs: 2000, excludeCIDRs: ['10.0.0.0/8'], strictARP: true, tcpTimeoutMs: 900_000, tcpFinTimeoutMs: 120_000, udpTimeoutMs: 300_000 },
    healthzBindAddress: '[::]:10256',
    metricsBindAddress: '0.0.0.0:9999',
    verbosity: 4,
    manifests: '/etc/objects',
    netns: '/run/netns/x',
  });
  t.equal(parse('--masquerade-all=false').masqueradeAll, false, 'Go boolean syntax');
  t.equal(parse('-v=3').verbosity, 3, 'klog -v=N');
  t.equal(parse('--cleanup').cleanup, true);
  t.equal(parse('--healthz-bind-address=').healthzBindAddress, '', 'empty disables');
});

t.test('invalid values fail with the flag and what is accepted', async (t) => {
  t.throws(() => parse('--proxy-mode=iptables'), /--proxy-mode \(mode\): only "ipvs" is supported/);
  t.throws(() => parse('--ipvs-scheduler=fastest'), /"fastest" is not an IPVS scheduler; use one of rr, wrr/);
  t.throws(() => parse('--ipvs-sync-period=10s', '--ipvs-min-sync-period=1m'), /must be greater than or equal to --ipvs-min-sync-period/);
  t.throws(() => parse('--ipvs-sync-period=0'), /--ipvs-sync-period \(ipvs.syncPeriod\) must be greater than 0/);
  t.throws(() => parse('--ipvs-sync-period=soon'), /invalid duration "soon".*--ipvs-sync-period/);
  t.throws(() => parse('--cluster-cidr=10.244.0.0'), /--cluster-cidr \(clusterCIDR\): "10.244.0.0" is not a CIDR/);
  t.throws(() => parse('--nodeport-addresses=everywhere'), /"everywhere" is not a CIDR such as 10.0.0.0\/8 or "primary"/);
  t.throws(() => parse('--bind-address=node-a'), /--bind-address \(bindAddress\): "node-a" is not an IP address/);
  t.throws(() => parse('--healthz-bind-address=10256'), /--healthz-bind-address.*must be host:port/);
  t.throws(() => parse('--ipvs-tcp-timeout=1500ms'), /whole number of seconds/);
  t.throws(() => parse('--masquerade-all=yes'), /must be true or false/);
  t.throws(() => parse('--manifests=/x', '--master=http://a'), /--manifests cannot be combined with --kubeconfig or --master/);
  t.throws(() => parse('--hostname-override=Bad_Name'), /not a valid node name/);
  // Several problems are reported together.
  t.throws(() => parse('--proxy-mode=nftables', '--ipvs-scheduler=x'), /only "ipvs"[\s\S]*not an IPVS scheduler/);
});

t.test('unknown flags fail', async (t) => {
  t.throws(() => parse('--ipvs-schedular=rr'), /unknown option '--ipvs-schedular=rr'/);
  t.throws(() => parse('--iptables-sync-period=1s'), /unknown option/);
});

const CONFIG = `
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: ipvs
hostnameOverride: node-b
bindAddress: 0.0.0.0
healthzBindAddress: 0.0.0.0:10256
metricsBindAddress: 0.0.0.0:10249
clusterCIDR: 10.244.0.0/16
nodePortAddresses: [192.168.0.0/16]
clientConnection:
  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf
  qps: 5
iptables:
  masqueradeAll: true
  masqueradeBit: 14
ipvs:
  scheduler: wrr
  syncPeriod: 45s
  minSyncPeriod: 1s
  excludeCIDRs: [10.10.0.0/16]
  strictARP: true
  tcpTimeout: 0s
  tcpFinTimeout: 0s
  udpTimeout: 10s
conntrack:
  maxPerCore: 32768
featureGates: {}
`;

t.test('a KubeProxyConfiguration file, and flags overriding it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kpcfg-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, CONFIG);
  const o = parse('--config', file);
  t.match(o, {
    hostnameOverride: 'node-b',
    clusterCIDRs: ['10.244.0.0/16'],
    nodePortAddresses: ['192.168.0.0/16'],
    kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf',
    masqueradeAll: true,
    metricsBindAddress: '0.0.0.0:10249',
    ipvs: { scheduler: 'wrr', syncPeriodMs: 45_000, minSyncPeriodMs: 1000, excludeCIDRs: ['10.10.0.0/16'], strictARP: true, udpTimeoutMs: 10_000 },
  });
  const over = parse('--config', file, '--ipvs-scheduler', 'lc', '--hostname-override', 'node-c');
  t.equal(over.ipvs.scheduler, 'lc', 'flag wins over the file');
  t.equal(over.hostnameOverride, 'node-c');
  t.equal(over.ipvs.syncPeriodMs, 45_000, 'the rest from the file');
  t.same(parseConfig(CONFIG).ignored, ['conntrack', 'featureGates'], 'known but unused fields are reported');
});

t.test('config file errors name the file and the field', async (t) => {
  const head = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';
  t.throws(() => parseConfig(head + 'ipvs:\n  schedular: rr\n', 'c.yaml'), /--config c.yaml: ipvs.schedular is not a KubeProxyConfiguration field/);
  t.throws(() => parseConfig(head + 'proxyMode: ipvs\n', 'c.yaml'), /proxyMode is not a KubeProxyConfiguration field/);
  t.throws(() => parseConfig(head + 'ipvs:\n  syncPeriod: 30\n', 'c.yaml'), /ipvs.syncPeriod must be a string/);
  t.throws(() => parseConfig(head + 'ipvs:\n  syncPeriod: 30x\n', 'c.yaml'), /ipvs.syncPeriod is an invalid duration "30x"/);
  t.throws(() => parseConfig(head + 'ipvs:\n  strictARP: "yes"\n', 'c.yaml'), /ipvs.strictARP must be true or false/);
  t.throws(() => parseConfig('kind: KubeletConfiguration\n', 'c.yaml'), /kind must be KubeProxyConfiguration/);
  t.throws(() => parseConfig(head.replace('v1alpha1', 'v9'), 'c.yaml'), /apiVersion must be one of/);
  t.throws(() => parseConfig('a: [', 'c.yaml'), /not valid YAML/);
  t.throws(() => parse('--config', '/nonexistent/kube-proxy.yaml'), /--config \/nonexistent\/kube-proxy.yaml: cannot read it/);
  const bad = parseConfig(head + 'mode: iptables\n').patch;
  t.equal(bad.proxyMode, 'iptables', 'mode is carried to validation, which refuses it');
});

t.test('host:port parsing', async (t) => {
  t.same(parseHostPort('0.0.0.0:10256'), { host: '0.0.0.0', port: 10256 });
  t.same(parseHostPort('[::1]:10249'), { host: '::1', port: 10249 });
  t.same(parseHostPort(':10249'), { host: '0.0.0.0', port: 10249 });
  t.throws(() => parseHostPort('localhost:1'), /not an IP address/);
  t.throws(() => parseHostPort('1.2.3.4:70000'), /out of range/);
});
