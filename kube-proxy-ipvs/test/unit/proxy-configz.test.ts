/**
 * /configz as kube-proxy answers it: the internal KubeProxyConfiguration
 * that newProxyServer registers, marshalled by component-base's configz
 * with encoding/json. The goldens follow the field order of
 * pkg/proxy/apis/config/types.go (KubeProxyConfiguration: Linux, Windows,
 * FeatureGates, ClientConnection, Logging, ..., SyncPeriod, MinSyncPeriod,
 * ConfigSyncPeriod; its nested structs in their own declaration order),
 * component-base config/types.go (ClientConnectionConfiguration) and
 * logs/api/v1/types.go (LoggingConfiguration, whose json tags give its
 * keys), with values as v1alpha1/conversion.go converts them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { ControllerOptions, ControllerPort } from '../../lib/kernel/controller-port.js';
import { Configz } from '../../lib/proxy/configz.js';
import { formatDuration } from '../../lib/proxy/duration.js';
import { Float32, marshal } from '../../lib/proxy/go-json.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { MetricsServer } from '../../lib/proxy/metrics-server.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import { scratchDir } from '../support/scratch.js';

/** GET /configz from a metrics server serving `value`. */
async function configz(t: Test, value: () => unknown): Promise<{ status: number; type: string | null; nosniff: string | null; body: string }> {
  const server = new MetricsServer(new ProxyMetrics(() => undefined, { defaultMetrics: false }), { configz: value });
  const base = `http://${await server.start('127.0.0.1:0')}`;
  t.teardown(() => server.close());
  const r = await fetch(`${base}/configz`);
  return { status: r.status, type: r.headers.get('content-type'), nosniff: r.headers.get('x-content-type-options'), body: await r.text() };
}

/** The start handing its node to the controller factory, as Proxy.start does. */
function startOn(cz: Configz, addresses: string[]): void {
  const made = cz.observing(() => ({}) as ControllerPort);
  made({ node: { name: 'node-1', addresses } } as unknown as ControllerOptions);
}

