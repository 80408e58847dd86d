/**
 * The feature-gate names kube-proxy's registry knows. Upstream sets
 * --feature-gates into the whole Kubernetes gate registry, so any gate of
 * any component is accepted (and most mean nothing to a proxy); only an
 * unknown name is an error. The list is Kubernetes' generated gate list
 * (its compatibility-lifecycle reference, as of 1.34) plus the gates added
 * since that a proxy or component-base defines (NativeHistograms,
 * KubeProxyIPVS, ...). Names only: which of them change behaviour here is
 * decided where they are read.
 */
export const FEATURE_GATE_NAMES: readonly string[] = [
  'AllAlpha', 'AllBeta',
  'AggregatedDiscoveryRemoveBetaType', 'AllowDNSOnlyNodeCSR', 'AllowInsecureKubeletCertificateSigningRequests',
  'AllowOverwriteTerminationGracePeriodSeconds', 'AllowParsingUserUIDFromCertAuth', 'AllowServiceLBStatusOnNonLB',
  'AllowUnsafeMalformedObjectDeletion', 'AnonymousAuthConfigurableEndpoints', 'AnyVolumeDataSource', 'APIResponseCompression',
  'APIServerIdentity', 'APIServerTracing', 'APIServingWithRoutine', 'AuthorizeNodeWithSelectors', 'AuthorizeWithSelectors',
  'BtreeWatchCache', 'CBORServingAndStorage', 'ClearingNominatedNodeNameAfterBinding', 'CloudControllerManagerWebhook',
  'ClusterTrustBundle', 'ClusterTrustBundleProjection', 'ComponentFlagz', 'ComponentSLIs', 'ComponentStatusz',
  'ConcurrentWatchObjectDecode', 'ConsistentListFromCache', 'ContainerCheckpoint', 'ContainerStopSignals', 'ContextualLogging',
  'CoordinatedLeaderElection', 'CPUCFSQuotaPeriod', 'CPUManagerPolicyAlphaOptions', 'CPUManagerPolicyBetaOptions',
  'CPUManagerPolicyOptions', 'CRDValidationRatcheting', 'CronJobsScheduledAnnotation', 'CrossNamespaceVolumeDataSource',
  'CSIMigrationPortworx', 'CSIVolumeHealth', 'CustomResourceFieldSelectors', 'DeclarativeValidation',
  'DeclarativeValidationTakeover', 'DeploymentReplicaSetTerminatingReplicas', 'DetectCacheInconsistency',
  'DevicePluginCDIDevices', 'DisableAllocatorDualWrite', 'DisableCPUQuotaWithExclusiveCPUs', 'DisableNodeKubeProxyVersion',
  'DRAAdminAccess', 'DRADeviceTaints', 'DRAPartitionableDevices', 'DRAPrioritizedList', 'DRAResourceClaimDeviceStatus',
  'DRASchedulerFilterTimeout', 'DynamicResourceAllocation', 'EventedPLEG', 'ExecProbeTimeout', 'ExternalServiceAccountTokenSigner',
  'GitRepoVolumeDriver', 'GracefulNodeShutdown', 'GracefulNodeShutdownBasedOnPodPriority', 'HonorPVReclaimPolicy',
  'HPAConfigurableTolerance', 'HPAScaleToZero', 'ImageMaximumGCAge', 'ImageVolume', 'InPlacePodVerticalScaling',
  'InPlacePodVerticalScalingAllocatedStatus', 'InPlacePodVerticalScalingExclusiveCPUs', 'InTreePluginPortworxUnregister',
  'JobBackoffLimitPerIndex', 'JobManagedBy', 'JobPodReplacementPolicy', 'JobSuccessPolicy', 'KMSv1', 'KubeletCgroupDriverFromCRI',
  'KubeletCrashLoopBackOffMax', 'KubeletEnsureSecretPulledImages', 'KubeletFineGrainedAuthz', 'KubeletInUserNamespace',
  'KubeletPodResourcesDynamicResources', 'KubeletPodResourcesGet', 'KubeletPodResourcesListUseActivePods', 'KubeletPSI',
  'KubeletRegistrationGetOnExistsOnly', 'KubeletSeparateDiskGC', 'KubeletServiceAccountTokenForCredentialProviders',
  'KubeletTracing', 'LegacySidecarContainers', 'ListFromCacheSnapshot', 'LoadBalancerIPMode',
  'LocalStorageCapacityIsolationFSQuotaMonitoring', 'LogarithmicScaleDown', 'LoggingAlphaOptions', 'LoggingBetaOptions',
  'MatchLabelKeysInPodAffinity', 'MatchLabelKeysInPodTopologySpread', 'MatchLabelKeysInPodTopologySpreadSelectorMerge',
  'MaxUnavailableStatefulSet', 'MemoryManager', 'MemoryQoS', 'MultiCIDRServiceAllocator', 'MutableCSINodeAllocatableCount',
  'MutatingAdmissionPolicy', 'NFTablesProxyMode', 'NodeInclusionPolicyInPodTopologySpread', 'NodeLogQuery', 'NodeSwap',
  'NominatedNodeNameForExpectation', 'OpenAPIEnums', 'OrderedNamespaceDeletion', 'PodAndContainerStatsFromCRI', 'PodDeletionCost',
  'PodIndexLabel', 'PodLevelResources', 'PodLifecycleSleepAction', 'PodLifecycleSleepActionAllowZero', 'PodLogsQuerySplitStreams',
  'PodObservedGenerationTracking', 'PodReadyToStartContainersCondition', 'PodSchedulingReadiness', 'PodTopologyLabelsAdmission',
  'PortForwardWebsockets', 'PreferSameTrafficDistribution', 'PreventStaticPodAPIReferences', 'ProcMountType', 'QOSReserved',
  'RecoverVolumeExpansionFailure', 'RecursiveReadOnlyMounts', 'ReduceDefaultCrashLoopBackOffDecay', 'RelaxedDNSSearchValidation',
  'RelaxedEnvironmentVariableValidation', 'RelaxedServiceNameValidation', 'ReloadKubeletServerCertificateFile',
  'RemoteRequestHeaderUID', 'ResilientWatchCacheInitialization', 'ResourceHealthStatus', 'RetryGenerateName',
  'RotateKubeletServerCertificate', 'RuntimeClassInImageCriAPI', 'SchedulerAsyncAPICalls', 'SchedulerAsyncPreemption',
  'SchedulerPopFromBackoffQ', 'SchedulerQueueingHints', 'SELinuxChangePolicy', 'SELinuxMount', 'SELinuxMountReadWriteOncePod',
  'SeparateCacheWatchRPC', 'SeparateTaintEvictionController', 'ServiceAccountNodeAudienceRestriction', 'ServiceAccountTokenJTI',
  'ServiceAccountTokenNodeBinding', 'ServiceAccountTokenNodeBindingValidation', 'ServiceAccountTokenPodNodeInfo',
  'ServiceTrafficDistribution', 'SidecarContainers', 'SizeBasedListCostEstimate', 'SizeMemoryBackedVolumes',
  'StatefulSetAutoDeletePVC', 'StorageCapacityScoring', 'StorageNamespaceIndex', 'StorageVersionAPI', 'StorageVersionHash',
  'StorageVersionMigrator', 'StreamingCollectionEncodingToJSON', 'StreamingCollectionEncodingToProtobuf',
  'StrictCostEnforcementForVAP', 'StrictCostEnforcementForWebhooks', 'StrictIPCIDRValidation',
  'StructuredAuthenticationConfiguration', 'StructuredAuthenticationConfigurationEgressSelector',
  'StructuredAuthorizationConfiguration', 'SupplementalGroupsPolicy', 'SystemdWatchdog', 'TokenRequestServiceAccountUIDValidation',
  'TopologyAwareHints', 'TopologyManagerPolicyAlphaOptions', 'TopologyManagerPolicyBetaOptions', 'TopologyManagerPolicyOptions',
  'TranslateStreamCloseWebsocketRequests', 'UnauthenticatedHTTP2DOSMitigation', 'UnknownVersionInteroperabilityProxy',
  'UserNamespacesPodSecurityStandards', 'UserNamespacesSupport', 'VolumeAttributesClass', 'WatchCacheInitializationPostStartHook',
  'WatchFromStorageWithoutResourceVersion', 'WatchList', 'WindowsCPUAndMemoryAffinity', 'WindowsGracefulNodeShutdown',
  'WindowsHostNetwork', 'WinDSR', 'WinOverlay',
  // Added after that list: component-base's and the proxy's.
  'LoggingStableOptions', 'NativeHistograms', 'KubeProxyIPVS', 'KubeProxyNFTablesLocalhostNodePorts',
];
