/**
 * --feature-gates / featureGates against kube-proxy's gate registry: gates
 * newer releases added are accepted, gates upstream removed and misspelt
 * names are refused, and a locked gate only takes its locked value, each
 * failing with featuregate SetFromMap's message.
 */
import t from 'tap';
import { checkFeatureGates } from '../../lib/proxy/feature-gates.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';

t.test('gates added since 1.34 are known', async (t) => {
  for (const g of ['NodeDeclaredFeatures', 'MutablePVNodeAffinity', 'TaintTolerationComparisonOperators', 'UserNamespacesHostNetworkSupport', 'OpportunisticBatching', 'InOrderInformersBatchProcess', 'NativeHistograms', 'CompositePodGroup']) {
    t.doesNotThrow(() => checkFeatureGates({ [g]: true }), g);
  }
  t.same(resolveOptions(['--feature-gates=MutablePVNodeAffinity=true,AllAlpha=false']).options.featureGates, { MutablePVNodeAffinity: true, AllAlpha: false });
});

t.test('names the registry does not hold are refused', async (t) => {
  // The upstream names of these two gates are CustomCPUCFSQuotaPeriod and RuntimeClassInImageCriApi.
  for (const g of ['CPUCFSQuotaPeriod', 'RuntimeClassInImageCriAPI', 'LoggingStableOptions', 'ComponentSLIs']) {
    t.throws(() => checkFeatureGates({ [g]: true }), new RegExp(`^unrecognized feature gate: ${g}$`), g);
  }
  t.doesNotThrow(() => checkFeatureGates({ CustomCPUCFSQuotaPeriod: true, RuntimeClassInImageCriApi: false }));
});

t.test('a locked gate takes only its locked value', async (t) => {
  t.throws(() => checkFeatureGates({ NFTablesProxyMode: false }), /^cannot set feature gate NFTablesProxyMode to false, feature is locked to true$/);
  t.throws(() => checkFeatureGates({ TopologyAwareHints: false }), /^cannot set feature gate TopologyAwareHints to false, feature is locked to true$/);
  t.throws(() => checkFeatureGates({ ServiceTrafficDistribution: false }), /locked to true/);
  t.throws(() => checkFeatureGates({ PreferSameTrafficDistribution: false }), /locked to true/);
  t.throws(() => checkFeatureGates({ WatchFromStorageWithoutResourceVersion: true }), /^cannot set feature gate WatchFromStorageWithoutResourceVersion to true, feature is locked to false$/);
  t.doesNotThrow(() => checkFeatureGates({ NFTablesProxyMode: true, WatchFromStorageWithoutResourceVersion: false }), 'the locked value itself is accepted');
  t.throws(
    () => checkFeatureGates({ NFTablesProxyMode: false, TopologyAwareHints: false }),
    /^\[cannot set feature gate NFTablesProxyMode to false, feature is locked to true, cannot set feature gate TopologyAwareHints to false, feature is locked to true\]$/,
    'several are reported together, as an aggregate error prints them',
  );
  t.throws(() => resolveOptions(['--feature-gates=TopologyAwareHints=false']), /cannot set feature gate TopologyAwareHints to false, feature is locked to true/);
});

t.test('1.37 gates are known, gates 1.37 no longer registers are refused', async (t) => {
  for (const g of ['AtomicFIFO', 'UnlockWhileProcessingFIFO', 'NFTablesNetlink', 'EtcdRangeStream', 'WatchListCompression', 'StaleControllerConsistencyJob', 'StaleControllerConsistencyDaemonSet', 'KubeProxyIPVS', 'KubeProxyNFTablesLocalhostNodePorts']) {
    t.doesNotThrow(() => checkFeatureGates({ [g]: true }), g);
  }
  t.same(resolveOptions(['--feature-gates=AtomicFIFO=false']).options.featureGates, { AtomicFIFO: false });
  for (const g of ['InTreePluginPortworxUnregister', 'CSIMigrationPortworx', 'GangScheduling']) {
    t.throws(() => checkFeatureGates({ [g]: true }), new RegExp(`^unrecognized feature gate: ${g}$`), g);
  }
});

t.test('errors come in sorted name order and are aggregated as SetFromMap does', async (t) => {
  const locked = (g: string) => `cannot set feature gate ${g} to false, feature is locked to true`;
  // Sorted, TopologyAwareHints precedes the unknown Zzz; NFTablesProxyMode precedes both.
  t.throws(
    () => checkFeatureGates({ Zzz: true, TopologyAwareHints: false, NFTablesProxyMode: false }),
    { message: `[${locked('NFTablesProxyMode')}, ${locked('TopologyAwareHints')}, unrecognized feature gate: Zzz]` },
  );
  // The first unknown name in sorted order stops the check; later names are not looked at.
  t.throws(() => checkFeatureGates({ Zzz: true, Aaa: true, TopologyAwareHints: false }), { message: 'unrecognized feature gate: Aaa' });
  t.throws(() => checkFeatureGates({ TopologyAwareHints: false, Aaa: true }), { message: 'unrecognized feature gate: Aaa' });
  // A locked error is reported ahead of KubeProxyIPVS=false rather than hidden by it.
  t.throws(() => checkFeatureGates({ KubeProxyIPVS: false, NFTablesProxyMode: false }), { message: locked('NFTablesProxyMode') });
  t.throws(() => checkFeatureGates({ KubeProxyIPVS: false }), /KubeProxyIPVS=false/);
});
