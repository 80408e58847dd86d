/**
 * --feature-gates / featureGates against kube-proxy's gate registry: gates
 * newer releases added are accepted, gates upstream removed and misspelt
 * names are refused, and a locked gate only takes its locked value, each
 * failing with featuregate SetFromMap's message. Then the values the gates
 * take once set (featuregate's Enabled, AllAlpha and AllBeta included).
 */
import t from 'tap';
import { FEATURE_GATE_SPECS } from '../../lib/proxy/feature-gate-specs.js';
import { featureGateEnabled, featureGateStates } from '../../lib/proxy/feature-gate-state.js';
import { checkFeatureGates, KNOWN_FEATURE_GATES, lockedValue } from '../../lib/proxy/feature-gates.js';
import { resolveOptions } from '../../lib/proxy/resolve-options.js';

t.test('gates added since 1.34 are known', async (t) => {
  for (const g of ['NodeDeclaredFeatures', 'MutablePVNodeAffinity', 'TaintTolerationComparisonOperators', 'UserNamespacesHostNetworkSupport', 'OpportunisticBatching', 'InOrderInformersBatchProcess', 'NativeHistograms', 'CompositePodGroup']) {
    t.doesNotThrow(() => checkFeatureGates({ [g]: true }), g);
  }
  t.same(resolveOptions(['--feature-gates=MutablePVNodeAffinity=true,AllAlpha=false']).options.featureGates, { MutablePVNodeAffinity: true, AllAlpha: false });
});

t.test('names the registry does not hold are refused', async (t) => {
  // The upstream names of these two gates are CustomCPUCFSQuotaPeriod and RuntimeClassInImageCriApi.
  for (const g of ['CPUCFSQuotaPeriod', 'RuntimeClassInImageCriAPI', 'LoggingStableOptions', 'ComponentSLIs', 'constructor', 'toString']) {
    t.throws(() => checkFeatureGates({ [g]: true }), new RegExp(`^unrecognized feature gate: ${g}$`), g);
  }
  t.doesNotThrow(() => checkFeatureGates({ CustomCPUCFSQuotaPeriod: true, RuntimeClassInImageCriApi: false }));
});

