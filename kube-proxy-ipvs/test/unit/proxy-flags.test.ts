/**
 * kube-proxy's command line: every upstream flag (table-driven: flag →
 * the option it sets), pflag's syntax, precedence with --config, the
 * deprecated port flags' quirks, and errors for unknown flags and bad
 * values.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { formatDuration, parseDuration } from '../../lib/proxy/duration.js';
import { parseCsv, parseGoInt } from '../../lib/proxy/flag-parser.js';
import { FLAGS } from '../../lib/proxy/flags.js';
import { parseHostPort, type ProxyOptions } from '../../lib/proxy/options.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import { scratchDir } from '../support/scratch.js';

const parse = (...argv: string[]) => resolveOptions(argv).options;

t.test('Go durations and integers', async (t) => {
  t.equal(parseDuration('1h2m'), 3_720_000);
  t.equal(parseDuration('1.5h'), 5_400_000);
  t.equal(parseDuration('0'), 0);
  for (const bad of ['', '5', '5x', '1h 2m', 'm', '-']) t.throws(() => parseDuration(bad), /invalid duration/, JSON.stringify(bad));
  t.equal(formatDuration(3_720_000), '1h2m0s');
  t.equal(formatDuration(86_400_000), '24h0m0s');
  t.equal(parseGoInt('0x10'), 16, 'base 0: hex');
  t.equal(parseGoInt('010'), 8, 'base 0: octal');
  t.equal(parseGoInt('-999'), -999);
  t.throws(() => parseGoInt('3000000000'), /out of range/);
  t.same(parseCsv('a,"b,c",d'), ['a', 'b,c', 'd']);
});

t.test('flags alone: upstream defaults', async (t) => {
  const o = parse('--hostname-override', 'node-a');
  t.match(o, {
    proxyMode: 'ipvs', hostnameOverride: 'node-a', bindAddress: '0.0.0.0', masqueradeAll: false, masqueradeBit: 14,
    healthzBindAddress: '0.0.0.0:10256', metricsBindAddress: '127.0.0.1:10249', cleanup: false, verbosity: 0, oomScoreAdj: -999,
    ipvs: { scheduler: 'rr', syncPeriodMs: 30_000, minSyncPeriodMs: 1000, excludeCIDRs: [], strictARP: false },
    conntrack: { maxPerCore: 32768, min: 131072, tcpEstablishedTimeoutMs: 86_400_000, tcpCloseWaitTimeoutMs: 3_600_000 },
    clientConnection: { contentType: 'application/vnd.kubernetes.protobuf', qps: 5, burst: 10 },
    configSyncPeriodMs: 900_000, detectLocalMode: 'ClusterCIDR',
  });
  t.equal(o.ipvs.minSyncPeriodMs, 1000, 'flags alone: --ipvs-min-sync-period defaults to 1s, as upstream\'s flag does');
});

/** Each upstream flag, a value, and what it must set. */
const TABLE: Array<[string[], (o: ProxyOptions) => unknown, unknown]> = [
  [['--feature-gates=KubeProxyIPVS=true,ContextualLogging=false', '--feature-gates', 'NFTablesNetlink=false'], (o) => o.featureGates, { KubeProxyIPVS: true, ContextualLogging: false, NFTablesNetlink: false }],
  [['--kubeconfig', '/k.conf'], (o) => [o.kubeconfig, o.clientConnection.kubeconfig], ['/k.conf', '/k.conf']],
  [['--master=https://a:6443'], (o) => o.master, 'https://a:6443'],
  [['--kube-api-content-type=application/json'], (o) => o.clientConnection.contentType, 'application/json'],
  [['--kube-api-burst=20'], (o) => o.clientConnection.burst, 20],
  [['--kube-api-qps=7.5'], (o) => o.clientConnection.qps, 7.5],
  [['--hostname-override=  Node-A '], (o) => o.hostnameOverride, 'node-a'],
  [['--bind-address=192.168.1.10'], (o) => o.bindAddress, '192.168.1.10'],
  [['--healthz-bind-address=[::]:10256'], (o) => o.healthzBindAddress, '[::]:10256'],
  [['--healthz-bind-address=10.0.0.1'], (o) => o.healthzBindAddress, '10.0.0.1:10256'],
  [['--metrics-bind-address=0.0.0.0:9999'], (o) => o.metricsBindAddress, '0.0.0.0:9999'],
  [['--bind-address-hard-fail'], (o) => o.bindAddressHardFail, true],
  [['--profiling'], (o) => o.kubeProxyConfiguration?.enableProfiling, true],
  [['--show-hidden-metrics-for-version=1.36'], (o) => o.kubeProxyConfiguration?.showHiddenMetricsForVersion, '1.36'],
  [['--proxy-mode=ipvs'], (o) => o.proxyMode, 'ipvs'],
  [['--proxy-mode='], (o) => o.proxyMode, 'ipvs'],
  [['--iptables-masquerade-bit=15'], (o) => o.masqueradeBit, 15],
  [['--masquerade-all'], (o) => o.masqueradeAll, true],
  [['--iptables-localhost-nodeports=false'], (o) => o.kubeProxyConfiguration?.iptables.localhostNodePorts, false],
  [['--iptables-sync-period=1m'], (o) => [o.kubeProxyConfiguration?.iptables.syncPeriod, o.ipvs.syncPeriodMs], [60_000, 30_000]],
  [['--iptables-min-sync-period=5s'], (o) => [o.kubeProxyConfiguration?.iptables.minSyncPeriod, o.ipvs.minSyncPeriodMs], [5000, 1000]],
  [['--ipvs-sync-period=1m'], (o) => o.ipvs.syncPeriodMs, 60_000],
  [['--ipvs-min-sync-period=0'], (o) => o.ipvs.minSyncPeriodMs, 0],
  [['--ipvs-scheduler=lc'], (o) => o.ipvs.scheduler, 'lc'],
  [['--ipvs-exclude-cidrs=10.0.0.0/8,10.1.0.0/16', '--ipvs-exclude-cidrs', '10.2.0.0/16'], (o) => o.ipvs.excludeCIDRs, ['10.0.0.0/8', '10.1.0.0/16', '10.2.0.0/16']],
  [['--ipvs-strict-arp=true'], (o) => o.ipvs.strictARP, true],
  [['--ipvs-rules-backend=nftables'], (o) => o.ipvs.rulesBackend, 'nftables'],
  [['--ipvs-tcp-timeout=15m'], (o) => o.ipvs.tcpTimeoutMs, 900_000],
  [['--ipvs-tcpfin-timeout=1500ms'], (o) => o.ipvs.tcpFinTimeoutMs, 1000],
  [['--ipvs-udp-timeout=5m'], (o) => o.ipvs.udpTimeoutMs, 300_000],
  [['--detect-local-mode=InterfaceNamePrefix', '--pod-interface-name-prefix=veth'], (o) => [o.detectLocalMode, o.detectLocal.interfaceNamePrefix], ['InterfaceNamePrefix', 'veth']],
  [['--detect-local-mode=BridgeInterface', '--pod-bridge-interface=cbr0'], (o) => [o.detectLocalMode, o.detectLocal.bridgeInterface], ['BridgeInterface', 'cbr0']],
  [['--cluster-cidr=10.244.0.0/16,fd00:244::/56'], (o) => o.clusterCIDRs, ['10.244.0.0/16', 'fd00:244::/56']],
  [['--nodeport-addresses=primary'], (o) => o.nodePortAddresses, ['primary']],
  [['--oom-score-adj=-500'], (o) => o.oomScoreAdj, -500],
  [['--conntrack-max-per-core=0'], (o) => o.conntrack.maxPerCore, 0],
  [['--conntrack-min=1000'], (o) => o.conntrack.min, 1000],
  [['--conntrack-tcp-timeout-established=12h'], (o) => o.conntrack.tcpEstablishedTimeoutMs, 43_200_000],
  [['--conntrack-tcp-timeout-close-wait=30m'], (o) => o.conntrack.tcpCloseWaitTimeoutMs, 1_800_000],
  [['--conntrack-tcp-be-liberal'], (o) => o.conntrack.tcpBeLiberal, true],
  [['--conntrack-udp-timeout=30s'], (o) => o.conntrack.udpTimeoutMs, 30_000],
  [['--conntrack-udp-timeout-stream=2m'], (o) => o.conntrack.udpStreamTimeoutMs, 120_000],
  [['--config-sync-period=5m'], (o) => o.configSyncPeriodMs, 300_000],
  [['--healthz-port=0'], (o) => o.healthzBindAddress, ''],
  [['--healthz-port=1234'], (o) => o.healthzBindAddress, '0.0.0.0:10256'],
  [['--healthz-bind-address=10.0.0.1', '--healthz-port=1234'], (o) => o.healthzBindAddress, '10.0.0.1:1234'],
  [['--metrics-port=9000', '--metrics-bind-address=127.0.0.2'], (o) => o.metricsBindAddress, '127.0.0.2:9000'],
  [['--logging-format=json'], (o) => o.logging.format, 'json'],
  [['--log-flush-frequency=10s'], (o) => o.logging.flushFrequencyMs, 10_000],
  [['-v', '4'], (o) => [o.verbosity, o.logging.verbosity], [4, 4]],
  [['--v=3'], (o) => o.verbosity, 3],
  [['-v=2'], (o) => o.verbosity, 2],
  [['-v5'], (o) => o.verbosity, 5],
  [['--vmodule=proxier=4,server=2'], (o) => o.logging.vmodule, [{ filePattern: 'proxier', verbosity: 4 }, { filePattern: 'server', verbosity: 2 }]],
  // The alpha logging options need their gate (component-base's validation).
  [['--log-text-split-stream', '--feature-gates=LoggingAlphaOptions=true'], (o) => o.kubeProxyConfiguration?.logging.options.text.splitStream, true],
  [['--log-text-info-buffer-size=64Ki', '--feature-gates=LoggingAlphaOptions=true'], (o) => o.kubeProxyConfiguration?.logging.options.text.infoBufferSize, '64Ki'],
  [['--log-json-split-stream=true', '--feature-gates=LoggingAlphaOptions=true'], (o) => o.kubeProxyConfiguration?.logging.options.json.splitStream, true],
  [['--log-json-info-buffer-size=1Mi', '--feature-gates=LoggingAlphaOptions=true'], (o) => o.kubeProxyConfiguration?.logging.options.json.infoBufferSize, '1Mi'],
  [['--cleanup'], (o) => o.cleanup, true],
  [['--cleanup=false'], (o) => o.cleanup, false],
  [['--boot-id-file=/x'], (o) => o.proxyMode, 'ipvs'],
  [['--machine-id-file=/x,/y'], (o) => o.proxyMode, 'ipvs'],
  [['--manifests', '/etc/objects', '--kubeconfig=/k'], (o) => [o.manifests, o.kubeconfig], ['/etc/objects', undefined]],
  [['--netns=/run/netns/x'], (o) => o.netns, '/run/netns/x'],
  [['--hostname_override=node-b'], (o) => o.hostnameOverride, 'node-b'],
];

