/**
 * KubeProxyConfiguration files: kubeadm's generated config.conf (every
 * field at its zero value) defaulted field by field as kube-proxy's
 * v1alpha1 scheme does; strict then lenient decoding; refused
 * apiVersion/kind and wrong types; --write-config-to output.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../lib/proxy/config-file.js';
import { encodeConfiguration } from '../../lib/proxy/config-schema.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import { run } from '../../lib/cli/run.js';
import { INIT_ONLY } from '../../lib/kernel/ipvs-proxier-check.js';
import { scratchDir } from '../support/scratch.js';

const KUBEADM = new URL('../fixtures/config/kubeadm-ipvs-config.conf', import.meta.url).pathname;

t.test("kubeadm's config.conf runs with upstream's defaults, field by field", async (t) => {
  const { options: o, notices, config } = resolveOptions(['--config', KUBEADM]);
  t.equal(o.proxyMode, 'ipvs');
  t.equal(o.hostnameOverride, hostname().trim().toLowerCase(), 'hostnameOverride "" → the host name');
  t.equal(o.bindAddress, '0.0.0.0');
  t.equal(o.healthzBindAddress, '0.0.0.0:10256', 'healthzBindAddress "" → 0.0.0.0:10256');
  t.equal(o.metricsBindAddress, '127.0.0.1:10249', 'metricsBindAddress "" → 127.0.0.1:10249');
  t.equal(o.bindAddressHardFail, false);
  t.same(o.clusterCIDRs, []);
  t.same(o.nodePortAddresses, [], 'nodePortAddresses null → all local addresses');
  t.equal(o.masqueradeAll, false);
  t.equal(o.masqueradeBit, 14, 'iptables.masqueradeBit null → 14');
  t.same(o.ipvs, { scheduler: 'rr', syncPeriodMs: 30_000, minSyncPeriodMs: 0, excludeCIDRs: [], strictARP: false, tcpTimeoutMs: 0, tcpFinTimeoutMs: 0, udpTimeoutMs: 0, rulesBackend: 'iptables' }, 'ipvs.syncPeriod 0s → 30s; minSyncPeriod stays 0');
  t.equal(o.oomScoreAdj, -999, 'oomScoreAdj null → -999');
  t.same(o.conntrack, { maxPerCore: 32768, min: 131072, tcpEstablishedTimeoutMs: 86_400_000, tcpCloseWaitTimeoutMs: 3_600_000, tcpBeLiberal: false, udpTimeoutMs: 0, udpStreamTimeoutMs: 0 });
  t.equal(o.detectLocalMode, 'ClusterCIDR', 'detectLocalMode "" → ClusterCIDR');
  t.same(o.detectLocal, { bridgeInterface: '', interfaceNamePrefix: '' });
  t.same(o.clientConnection, { kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf', acceptContentTypes: '', contentType: 'application/vnd.kubernetes.protobuf', qps: 5, burst: 10 });
  t.equal(o.kubeconfig, '/var/lib/kube-proxy/kubeconfig.conf');
  t.equal(o.configSyncPeriodMs, 900_000, 'configSyncPeriod 0s → 15m');
  t.same(o.featureGates, {});
  t.same(o.logging, { format: 'text', verbosity: 0, flushFrequencyMs: 5000, vmodule: [] });
  t.equal(o.verbosity, 0);
  t.equal(o.configFile, KUBEADM);
  t.equal(o.cleanup, false);
  t.notOk(notices.some((n) => /lenient/i.test(n.msg)), 'strict decoding succeeds');
  t.equal(config.iptables.localhostNodePorts, true);
  t.equal(config.nftables.masqueradeBit, 14);
  t.equal(config.iptables.minSyncPeriod, 1000);
});

t.test('an explicit pointer value is kept (0 means leave the kernel value)', async (t) => {
  const head = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';
  const { config } = parseConfig(head + 'oomScoreAdj: 0\nconntrack:\n  maxPerCore: 0\nhealthzBindAddress: 10.0.0.1\nmetricsBindAddress: "::1"\nbindAddress: "fd00::1"\n');
  t.equal(config.oomScoreAdj, 0);
  t.equal(config.conntrack.maxPerCore, 0);
  t.equal(config.healthzBindAddress, '10.0.0.1:10256', 'a bare IP gets the port');
  t.equal(config.metricsBindAddress, '[::1]:10249');
  const v6 = parseConfig(head + 'bindAddress: "fd00::1"\n').config;
  t.equal(v6.healthzBindAddress, '[::]:10256', 'an IPv6 bindAddress makes the default addresses IPv6');
  t.equal(v6.metricsBindAddress, '[::1]:10249');
});

t.test('strict decoding, then lenient with upstream\'s log line', async (t) => {
  const head = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n';
  const r = parseConfig(head + 'udpIdleTimeout: 250ms\nipvs:\n  schedular: lc\n  scheduler: wrr\nSyncPeriod: 1s\n');
  t.equal(r.lenientBecause, 'strict decoding error: unknown field "udpIdleTimeout", unknown field "ipvs.schedular", unknown field "SyncPeriod"');
  t.equal(r.config.ipvs.scheduler, 'wrr', 'known fields are still read');
  const dup = parseConfig(head + 'ipvs:\n  scheduler: lc\n  scheduler: sh\n');
  t.equal(dup.lenientBecause, 'strict decoding error: duplicate field "ipvs.scheduler"');
  const file = join(scratchDir('kpcfg-'), 'c.yaml');
  writeFileSync(file, head + 'udpIdleTimeout: 250ms\n');
  const { notices } = resolveOptions(['--config', file]);
  t.match(notices, [{ level: 'info', msg: 'Using lenient decoding as strict decoding failed', fields: { err: 'strict decoding error: unknown field "udpIdleTimeout"' } }]);
});

t.test('refused: other apiVersion or kind, wrong types, bad durations', async (t) => {
  const head = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';
  t.throws(() => parseConfig(head.replace('v1alpha1', 'v1alpha2')), /^failed to decode: no kind "KubeProxyConfiguration" is registered for version "kubeproxy.config.k8s.io\/v1alpha2" in scheme "kube-proxy": no kube-proxy release has a v1alpha2 configuration \(it was proposed in KEP-784 and not merged\); write the file as kubeproxy.config.k8s.io\/v1alpha1$/);
  t.throws(() => parseConfig(head.replace('v1alpha1', 'v1beta1')), /^failed to decode: no kind "KubeProxyConfiguration" is registered for version "kubeproxy.config.k8s.io\/v1beta1" in scheme "kube-proxy"$/, 'other versions: upstream\'s words alone');
  t.throws(() => parseConfig(head.replace('KubeProxyConfiguration', 'KubeletConfiguration')), /no kind "KubeletConfiguration" is registered/);
  t.throws(() => parseConfig('kind: KubeProxyConfiguration\n'), /Object 'apiVersion' is missing/);
  t.throws(() => parseConfig('apiVersion: kubeproxy.config.k8s.io/v1alpha1\n'), /Object 'Kind' is missing/);
  t.throws(() => parseConfig(head + 'configSyncPeriod: 15\n'), /cannot unmarshal number into Go struct field KubeProxyConfiguration.configSyncPeriod of type string/);
  t.throws(() => parseConfig(head + 'ipvs:\n  strictARP: "yes"\n'), /cannot unmarshal string into Go struct field KubeProxyConfiguration.ipvs.strictARP of type bool/);
  t.throws(() => parseConfig(head + 'ipvs:\n  syncPeriod: 30x\n'), /time: invalid duration "30x" \(KubeProxyConfiguration.ipvs.syncPeriod\)/);
  t.throws(() => parseConfig(head + 'oomScoreAdj: 1.5\n'), /oomScoreAdj of type int32/);
  t.throws(() => parseConfig('a: ['), /failed to decode: yaml:/);
  t.throws(() => resolveOptions(['--config', '/nonexistent/kube-proxy.yaml']), /open \/nonexistent\/kube-proxy.yaml: no such file or directory/);
  t.throws(() => resolveOptions(['--config', writeTemp(head + 'mode: iptables\n')]), /--proxy-mode \(mode\): only "ipvs" is supported/);
  t.throws(() => resolveOptions(['--config', writeTemp(head + 'featureGates:\n  NoSuchGate: true\n')]), /unrecognized feature gate: NoSuchGate/);
  t.throws(() => resolveOptions(['--config', writeTemp(head + 'oomScoreAdj: 2000\n')]), /oomScoreAdj\) must be within the range \[-1000, 1000\]/);
  t.throws(() => resolveOptions(['--config', writeTemp(head + 'detectLocalMode: Bridge\n')]), /Unsupported value: "Bridge"/);
  t.throws(() => resolveOptions(['--config', writeTemp(head + 'detectLocalMode: BridgeInterface\n')]), /detectLocal.bridgeInterface\) must not be empty/);
  t.throws(() => resolveOptions(['--config', writeTemp(head + 'featureGates:\n  KubeProxyIPVS: false\n')]), /KubeProxyIPVS=false/);
  t.same(resolveOptions(['--config', writeTemp(head + 'featureGates:\n  KubeProxyIPVS: true\n  ContextualLogging: false\n')]).options.featureGates, { KubeProxyIPVS: true, ContextualLogging: false });
});

t.test("unquoted YAML 1.1 booleans are booleans, as yaml.v2 reads them", async (t) => {
  const head = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';
  for (const word of ['y', 'Y', 'yes', 'Yes', 'YES', 'on', 'On', 'ON', 'true', 'True', 'TRUE']) {
    t.equal(parseConfig(head + `ipvs:\n  strictARP: ${word}\n`).config.ipvs.strictARP, true, word);
  }
  for (const word of ['n', 'N', 'no', 'No', 'NO', 'off', 'Off', 'OFF', 'false', 'False', 'FALSE']) {
    t.equal(parseConfig(head + `ipvs:\n  strictARP: ${word}\n`).config.ipvs.strictARP, false, word);
  }
  const r = resolveOptions(['--config', writeTemp(head + 'ipvs:\n  strictARP: yes\nfeatureGates: {KubeProxyIPVS: on}\n')]);
  t.equal(r.options.ipvs.strictARP, true, 'strictARP: yes starts with strictARP on');
  t.same(r.options.featureGates, { KubeProxyIPVS: true }, 'in a map of bools too');
  t.equal(parseConfig(head + 'hostnameOverride: "yes"\n').config.hostnameOverride, 'yes', 'a quoted yes stays a string');
  t.throws(() => parseConfig(head + 'hostnameOverride: yes\n'), /^failed to decode: json: cannot unmarshal bool into Go struct field KubeProxyConfiguration.hostnameOverride of type string$/, 'resolved before the field type is known, so a string field refuses it');
  t.throws(() => parseConfig('yes\n'), /^failed to decode: json: cannot unmarshal bool into Go value of type struct$/);
  t.equal(parseConfig(head + 'hostnameOverride: 1:20\n').config.hostnameOverride, '1:20', 'only the booleans are YAML 1.1: 1:20 is no base-60 number in yaml.v2');
});

t.test('only the first YAML document is read, as yaml.v2 Unmarshal', async (t) => {
  const head = 'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n';
  t.equal(parseConfig(head + 'ipvs:\n  scheduler: lc\n---\n').config.ipvs.scheduler, 'lc', 'a trailing ---');
  const r = parseConfig(head + 'ipvs:\n  scheduler: lc\n---\n' + head + 'ipvs:\n  scheduler: sh\nnoSuchField: [\n');
  t.equal(r.config.ipvs.scheduler, 'lc', 'a second document is not read');
  t.equal(r.lenientBecause, undefined, 'nor checked');
  t.equal(resolveOptions(['--config', writeTemp('---\n' + head + 'ipvs:\n  scheduler: wrr\n...\n---\nx: 1\n')]).options.ipvs.scheduler, 'wrr', 'a leading --- and a ... end marker');
});

function writeTemp(text: string): string {
  const file = join(scratchDir('kpcfg-'), 'c.yaml');
  writeFileSync(file, text);
  return file;
}

t.test('the effective configuration encoded as v1alpha1, in struct order', async (t) => {
  const { config } = resolveOptions(['--config', KUBEADM, '--hostname-override', 'Node-1']);
  // What --write-config-to writes before sorting its keys (/configz serves the internal shape: proxy-configz.test.ts).
  const c = JSON.parse(JSON.stringify(encodeConfiguration(config))) as Record<string, unknown>;
  t.same(Object.keys(c).slice(0, 6), ['kind', 'apiVersion', 'clientConnection', 'logging', 'hostnameOverride', 'bindAddress'], 'featureGates is omitted when empty (omitempty)');
  t.match(c, {
    kind: 'KubeProxyConfiguration',
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    clientConnection: { kubeconfig: '/var/lib/kube-proxy/kubeconfig.conf', acceptContentTypes: '', contentType: 'application/vnd.kubernetes.protobuf', qps: 5, burst: 10 },
    logging: { format: 'text', flushFrequency: '5s', verbosity: 0, options: { text: { infoBufferSize: '0' }, json: { infoBufferSize: '0' } } },
    hostnameOverride: 'node-1',
    healthzBindAddress: '0.0.0.0:10256',
    metricsBindAddress: '127.0.0.1:10249',
    mode: 'ipvs',
    // Upstream's conversion puts the sync periods in the running mode's section only.
    iptables: { masqueradeBit: 14, masqueradeAll: false, localhostNodePorts: true, syncPeriod: '0s', minSyncPeriod: '0s' },
    ipvs: { syncPeriod: '30s', minSyncPeriod: '0s', scheduler: '', excludeCIDRs: null },
    detectLocalMode: 'ClusterCIDR',
    oomScoreAdj: -999,
    conntrack: { maxPerCore: 32768, min: 131072, tcpEstablishedTimeout: '24h0m0s', tcpCloseWaitTimeout: '1h0m0s', udpTimeout: '0s' },
    configSyncPeriod: '15m0s',
  });
  t.notOk('windowsRunAsService' in c, 'omitempty');
  t.equal(Object.keys(c).at(-1), 'portRange');
});

t.test('--write-config-to writes the merged configuration as v1alpha1 YAML that reads back the same', async (t) => {
  const out = join(scratchDir('kpcfg-'), 'out.yaml');
  await run(['--write-config-to', out, '--ipvs-scheduler', 'lc', '--oom-score-adj=-500', '--conntrack-max-per-core=0', '-v', '0']);
  const text = readFileSync(out, 'utf8');
  const doc = parseYaml(text) as Record<string, unknown>;
  t.same(Object.keys(doc), [...Object.keys(doc)].sort(), 'keys sorted, as upstream writes them');
  t.match(doc, { apiVersion: 'kubeproxy.config.k8s.io/v1alpha1', kind: 'KubeProxyConfiguration', mode: 'ipvs', oomScoreAdj: -500, ipvs: { scheduler: 'lc', minSyncPeriod: '1s' }, conntrack: { maxPerCore: 0 } });
  const again = resolveOptions(['--config', out]);
  t.equal(again.options.ipvs.scheduler, 'lc');
  t.equal(again.options.oomScoreAdj, -500);
  t.equal(again.options.conntrack.maxPerCore, 0);
  t.notOk(again.notices.some((n) => /lenient/.test(n.msg)), 'what we write decodes strictly');
});

t.test('--write-config-to quotes strings the reader would take for booleans, so they read back as strings', async (t) => {
  for (const name of ['y', 'n', 'yes', 'no', 'on', 'off']) {
    const out = join(scratchDir('kpcfg-'), 'out.yaml');
    await run(['--write-config-to', out, `--hostname-override=${name}`, '-v', '0']);
    t.match(readFileSync(out, 'utf8'), new RegExp(`^hostnameOverride: "${name}"$`, 'm'), `${name} is written quoted`);
    t.equal(resolveOptions(['--config', out]).options.hostnameOverride, name, `${name} reads back`);
  }
  const out = join(scratchDir('kpcfg-'), 'out.yaml');
  await run(['--write-config-to', out, '--hostname-override=node-a', '-v', '0']);
  const text = readFileSync(out, 'utf8');
  t.match(text, /^hostnameOverride: node-a$/m, 'other strings stay plain');
  t.match(text, /^  strictARP: false$/m, 'booleans are still written as booleans');
});

t.test('--init-only: the privileged start, then return (exit 0) without reading objects or serving', async (t) => {
  const { fakeFactory } = await import('../support/fake-controller.js');
  const factory = fakeFactory();
  const hostCalls: string[] = [];
  const host = {
    families: async () => (hostCalls.push('families'), { families: ['inet6'] as Array<'inet' | 'inet6'>, missing: [{ family: 'inet' as const, message: 'No iptables support for family' as const, error: 'iptables-save: not found' }] }),
    setConntrack: async (settings: { maxPerCore: number | null }) => void hostCalls.push(`conntrack maxPerCore=${settings.maxPerCore}`),
    applyOomScoreAdj: async () => void hostCalls.push('oom'),
  };
  await run(['--init-only', '--hostname-override=node-a', '--ipvs-tcp-timeout=15m', '--manifests=/nonexistent', '--healthz-bind-address=127.0.0.1:1', '--logging-format=json', '-v', '0'], factory, host);
  t.same(hostCalls, ['conntrack maxPerCore=32768', 'families'], 'the conntrack sysctls set, then the families found, as upstream\'s platformSetup and platform check; the OOM score not (upstream sets it only when it runs)');
  t.same(factory.last?.calls, ['start', 'close'], 'the controller was started (IPVS, its sysctls and timeouts) and closed');
  t.match(factory.last?.init, { ipvsTimeouts: { tcp: 900 }, node: { name: 'node-a', addresses: [], families: ['inet6'] } }, "the controller serves the host's families");
  t.equal(factory.last?.init?.proxierLines, INIT_ONLY, "NewProxier's lines of each family: only that it returns under --init-only");

  const none = { ...host, families: async () => ({ families: [] as Array<'inet' | 'inet6'>, missing: [{ family: 'inet' as const, message: 'No iptables support for family' as const, error: 'iptables-save: not found' }] }) };
  const noFamily = fakeFactory();
  await t.rejects(run(['--init-only', '--hostname-override=node-a', '--manifests=/nonexistent', '-v', '0'], noFamily, none), /iptables is not available on this host : iptables-save: not found/, 'no family usable: the start fails as upstream\'s');
  t.equal(noFamily.last, undefined, 'before any controller is made');
});