t.test('a locked gate takes only its locked value', async (t) => {
  t.throws(() => checkFeatureGates({ NFTablesProxyMode: false }), /^cannot set feature gate NFTablesProxyMode to false, feature is locked to true$/);
  t.throws(() => checkFeatureGates({ MultiCIDRServiceAllocator: false }), /^cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true$/);
  t.throws(() => checkFeatureGates({ PreferSameTrafficDistribution: false }), /locked to true/);
  t.throws(() => checkFeatureGates({ SeparateCacheWatchRPC: true }), /^cannot set feature gate SeparateCacheWatchRPC to true, feature is locked to false$/);
  t.doesNotThrow(() => checkFeatureGates({ NFTablesProxyMode: true, SeparateCacheWatchRPC: false }), 'the locked value itself is accepted');
  t.throws(
    () => checkFeatureGates({ NFTablesProxyMode: false, MultiCIDRServiceAllocator: false }),
    /^\[cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true, cannot set feature gate NFTablesProxyMode to false, feature is locked to true\]$/,
    'several are reported together, as an aggregate error prints them',
  );
  t.throws(() => resolveOptions(['--feature-gates=MultiCIDRServiceAllocator=false']), /cannot set feature gate MultiCIDRServiceAllocator to false, feature is locked to true/);
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

t.test('the whole 1.37 registry: gates the earlier list lacked are accepted, gates upstream removed are refused', async (t) => {
  // Registered in 1.37 (kube_features.go, apiserver, client-go), missing from the list before.
  for (const g of [
    'DefaultPodSysctls', 'VolumeBindMountOptions', 'APIServerWebhookAuthenticationToken', 'PodsAPI', 'AllowServiceExternalIPs',
    'ClientsAllowCARotation', 'ClientsAllowTLSCacheGC', 'DeclarativeValidationBeta', 'ManifestBasedAdmissionControlConfig',
    'NodeControllerLeaseCircuitBreaker', 'StaleControllerConsistencyHPA', 'WorkloadWithJob', 'ShardedListAndWatch', 'HugepageAwareEviction',
  ]) {
    t.doesNotThrow(() => checkFeatureGates({ [g]: false }), g);
  }
  // controller-manager's own gate is added only by kube-controller-manager; the rest were removed upstream after locking.
  for (const g of [
    'ControllerManagerReleaseLeaderElectionLockOnExit', 'TopologyAwareHints', 'ServiceTrafficDistribution', 'SidecarContainers',
    'WatchFromStorageWithoutResourceVersion', 'APIServerTracing', 'ConsistentListFromCache', 'StructuredAuthenticationConfiguration',
    'AnyVolumeDataSource', 'RetryGenerateName', 'MemoryManager',
  ]) {
    t.throws(() => checkFeatureGates({ [g]: true }), { message: `unrecognized feature gate: ${g}` }, g);
  }
  // Locked in 1.37 where the list before had them free, and GA gates still free.
  t.throws(() => checkFeatureGates({ HostnameOverride: false }), { message: 'cannot set feature gate HostnameOverride to false, feature is locked to true' });
  t.throws(() => checkFeatureGates({ InOrderInformers: false }), { message: 'cannot set feature gate InOrderInformers to false, feature is locked to true' });
  t.throws(() => checkFeatureGates({ DeclarativeValidationTakeover: true }), { message: 'cannot set feature gate DeclarativeValidationTakeover to true, feature is locked to false' });
  t.doesNotThrow(() => checkFeatureGates({ SELinuxMount: false, ClusterTrustBundle: false, MutatingAdmissionPolicy: false, DRADeviceTaints: false }));
  t.equal(KNOWN_FEATURE_GATES.size, Object.keys(FEATURE_GATE_SPECS).length);
  t.equal(lockedValue('KubeProxyIPVS'), undefined, 'deprecated, not locked');
  t.equal(lockedValue('GitRepoVolumeDriver'), false);
  t.equal(lockedValue('NoSuchGate'), undefined);
  t.same(FEATURE_GATE_SPECS.DRAFractionalCapacityRange, { default: false, stage: 'BETA' }, 'its on-by-default entry needs min compatibility 1.37');
});

t.test('every spec is well formed', async (t) => {
  for (const [name, spec] of Object.entries(FEATURE_GATE_SPECS)) {
    t.ok(['ALPHA', 'BETA', 'GA', 'DEPRECATED'].includes(spec.stage), name);
    t.ok(spec.locked === undefined || spec.locked === true, name);
    // Nothing in 1.37 locks an alpha or beta gate.
    if (spec.locked) t.ok(spec.stage === 'GA' || spec.stage === 'DEPRECATED', `${name} locked at ${spec.stage}`);
    if (spec.stage === 'ALPHA') t.equal(spec.default, false, `${name}: alpha gates are off`);
  }
});

t.test('errors come in sorted name order and are aggregated as SetFromMap does', async (t) => {
  const locked = (g: string) => `cannot set feature gate ${g} to false, feature is locked to true`;
  // Sorted, NodeSwap precedes the unknown Zzz; MultiCIDRServiceAllocator precedes both.
  t.throws(
    () => checkFeatureGates({ Zzz: true, NodeSwap: false, MultiCIDRServiceAllocator: false }),
    { message: `[${locked('MultiCIDRServiceAllocator')}, ${locked('NodeSwap')}, unrecognized feature gate: Zzz]` },
  );
  // The first unknown name in sorted order stops the check; later names are not looked at.
  t.throws(() => checkFeatureGates({ Zzz: true, Aaa: true, NodeSwap: false }), { message: 'unrecognized feature gate: Aaa' });
  t.throws(() => checkFeatureGates({ NodeSwap: false, Aaa: true }), { message: 'unrecognized feature gate: Aaa' });
  // A locked error is reported ahead of KubeProxyIPVS=false rather than hidden by it.
  t.throws(() => checkFeatureGates({ KubeProxyIPVS: false, NFTablesProxyMode: false }), { message: locked('NFTablesProxyMode') });
  t.throws(() => checkFeatureGates({ KubeProxyIPVS: false }), /KubeProxyIPVS=false/);
});

t.test('a gate is enabled as featuregate says once the gates are set', async (t) => {
  t.equal(featureGateEnabled({}, 'NFTablesNetlink'), true, 'beta, on by default');
  t.equal(featureGateEnabled({}, 'KubeProxyNFTablesLocalhostNodePorts'), false, 'alpha, off by default');
  t.equal(featureGateEnabled({ NFTablesNetlink: false }, 'NFTablesNetlink'), false, 'set explicitly');
  // AllAlpha / AllBeta set every alpha / beta gate not set explicitly, whatever the order.
  t.equal(featureGateEnabled({ AllAlpha: true }, 'KubeProxyNFTablesLocalhostNodePorts'), true);
  t.equal(featureGateEnabled({ KubeProxyNFTablesLocalhostNodePorts: false, AllAlpha: true }, 'KubeProxyNFTablesLocalhostNodePorts'), false);
  t.equal(featureGateEnabled({ AllAlpha: true }, 'NFTablesNetlink'), true, 'AllAlpha leaves beta gates');
  t.equal(featureGateEnabled({ AllBeta: false }, 'NFTablesNetlink'), false, 'AllBeta=false turns beta gates off');
  t.equal(featureGateEnabled({ AllBeta: false }, 'KubeProxyIPVS'), true, 'and leaves deprecated ones');
  t.equal(featureGateEnabled({ AllBeta: false }, 'LoggingBetaOptions'), false);
  t.equal(featureGateEnabled({ AllBeta: true }, 'DRAFractionalCapacityRange'), true);
  t.equal(featureGateEnabled({ AllAlpha: true }, 'AllBeta'), false, 'the special gates only take their own value');
  t.equal(featureGateEnabled({ AllBeta: true }, 'AllBeta'), true);
  t.throws(() => featureGateEnabled({}, 'NoSuchGate'), /not registered/);

  const states = featureGateStates({ AllAlpha: true, ClientsAllowCBOR: false });
  t.equal(states.length, KNOWN_FEATURE_GATES.size, 'one per known gate');
  t.same(states.map((s) => s.name), [...KNOWN_FEATURE_GATES].sort(), 'in name order');
  const by = new Map(states.map((s) => [s.name, s]));
  t.same(by.get('AllAlpha'), { name: 'AllAlpha', stage: 'ALPHA', enabled: true });
  t.same(by.get('AllBeta'), { name: 'AllBeta', stage: 'BETA', enabled: false });
  t.same(by.get('ClientsAllowCBOR'), { name: 'ClientsAllowCBOR', stage: 'ALPHA', enabled: false });
  t.same(by.get('ClientsPreferCBOR'), { name: 'ClientsPreferCBOR', stage: 'ALPHA', enabled: true });
  t.same(by.get('NFTablesProxyMode'), { name: 'NFTablesProxyMode', stage: '', enabled: true }, 'GA is the empty stage');
  t.same(by.get('KubeProxyIPVS'), { name: 'KubeProxyIPVS', stage: 'DEPRECATED', enabled: true });
});