t.test('every flag sets what it should', async (t) => {
  for (const [argv, get, want] of TABLE) t.same(get(parse(...argv)), want, argv.join(' '));
  const covered = new Set(TABLE.flatMap(([argv]) => argv.filter((a) => a.startsWith('-')).map((a) => a.replace(/^--?/, '').split('=')[0].replace(/_/g, '-').replace(/^v\d$/, 'v'))));
  const control = ['config', 'write-config-to', 'init-only', 'version', 'help'];
  t.same(FLAGS.map((f) => f.name).filter((n) => !covered.has(n) && !control.includes(n)), [], 'the table covers every flag');
});

t.test('pflag syntax', async (t) => {
  t.throws(() => parse('--masquerade-all', 'false'), /"kube-proxy" does not take any arguments, got \["false"\]/, 'a bool never takes the next word');
  t.throws(() => parse('--masquerade-all=yes'), /invalid argument "yes" for "--masquerade-all" flag: strconv.ParseBool/);
  t.throws(() => parse('--ipvs-schedular=rr'), /unknown flag: --ipvs-schedular/);
  t.throws(() => parse('-x'), /unknown shorthand flag: 'x' in -x/);
  t.throws(() => parse('--ipvs-scheduler'), /flag needs an argument: --ipvs-scheduler/);
  t.throws(() => parse('--ipvs-sync-period=soon'), /invalid argument "soon" for "--ipvs-sync-period" flag: time: invalid duration/);
  t.throws(() => parse('--bind-address=node-a'), /"node-a" is not a valid IP address/);
  t.throws(() => parse('--feature-gates=Foo'), /malformed pair, expect string=bool/);
  t.throws(() => parse('--feature-gates=NoSuchGate=true'), /unrecognized feature gate: NoSuchGate/);
  t.throws(() => parse('--windows-service'), /unknown flag: --windows-service/, 'Windows-only flags are unknown on Linux, as upstream');
  t.equal(parse('--bind-address=').bindAddress, '0.0.0.0', '"" leaves an ip flag alone (IPVar)');
  t.equal(parse('--healthz-bind-address=').healthzBindAddress, '0.0.0.0:10256', '"" leaves an ipport flag alone (IPPortVar)');
  const r = resolveOptions(['--healthz-port=1', '--profiling']);
  t.match(r.notices, [{ level: 'warn', msg: /^Flag --healthz-port has been deprecated/ }, { msg: 'Flag has no effect in IPVS mode', fields: { flag: '--profiling' } }]);
});

