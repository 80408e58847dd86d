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
