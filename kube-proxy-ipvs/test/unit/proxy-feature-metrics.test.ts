/**
 * kubernetes_feature_enabled{name,stage}, as component-base's
 * featuregate.AddMetrics records it and kube-proxy's /metrics carries it:
 * BETA stability, one series per known gate whatever --feature-gates set,
 * 1 for an enabled gate and 0 for a disabled one after --feature-gates
 * (AllAlpha / AllBeta included), the stage PreRelease's string, empty for
 * a GA gate.
 */
import t from 'tap';
import { KNOWN_FEATURE_GATES } from '../../lib/proxy/feature-gates.js';
import { ProxyMetrics } from '../../lib/proxy/metrics.js';
import { Proxy } from '../../lib/proxy/proxy.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';
import type { Source } from '../../lib/proxy/sources/source.js';
import { fakeFactory } from '../support/fake-controller.js';
import { logger } from '../support/started-proxy.js';

async function featureLines(m: ProxyMetrics): Promise<string[]> {
  return (await m.registry.metrics()).split('\n').filter((l) => l.includes('kubernetes_feature_enabled'));
}

function metrics(gates: Record<string, boolean>): ProxyMetrics {
  const m = new ProxyMetrics(() => undefined, { defaultMetrics: false });
  m.setFeatureGates(gates);
  return m;
}

t.test('HELP and TYPE as component-base writes them', async (t) => {
  const lines = await featureLines(metrics({}));
  t.equal(lines[0], '# HELP kubernetes_feature_enabled [BETA] This metric records the data about the stage and enablement of a k8s feature.');
  t.equal(lines[1], '# TYPE kubernetes_feature_enabled gauge');
  t.equal(lines.length, 2 + KNOWN_FEATURE_GATES.size, 'one series per known gate');
  const names = lines.slice(2).map((l) => /name="([^"]+)"/.exec(l)![1]);
  t.same(names, [...names].sort(), 'in name order, as Go writes them');
});

t.test('a gate at its default, a gate --feature-gates turned on, a GA gate', async (t) => {
  const lines = await featureLines(metrics({ KubeProxyNFTablesLocalhostNodePorts: true }));
  t.ok(lines.includes('kubernetes_feature_enabled{name="NFTablesNetlink",stage="BETA"} 1'), 'beta, on by default');
  t.ok(lines.includes('kubernetes_feature_enabled{name="LoggingAlphaOptions",stage="ALPHA"} 0'), 'alpha, off by default');
  t.ok(lines.includes('kubernetes_feature_enabled{name="KubeProxyNFTablesLocalhostNodePorts",stage="ALPHA"} 1'), 'turned on');
  t.ok(lines.includes('kubernetes_feature_enabled{name="NFTablesProxyMode",stage=""} 1'), 'GA: the stage is empty');
  t.ok(lines.includes('kubernetes_feature_enabled{name="SELinuxMount",stage=""} 1'));
  t.ok(lines.includes('kubernetes_feature_enabled{name="KubeProxyIPVS",stage="DEPRECATED"} 1'));
  t.ok(lines.includes('kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 0'), 'the special gates are series too');
  t.ok(lines.includes('kubernetes_feature_enabled{name="AllBeta",stage="BETA"} 0'));
});

t.test('turned off, and AllAlpha / AllBeta for the gates not set', async (t) => {
  const lines = await featureLines(metrics({ AllAlpha: true, AllBeta: false, ClientsAllowCBOR: false, WatchListClient: true }));
  t.ok(lines.includes('kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 1'));
  t.ok(lines.includes('kubernetes_feature_enabled{name="KubeProxyNFTablesLocalhostNodePorts",stage="ALPHA"} 1'), 'AllAlpha turns an unset alpha gate on');
  t.ok(lines.includes('kubernetes_feature_enabled{name="ClientsAllowCBOR",stage="ALPHA"} 0'), 'a gate set explicitly keeps its value');
  t.ok(lines.includes('kubernetes_feature_enabled{name="NFTablesNetlink",stage="BETA"} 0'), 'AllBeta=false turns an unset beta gate off');
  t.ok(lines.includes('kubernetes_feature_enabled{name="WatchListClient",stage="BETA"} 1'));
  t.ok(lines.includes('kubernetes_feature_enabled{name="NFTablesProxyMode",stage=""} 1'), 'GA gates follow neither');
});

t.test('set again, the series are replaced', async (t) => {
  const m = metrics({ NFTablesNetlink: false });
  m.setFeatureGates({});
  const lines = await featureLines(m);
  t.ok(lines.includes('kubernetes_feature_enabled{name="NFTablesNetlink",stage="BETA"} 1'));
  t.equal(lines.length, 2 + KNOWN_FEATURE_GATES.size);
});

t.test("the proxy records the resolved gates when it is made, as kube-proxy's AddMetrics before it runs", async (t) => {
  const source: Source = { description: 'none', start: async () => {}, stop: async () => {} };
  const { options } = resolveOptions(['--hostname-override=node-a', '--feature-gates=NFTablesNetlink=false,AllAlpha=true']);
  const proxy = new Proxy(options, { source, controllerFactory: fakeFactory(), logger, defaultMetrics: false });
  const lines = await featureLines(proxy.metrics);
  t.ok(lines.includes('kubernetes_feature_enabled{name="NFTablesNetlink",stage="BETA"} 0'));
  t.ok(lines.includes('kubernetes_feature_enabled{name="EvictionRequestAPI",stage="ALPHA"} 1'));
  t.ok(lines.includes('kubernetes_feature_enabled{name="KubeProxyIPVS",stage="DEPRECATED"} 1'));
});