t.test('invalid values fail naming the flag and the field', async (t) => {
  t.throws(() => parse('--proxy-mode=iptables'), /--proxy-mode \(mode\): only "ipvs" is supported/);
  t.equal(parse('--ipvs-scheduler=fastest').ipvs.scheduler, 'fastest', 'a scheduler is checked by the kernel when the proxier starts, not here');
  t.throws(() => parse('--ipvs-sync-period=10s', '--ipvs-min-sync-period=1m'), /must be greater than or equal to --ipvs-min-sync-period/);
  t.throws(() => parse('--cluster-cidr=10.244.0.0'), /--cluster-cidr \(clusterCIDR\): Invalid value: "10.244.0.0": must be a valid CIDR block/);
  t.throws(() => parse('--oom-score-adj=-1001'), /must be within the range \[-1000, 1000\]/);
  t.throws(() => parse('--conntrack-min=-1'), /--conntrack-min \(conntrack.min\) must be greater than or equal to 0/);
  t.throws(() => parse('--config-sync-period=0'), /--config-sync-period \(configSyncPeriod\) must be greater than 0/);
  t.throws(() => parse('--logging-format=xml'), /Unsupported value: "xml"/);
  t.throws(() => parse('--ipvs-rules-backend=ebpf'), /--ipvs-rules-backend \(ipvs.rulesBackend\): Unsupported value: "ebpf": supported values: "iptables", "nftables"/, 'the rules backend is one of the two (an extension)');
  t.throws(() => parse('--nodeport-addresses=primary,10.0.0.0'), /--nodeport-addresses \(nodePortAddresses\[1\]\): Invalid value: "10.0.0.0"/);
  t.throws(() => parse('--hostname-override=   '), /empty hostname-override is invalid/);
  t.equal(parse('--hostname-override=Bad_Name').hostnameOverride, 'bad_name', 'no DNS-name check: upstream has none');
});