/** Compares key by key at every level, so a wrong order or value names its path. */
function sameInOrder(t: Test, got: unknown, want: unknown, path = ''): void {
  if (want !== null && typeof want === 'object' && !Array.isArray(want)) {
    t.same(Object.keys(got as object), Object.keys(want), `${path || 'top'}: keys in Go's order`);
    for (const k of Object.keys(want)) sameInOrder(t, (got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
  } else {
    t.same(got, want, path);
  }
}

const LOGGING_DEFAULT = { format: 'text', flushFrequency: '5s', verbosity: 0, options: { text: { infoBufferSize: '0' }, json: { infoBufferSize: '0' } } };

t.test('a default configuration: the internal struct, Go field names in declaration order, no kind/apiVersion', async (t) => {
  const { config } = resolveOptions(['--proxy-mode=ipvs', '--hostname-override=node-1']);
  const r = await configz(t, new Configz(config).value);
  t.same([r.status, r.type, r.nosniff], [200, 'application/json', 'nosniff']);
  const want = {
    'kubeproxy.config.k8s.io': {
      Linux: {
        Conntrack: { MaxPerCore: 32768, Min: 131072, TCPEstablishedTimeout: '24h0m0s', TCPCloseWaitTimeout: '1h0m0s', TCPBeLiberal: false, UDPTimeout: '0s', UDPStreamTimeout: '0s' },
        MasqueradeAll: false,
        OOMScoreAdj: -999,
      },
      Windows: { RunAsService: false },
      FeatureGates: {},
      ClientConnection: { Kubeconfig: '', AcceptContentTypes: '', ContentType: 'application/vnd.kubernetes.protobuf', QPS: 5, Burst: 10 },
      Logging: LOGGING_DEFAULT,
      HostnameOverride: 'node-1',
      BindAddress: '0.0.0.0',
      HealthzBindAddress: '0.0.0.0:10256',
      MetricsBindAddress: '127.0.0.1:10249',
      BindAddressHardFail: false,
      EnableProfiling: false,
      ShowHiddenMetricsForVersion: '',
      Mode: 'ipvs',
      IPTables: { MasqueradeBit: 14, LocalhostNodePorts: true },
      IPVS: { Scheduler: '', ExcludeCIDRs: null, StrictARP: false, TCPTimeout: '0s', TCPFinTimeout: '0s', UDPTimeout: '0s' },
      Winkernel: { NetworkName: '', SourceVip: '', EnableDSR: false, RootHnsEndpointName: '', ForwardHealthCheckVip: false },
      NFTables: { MasqueradeBit: 14 },
      DetectLocalMode: 'ClusterCIDR',
      DetectLocal: { BridgeInterface: '', ClusterCIDRs: null, InterfaceNamePrefix: '' },
      NodePortAddresses: null,
      // The flags' internal defaults: one sync period pair, minSyncPeriod 1s.
      SyncPeriod: '30s',
      MinSyncPeriod: '1s',
      ConfigSyncPeriod: '15m0s',
    },
  };
  sameInOrder(t, JSON.parse(r.body), want);
  t.equal(r.body, JSON.stringify(want), 'byte for byte: compact, as json.Marshal writes it');
});

t.test('a file with several fields set: converted as upstream converts v1alpha1, primary rewritten to the node IPs', async (t) => {
  const file = join(scratchDir('configz-'), 'c.yaml');
  writeFileSync(
    file,
    `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: ipvs
featureGates: {AllBeta: false, AllAlpha: false}
clientConnection: {kubeconfig: '/etc/a<b>&c.conf', qps: 0.1, burst: 20}
hostnameOverride: Node-1
bindAddress: 192.168.56.10
logging: {verbosity: 2, vmodule: [{filePattern: proxier, verbosity: 4}]}
iptables: {masqueradeAll: true, syncPeriod: 1m}
ipvs: {scheduler: wrr, syncPeriod: 10s, minSyncPeriod: 500ms, excludeCIDRs: [], strictARP: true, tcpFinTimeout: 1m30s, udpTimeout: 1500us}
clusterCIDR: 10.244.0.0/16,fd00:10:244::/56
nodePortAddresses: [primary]
oomScoreAdj: -500
conntrack: {maxPerCore: 0, tcpBeLiberal: true, udpTimeout: 30s}
portRange: 30000-32767
`,
  );
  const { config } = resolveOptions(['--config', file]);
  const cz = new Configz(config);
  const before = JSON.parse((await configz(t, cz.value)).body)['kubeproxy.config.k8s.io'];
  t.same(before.NodePortAddresses, ['primary'], 'before the start knows the node: as written');
  startOn(cz, ['192.168.56.10', 'fd00::10']);
  const r = await configz(t, cz.value);
  const want = {
    Linux: {
      Conntrack: { MaxPerCore: 0, Min: 131072, TCPEstablishedTimeout: '24h0m0s', TCPCloseWaitTimeout: '1h0m0s', TCPBeLiberal: true, UDPTimeout: '30s', UDPStreamTimeout: '0s' },
      // ipvs mode: masqueradeAll comes from the iptables section.
      MasqueradeAll: true,
      OOMScoreAdj: -500,
    },
    Windows: { RunAsService: false },
    FeatureGates: { AllAlpha: false, AllBeta: false },
    ClientConnection: { Kubeconfig: '/etc/a<b>&c.conf', AcceptContentTypes: '', ContentType: 'application/vnd.kubernetes.protobuf', QPS: 0.1, Burst: 20 },
    Logging: { format: 'text', flushFrequency: '5s', verbosity: 2, vmodule: [{ filePattern: 'proxier', verbosity: 4 }], options: LOGGING_DEFAULT.options },
    HostnameOverride: 'Node-1',
    BindAddress: '192.168.56.10',
    HealthzBindAddress: '0.0.0.0:10256',
    MetricsBindAddress: '127.0.0.1:10249',
    BindAddressHardFail: false,
    EnableProfiling: false,
    ShowHiddenMetricsForVersion: '',
    Mode: 'ipvs',
    IPTables: { MasqueradeBit: 14, LocalhostNodePorts: true },
    IPVS: { Scheduler: 'wrr', ExcludeCIDRs: [], StrictARP: true, TCPTimeout: '0s', TCPFinTimeout: '1m30s', UDPTimeout: '1.5ms' },
    Winkernel: { NetworkName: '', SourceVip: '', EnableDSR: false, RootHnsEndpointName: '', ForwardHealthCheckVip: false },
    NFTables: { MasqueradeBit: 14 },
    DetectLocalMode: 'ClusterCIDR',
    DetectLocal: { BridgeInterface: '', ClusterCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'], InterfaceNamePrefix: '' },
    NodePortAddresses: ['192.168.56.10/32', 'fd00::10/128'],
    // The running mode's section; iptables.syncPeriod has no internal field.
    SyncPeriod: '10s',
    MinSyncPeriod: '500ms',
    ConfigSyncPeriod: '15m0s',
  };
  sameInOrder(t, JSON.parse(r.body)['kubeproxy.config.k8s.io'], want);
  t.match(r.body, /"Kubeconfig":"\/etc\/a\\u003cb\\u003e\\u0026c\.conf"/, '<, > and & escaped as Go escapes them');
  t.notMatch(r.body, /portRange|PortRange|rulesBackend|RulesBackend|"kind"/, 'no field the internal struct lacks');
  startOn(cz, ['10.0.0.1']);
  t.same(JSON.parse((await configz(t, cz.value)).body)['kubeproxy.config.k8s.io'].NodePortAddresses, ['192.168.56.10/32', 'fd00::10/128'], 'rewritten once, at the start');
});

t.test('primary with only loopback node IPs is a nil slice; other entries stay where they are', async (t) => {
  const { config } = resolveOptions(['--proxy-mode=ipvs', '--hostname-override=node-1', '--nodeport-addresses=primary']);
  const lone = new Configz(config);
  startOn(lone, ['127.0.0.1']);
  t.equal(JSON.parse((await configz(t, lone.value)).body)['kubeproxy.config.k8s.io'].NodePortAddresses, null);
  const mixed = new Configz({ ...config, nodePortAddresses: ['10.0.0.0/8', 'primary', 'localhost'] });
  startOn(mixed, ['192.168.56.10']);
  t.same(JSON.parse((await configz(t, mixed.value)).body)['kubeproxy.config.k8s.io'].NodePortAddresses, ['10.0.0.0/8', '192.168.56.10/32', 'localhost']);
});

t.test("Go's encoding: float32 digits, string escapes, durations", async (t) => {
  t.equal(marshal(new Float32(0.1)), '0.1', 'float32 shortest digits, not float64 ones');
  t.equal(marshal(new Float32(16777217)), '16777216', 'rounded to float32');
  t.equal(marshal(new Float32(1e-7)), '1e-7', "exponent form below 1e-6, Go's e-07 tidied");
  t.equal(marshal(new Float32(3.4028234663852886e38)), '3.4028235e+38');
  t.equal(marshal(new Float32(1e20)), '100000000000000000000');
  t.equal(marshal(new Float32(-2.5)), '-2.5');
  t.equal(marshal('a\u2028b\u2029<>&"\\\n\u0001\ud800'), '"a\\u2028b\\u2029\\u003c\\u003e\\u0026\\"\\\\\\n\\u0001\ufffd"');
  t.equal(marshal({ b: -0, a: [1, null, true] }), '{"b":0,"a":[1,null,true]}', 'objects in the order built');
  t.same(
    [0, 0.0005, 0.0015, 1.5, 999, 1000, 90_000, 3_600_000, 86_400_000, 1500.5, -1500].map(formatDuration),
    ['0s', '500ns', '1.5µs', '1.5ms', '999ms', '1s', '1m30s', '1h0m0s', '24h0m0s', '1.5005s', '-1.5s'],
    "time.Duration.String's forms",
  );
});

t.test('a value Go cannot marshal: 500 with configz\'s error text', async (t) => {
  const r = await configz(t, () => ({ QPS: new Float32(Number.NaN) }));
  t.same(r, {
    status: 500,
    type: 'text/plain; charset=utf-8',
    nosniff: 'nosniff',
    body: 'error marshaling json: json: error calling MarshalJSON for type *configz.Config: json: unsupported value: NaN\n',
  });
});
