/**
 * The feature gates kube-proxy's registry knows, and which of them are
 * locked. Upstream sets --feature-gates into the whole Kubernetes gate
 * registry its binary builds: pkg/features (with the apiserver,
 * apiextensions, controller-manager and zpages gates it relists), the
 * client-go gates, and the logs and metrics gates kube-proxy adds itself
 * (logsapi, component-base/metrics/features). Any of them is accepted (and
 * most mean nothing to a proxy); an unknown name is an error, and so is a
 * locked gate set away from its default (featuregate SetFromMap).
 *
 * Written by hand from upstream's sources: pkg/features/kube_features.go
 * as of the 1.36 development cycle (the newest complete copy read), the
 * scheduler's gate file of the 1.37 cycle (its 1.37 gates and lock
 * changes), client-go's features/known_features.go, logs/api/v1 and
 * metrics/features. A gate's locked value is its newest versioned spec's
 * Default where that spec has LockToDefault: true.
 *
 * KubeProxyIPVS and KubeProxyNFTablesLocalhostNodePorts are not upstream
 * gates; they are kept for the settings feature-gates.ts reads.
 */
export const FEATURE_GATE_NAMES: readonly string[] = [
  'APIResponseCompression', 'APIServerIdentity', 'APIServerTracing', 'APIServingWithRoutine',
  'AggregatedDiscoveryRemoveBetaType', 'AllAlpha', 'AllBeta', 'AllowDNSOnlyNodeCSR',
  'AllowInsecureKubeletCertificateSigningRequests', 'AllowOverwriteTerminationGracePeriodSeconds',
  'AllowParsingUserUIDFromCertAuth', 'AllowUnsafeMalformedObjectDeletion', 'AnonymousAuthConfigurableEndpoints',
  'AnyVolumeDataSource', 'AuthorizeNodeWithSelectors', 'AuthorizePodWebsocketUpgradeCreatePermission', 'AuthorizeWithSelectors',
  'BtreeWatchCache', 'CBORServingAndStorage', 'CPUManagerPolicyAlphaOptions', 'CPUManagerPolicyBetaOptions',
  'CPUManagerPolicyOptions', 'CRDObservedGenerationTracking', 'CRDValidationRatcheting', 'CSIMigrationPortworx',
  'CSIServiceAccountTokenSecrets', 'CSIVolumeHealth', 'ChangeContainerStatusOnKubeletRestart',
  'ClearingNominatedNodeNameAfterBinding', 'ClientsAllowCBOR', 'ClientsPreferCBOR',
  'CloudControllerManagerWatchBasedRoutesReconciliation', 'CloudControllerManagerWebhook', 'ClusterTrustBundle',
  'ClusterTrustBundleProjection', 'ComponentFlagz', 'ComponentStatusz', 'CompositePodGroup', 'ConcurrentWatchObjectDecode',
  'ConsistentListFromCache', 'ConstrainedImpersonation', 'ContainerCheckpoint', 'ContainerRestartRules', 'ContainerStopSignals',
  'ContextualLogging', 'CoordinatedLeaderElection', 'CrossNamespaceVolumeDataSource', 'CustomCPUCFSQuotaPeriod',
  'CustomResourceFieldSelectors', 'DRAAdminAccess', 'DRAConsumableCapacity', 'DRADerivedAttributes',
  'DRADeviceBindingConditions', 'DRADeviceCompatibilityGroups', 'DRADeviceTaintRules', 'DRADeviceTaints', 'DRAExtendedResource',
  'DRAFractionalCapacityRange', 'DRAListTypeAttributes', 'DRANodeAllocatableResources', 'DRAOptionalNodeOperations',
  'DRAPartitionableDevices', 'DRAPrioritizedList', 'DRAResourceClaimDeviceStatus', 'DRASchedulerFilterTimeout',
  'DRAWorkloadResourceClaims', 'DeclarativeValidation', 'DeclarativeValidationTakeover',
  'DeploymentReplicaSetTerminatingReplicas', 'DetectCacheInconsistency', 'DisableAllocatorDualWrite',
  'DisableCPUQuotaWithExclusiveCPUs', 'DisableNodeKubeProxyVersion', 'DynamicResourceAllocation', 'EnvFiles', 'EventedPLEG',
  'ExecProbeTimeout', 'ExternalServiceAccountTokenSigner', 'GangScheduling', 'GenericWorkload', 'GitRepoVolumeDriver',
  'GracefulNodeShutdown', 'GracefulNodeShutdownBasedOnPodPriority', 'HPAConfigurableTolerance', 'HPAScaleToZero',
  'HonorPVReclaimPolicy', 'HostnameOverride', 'ImageMaximumGCAge', 'ImageVolume', 'ImageVolumeWithDigest', 'InOrderInformers',
  'InOrderInformersBatchProcess', 'InPlacePodLevelResourcesVerticalScaling', 'InPlacePodVerticalScaling',
  'InPlacePodVerticalScalingAllocatedStatus', 'InPlacePodVerticalScalingExclusiveCPUs',
  'InPlacePodVerticalScalingExclusiveMemory', 'InPlacePodVerticalScalingSchedulerPreemption', 'InTreePluginPortworxUnregister',
  'InformerResourceVersion', 'InterPodAffinityHostnameFastPath', 'JobBackoffLimitPerIndex', 'JobManagedBy',
  'JobPodReplacementPolicy', 'JobSuccessPolicy', 'KMSv1', 'KubeletCgroupDriverFromCRI', 'KubeletCrashLoopBackOffMax',
  'KubeletEnsureSecretPulledImages', 'KubeletFineGrainedAuthz', 'KubeletInUserNamespace', 'KubeletPSI',
  'KubeletPodResourcesDynamicResources', 'KubeletPodResourcesGet', 'KubeletPodResourcesListUseActivePods',
  'KubeletRegistrationGetOnExistsOnly', 'KubeletSeparateDiskGC', 'KubeletServiceAccountTokenForCredentialProviders',
  'KubeletTracing', 'ListFromCacheSnapshot', 'LocalStorageCapacityIsolationFSQuotaMonitoring', 'LogarithmicScaleDown',
  'LoggingAlphaOptions', 'LoggingBetaOptions', 'MatchLabelKeysInPodAffinity', 'MatchLabelKeysInPodTopologySpread',
  'MatchLabelKeysInPodTopologySpreadSelectorMerge', 'MaxUnavailableStatefulSet', 'MemoryManager', 'MemoryQoS',
  'MultiCIDRServiceAllocator', 'MutableCSINodeAllocatableCount', 'MutablePVNodeAffinity', 'MutablePodResourcesForSuspendedJobs',
  'MutableSchedulingDirectivesForSuspendedJobs', 'MutatingAdmissionPolicy', 'NFTablesProxyMode', 'NativeHistograms',
  'NodeDeclaredFeatures', 'NodeInclusionPolicyInPodTopologySpread', 'NodeLogQuery', 'NodeSwap',
  'NominatedNodeNameForExpectation', 'OpenAPIEnums', 'OpportunisticBatching', 'OrderedNamespaceDeletion',
  'PodAndContainerStatsFromCRI', 'PodCertificateRequest', 'PodDeletionCost', 'PodGroupPreemptionPolicy', 'PodLevelResources',
  'PodLifecycleSleepAction', 'PodLifecycleSleepActionAllowZero', 'PodLogsQuerySplitStreams', 'PodObservedGenerationTracking',
  'PodReadyToStartContainersCondition', 'PodSchedulingReadiness', 'PodTopologyLabelsAdmission', 'PortForwardWebsockets',
  'PreferSameTrafficDistribution', 'PreventStaticPodAPIReferences', 'ProcMountType', 'QOSReserved',
  'RecoverVolumeExpansionFailure', 'RecursiveReadOnlyMounts', 'ReduceDefaultCrashLoopBackOffDecay', 'RelaxedDNSSearchValidation',
  'RelaxedEnvironmentVariableValidation', 'RelaxedServiceNameValidation', 'ReloadKubeletServerCertificateFile',
  'RemoteRequestHeaderUID', 'ResilientWatchCacheInitialization', 'ResourceHealthStatus', 'RestartAllContainersOnContainerExits',
  'RetryGenerateName', 'RotateKubeletServerCertificate', 'RuntimeClassInImageCriApi', 'SELinuxChangePolicy', 'SELinuxMount',
  'SELinuxMountReadWriteOncePod', 'SchedulerAsyncAPICalls', 'SchedulerAsyncPreemption', 'SchedulerPopFromBackoffQ',
  'SchedulerPreQueueingHints', 'SchedulerQueueingHints', 'SeparateCacheWatchRPC', 'SeparateTaintEvictionController',
  'ServiceAccountNodeAudienceRestriction', 'ServiceAccountTokenJTI', 'ServiceAccountTokenNodeBinding',
  'ServiceAccountTokenNodeBindingValidation', 'ServiceAccountTokenPodNodeInfo', 'ServiceTrafficDistribution',
  'SidecarContainers', 'SizeBasedListCostEstimate', 'StatefulSetSemanticRevisionComparison', 'StorageCapacityScoring',
  'StorageNamespaceIndex', 'StorageVersionAPI', 'StorageVersionHash', 'StorageVersionMigrator',
  'StreamingCollectionEncodingToJSON', 'StreamingCollectionEncodingToProtobuf', 'StrictIPCIDRValidation',
  'StructuredAuthenticationConfiguration', 'StructuredAuthenticationConfigurationEgressSelector',
  'StructuredAuthenticationConfigurationJWKSMetrics', 'StructuredAuthorizationConfiguration', 'SupplementalGroupsPolicy',
  'SystemdWatchdog', 'TaintTolerationComparisonOperators', 'TokenRequestServiceAccountUIDValidation', 'TopologyAwareHints',
  'TopologyAwareWorkloadScheduling', 'TopologyManagerPolicyAlphaOptions', 'TopologyManagerPolicyBetaOptions',
  'TopologyManagerPolicyOptions', 'TranslateStreamCloseWebsocketRequests', 'UnauthenticatedHTTP2DOSMitigation',
  'UnknownVersionInteroperabilityProxy', 'UserNamespacesHostNetworkSupport', 'UserNamespacesSupport', 'VolumeAttributesClass',
  'VolumeLimitScaling', 'WatchCacheInitializationPostStartHook', 'WatchFromStorageWithoutResourceVersion', 'WatchList',
  'WatchListClient', 'WinDSR', 'WinOverlay', 'WindowsCPUAndMemoryAffinity', 'WindowsGracefulNodeShutdown', 'WindowsHostNetwork',
  // This proxy's own.
  'KubeProxyIPVS', 'KubeProxyNFTablesLocalhostNodePorts',
];