t.test('a negative IPVS timeout is refused even under a second, as validateIPVSTimeout', async (t) => {
  for (const [flag, name] of [['--ipvs-tcp-timeout', '--ipvs-tcp-timeout (ipvs.tcpTimeout)'], ['--ipvs-tcpfin-timeout', '--ipvs-tcpfin-timeout (ipvs.tcpFinTimeout)'], ['--ipvs-udp-timeout', '--ipvs-udp-timeout (ipvs.udpTimeout)']]) {
    for (const value of ['-500ms', '-1s']) t.throws(() => parse(`${flag}=${value}`), { message: new RegExp(`\\n  - ${name.replace(/[().]/g, '\\$&')} must be greater than or equal to 0(\n|$)`) }, `${flag}=${value}`);
  }
  const file = join(scratchDir('kpcfg-'), 'c.yaml');
  writeFileSync(file, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nipvs:\n  udpTimeout: -1ns\n');
  t.throws(() => resolveOptions(['--config', file]), /--ipvs-udp-timeout \(ipvs.udpTimeout\) must be greater than or equal to 0/, 'from the file too');
  t.equal(parse('--ipvs-tcp-timeout=1500ms').ipvs.tcpTimeoutMs, 1000, 'a positive value is still cut to whole seconds');
  t.equal(parse('--ipvs-tcp-timeout=500ms').ipvs.tcpTimeoutMs, 0);
});

t.test('empty arguments are passed over, as upstream\'s Args check', async (t) => {
  t.equal(parse('', '--ipvs-scheduler=lc', '').ipvs.scheduler, 'lc', 'an argument from an unset $(VAR)');
  t.equal(parse('--', '').proxyMode, 'ipvs');
  t.throws(() => parse('', 'x'), /^"kube-proxy" does not take any arguments, got \["" "x"\]$/, 'any other argument is refused, listed as Go prints it');
});

t.test('with --config: the file wins except --hostname-override, logging flags and our own', async (t) => {
  const file = join(scratchDir('kpcfg-'), 'c.yaml');
  writeFileSync(file, 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nhostnameOverride: node-b\nipvs:\n  scheduler: wrr\nlogging:\n  verbosity: 1\n  vmodule: [{filePattern: a, verbosity: 3}]\nclientConnection:\n  kubeconfig: /k.conf\n');
  const r = resolveOptions(['--config', file, '--ipvs-scheduler', 'lc', '--oom-score-adj=0', '--hostname-override', 'Node-C', '-v', '4', '--vmodule=b=2', '--manifests', '/m', '--netns', '/n']);
  t.equal(r.options.ipvs.scheduler, 'wrr', 'the file wins over --ipvs-scheduler');
  t.equal(r.options.oomScoreAdj, -999, 'and over --oom-score-adj');
  t.equal(r.options.hostnameOverride, 'node-c', '--hostname-override applies');
  t.equal(r.options.verbosity, 4, '-v applies');
  t.same(r.options.logging.vmodule, [{ filePattern: 'a', verbosity: 3 }, { filePattern: 'b', verbosity: 2 }], '--vmodule entries follow the file\'s');
  t.equal(r.options.manifests, '/m', '--manifests applies');
  t.equal(r.options.kubeconfig, undefined, 'and selects the manifests source over the file\'s kubeconfig');
  t.equal(r.options.netns, '/n');
  const ignored = r.notices.filter((n) => n.msg.startsWith('Flag ignored because --config is set')).map((n) => n.fields?.flag);
  t.same(ignored, ['--ipvs-scheduler', '--oom-score-adj'], 'a warning names each flag the file overrides (our extension)');
});

t.test('host:port parsing', async (t) => {
  t.same(parseHostPort('[::1]:10249'), { host: '::1', port: 10249 });
  t.throws(() => parseHostPort('localhost:1'), /not an IP address/);
});