/** Gates locked to a value: setting any other value fails, as upstream's SetFromMap does. */
export const LOCKED_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  APIServerTracing: true, AggregatedDiscoveryRemoveBetaType: true, AnonymousAuthConfigurableEndpoints: true,
  AnyVolumeDataSource: true, AuthorizeNodeWithSelectors: true, AuthorizeWithSelectors: true, BtreeWatchCache: true,
  CPUManagerPolicyOptions: true, CRDValidationRatcheting: true, CSIMigrationPortworx: true, ConsistentListFromCache: true,
  CustomResourceFieldSelectors: true, DRAAdminAccess: true, DRAExtendedResource: true, DRAPrioritizedList: true,
  DRAResourceClaimDeviceStatus: true, DisableAllocatorDualWrite: true, DynamicResourceAllocation: true, ExecProbeTimeout: true,
  HonorPVReclaimPolicy: true, ImageMaximumGCAge: true, InPlacePodVerticalScaling: true, JobBackoffLimitPerIndex: true,
  JobManagedBy: true, JobPodReplacementPolicy: true, JobSuccessPolicy: true, KubeletCgroupDriverFromCRI: true,
  KubeletTracing: true, LogarithmicScaleDown: true, MatchLabelKeysInPodAffinity: true, MemoryManager: true,
  MultiCIDRServiceAllocator: true, NFTablesProxyMode: true, NodeDeclaredFeatures: true,
  NodeInclusionPolicyInPodTopologySpread: true, NodeSwap: true, OrderedNamespaceDeletion: true, PodLifecycleSleepAction: true,
  PodLifecycleSleepActionAllowZero: true, PodObservedGenerationTracking: true, PodSchedulingReadiness: true,
  PreferSameTrafficDistribution: true, RecoverVolumeExpansionFailure: true, RecursiveReadOnlyMounts: true,
  RelaxedDNSSearchValidation: true, RelaxedEnvironmentVariableValidation: true, ResilientWatchCacheInitialization: true,
  RetryGenerateName: true, SchedulerQueueingHints: true, SeparateTaintEvictionController: true, ServiceAccountTokenJTI: true,
  ServiceAccountTokenNodeBinding: true, ServiceAccountTokenNodeBindingValidation: true, ServiceAccountTokenPodNodeInfo: true,
  ServiceTrafficDistribution: true, SidecarContainers: true, StreamingCollectionEncodingToJSON: true,
  StreamingCollectionEncodingToProtobuf: true, StructuredAuthenticationConfiguration: true,
  StructuredAuthorizationConfiguration: true, SupplementalGroupsPolicy: true, SystemdWatchdog: true, TopologyAwareHints: true,
  VolumeAttributesClass: true, WinDSR: true, WinOverlay: true,
  AllowOverwriteTerminationGracePeriodSeconds: false, WatchFromStorageWithoutResourceVersion: false,
};
