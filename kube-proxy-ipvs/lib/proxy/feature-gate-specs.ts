/**
 * Every feature gate the kube-proxy v1.37 binary registers, with its spec
 * at 1.37: its default, its stage, and whether it is locked to that
 * default. Data only; feature-gates.ts reads it.
 *
 * The registry is utilfeature.DefaultMutableFeatureGate as kube-proxy
 * fills it:
 * - component-base featuregate: AllAlpha and AllBeta;
 * - pkg/features/kube_features.go, defaultVersionedKubernetesFeatureGates:
 *   Kubernetes' own gates, with apiextensions-apiserver's, the generic
 *   apiserver's, two of controller-manager's and component-base zpages'
 *   relisted (apiserver's and apiextensions' own init add the same specs);
 * - client-go's gates, added through pkg/features' client adapter;
 * - cmd/kube-proxy/app/server.go's init: component-base metrics'
 *   (NativeHistograms) and logs/api/v1's gates.
 * controller-manager's ControllerManagerReleaseLeaderElectionLockOnExit is
 * added only by its register package or SetupCurrentKubernetesSpecificFeatureGates,
 * which kube-controller-manager calls and kube-proxy does not, so kube-proxy
 * does not know it. LoggingStableOptions is a name with no spec.
 *
 * A gate's spec at 1.37 is its last VersionedSpecs entry whose Version is
 * at most 1.37 and whose MinCompatibilityVersion, if any, is at most the
 * gate's minimum compatibility version, 1.36 (featuregate.NewFeatureGate:
 * the binary version, DefaultKubeBinaryVersion "1.37", less one minor). So
 * DRAFractionalCapacityRange is beta and off: its on-by-default 1.37 entry
 * asks for compatibility with 1.37. A GA gate is locked only where its spec
 * says LockToDefault; GA gates without it (ClusterTrustBundle,
 * SELinuxMount, MutatingAdmissionPolicy...) can still be turned off.
 *
 * The v1.37.0 tag is not among the sources read here. kube_features.go is
 * read at kubernetes 2a5a1c06c4bb (master on 2026-07-24, just after
 * v1.37.0-beta.0) and at a later master, ead35706ec68 (after the 1.37
 * branch: EnvFiles has a 1.38 entry there). The later one's 1.37 entries
 * are taken (DRADeviceCompatibilityGroups, InterPodAffinityHostnameFastPath
 * and SchedulerPreQueueingHints added as alpha; DRAWorkloadResourceClaims
 * and PodLevelResourceManagers beta and off); the six gates it no longer
 * lists (JobManagedBy, KubeletTracing, NFTablesProxyMode,
 * PodSchedulingReadiness, PreferSameTrafficDistribution,
 * ServiceAccountTokenPodNodeInfo) are kept, as 1.38's removals
 * (JobManagedBy's entry says "remove in 1.38"). The staging trees are
 * read as published on 2026-07-21..24: apiserver at kubernetes f99d91b8,
 * component-base at 578f9c96, client-go at 2a5a1c06,
 * apiextensions-apiserver and controller-manager at 5ffe7490.
 *
 * stage is featuregate's PreRelease, GA written out ('GA'; featuregate
 * writes it as the empty string).
 */

export type FeatureStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

export interface FeatureGateSpec {
  readonly default: boolean;
  readonly stage: FeatureStage;
  /** LockToDefault: set to anything but the default, the gate is refused. */
  readonly locked?: true;
}

export const FEATURE_GATE_SPECS: Readonly<Record<string, FeatureGateSpec>> = {
  // component-base featuregate: the special gates that set every unset alpha or beta gate.
  AllAlpha: { default: false, stage: 'ALPHA' },
  AllBeta: { default: false, stage: 'BETA' },

  // pkg/features/kube_features.go: Kubernetes' own gates.
  AllowDNSOnlyNodeCSR: { default: false, stage: 'DEPRECATED' },
  AllowInsecureKubeletCertificateSigningRequests: { default: false, stage: 'DEPRECATED' },
  AllowOverwriteTerminationGracePeriodSeconds: { default: false, stage: 'DEPRECATED', locked: true },
  AllowServiceExternalIPs: { default: true, stage: 'GA' },
  AtomicWriteVolumeUserFields: { default: false, stage: 'ALPHA' },
  AuthorizePodWebsocketUpgradeCreatePermission: { default: true, stage: 'BETA' },
  CPUManagerPolicyAlphaOptions: { default: false, stage: 'ALPHA' },
  CPUManagerPolicyBetaOptions: { default: true, stage: 'BETA' },
  CPUManagerPolicyOptions: { default: true, stage: 'GA', locked: true },
  CRIListStreaming: { default: false, stage: 'ALPHA' },
  CSIServiceAccountTokenSecrets: { default: true, stage: 'GA', locked: true },
  CSIVolumeHealth: { default: false, stage: 'ALPHA' },
  ChangeContainerStatusOnKubeletRestart: { default: false, stage: 'DEPRECATED' },
  ClearingNominatedNodeNameAfterBinding: { default: true, stage: 'BETA' },
  ClusterTrustBundle: { default: true, stage: 'GA' },
  ClusterTrustBundleProjection: { default: true, stage: 'GA' },
  CompositePodGroup: { default: false, stage: 'ALPHA' },
  ContainerCheckpoint: { default: true, stage: 'BETA' },
  ContainerRestartRules: { default: true, stage: 'BETA' },
  ContainerStopSignals: { default: false, stage: 'ALPHA' },
  CrossNamespaceVolumeDataSource: { default: false, stage: 'ALPHA' },
  CustomCPUCFSQuotaPeriod: { default: true, stage: 'GA' },
  DRAAdminAccess: { default: true, stage: 'GA', locked: true },
  DRAConsumableCapacity: { default: true, stage: 'BETA' },
  DRADerivedAttributes: { default: false, stage: 'ALPHA' },
  DRADeviceBindingConditions: { default: true, stage: 'BETA' },
  DRADeviceCompatibilityGroups: { default: false, stage: 'ALPHA' },
  DRADeviceTaintRules: { default: true, stage: 'GA' },
  DRADeviceTaints: { default: true, stage: 'GA' },
  DRAExtendedResource: { default: true, stage: 'GA', locked: true },
  DRAFractionalCapacityRange: { default: false, stage: 'BETA' },
  DRAListTypeAttributes: { default: false, stage: 'ALPHA' },
  DRANodeAllocatableResources: { default: false, stage: 'ALPHA' },
  DRAOptionalNodeOperations: { default: false, stage: 'ALPHA' },
  DRAPartitionableDevices: { default: true, stage: 'BETA' },
  DRAPartitionableDevicesType: { default: false, stage: 'ALPHA' },
  DRAPrioritizedList: { default: true, stage: 'GA', locked: true },
  DRAResourceClaimDeviceStatus: { default: true, stage: 'GA', locked: true },
  DRAResourceClaimGranularStatusAuthorization: { default: true, stage: 'BETA' },
  DRAResourcePoolStatus: { default: false, stage: 'ALPHA' },
  DRASchedulerFilterTimeout: { default: true, stage: 'BETA' },
  DRAWorkloadResourceClaims: { default: false, stage: 'BETA' },
  DefaultPodSysctls: { default: false, stage: 'ALPHA' },
  DeploymentReplicaSetTerminatingReplicas: { default: true, stage: 'BETA' },
  DisableAllocatorDualWrite: { default: true, stage: 'GA', locked: true },
  DisableCPUQuotaWithExclusiveCPUs: { default: true, stage: 'DEPRECATED', locked: true },
  DisableNodeKubeProxyVersion: { default: true, stage: 'DEPRECATED', locked: true },
  DynamicResourceAllocation: { default: true, stage: 'GA', locked: true },
  EmptyDirVolumeMode: { default: false, stage: 'ALPHA' },
  EnvFiles: { default: true, stage: 'BETA' },
  EventedPLEG: { default: false, stage: 'ALPHA' },
  EvictionRequestAPI: { default: false, stage: 'ALPHA' },
  ExecProbeTimeout: { default: true, stage: 'GA', locked: true },
  ExtendWebSocketsToKubelet: { default: true, stage: 'BETA' },
  ExternalServiceAccountTokenSigner: { default: true, stage: 'GA', locked: true },
  GRPCContainerProbeTLS: { default: false, stage: 'ALPHA' },
  GenericWorkload: { default: false, stage: 'BETA' },
  GitRepoVolumeDriver: { default: false, stage: 'DEPRECATED', locked: true },
  GracefulNodeShutdown: { default: true, stage: 'BETA' },
  GracefulNodeShutdownBasedOnPodPriority: { default: true, stage: 'BETA' },
  H2CContainerProbe: { default: false, stage: 'ALPHA' },
  HPAConfigurableTolerance: { default: true, stage: 'GA', locked: true },
  HPAGeneration: { default: true, stage: 'BETA' },
  HPAOptimizedSelectorStore: { default: true, stage: 'BETA' },
  HPAScaleToZero: { default: true, stage: 'BETA' },
  HostnameOverride: { default: true, stage: 'GA', locked: true },
  HugepageAwareEviction: { default: true, stage: 'BETA' },
  ImageMaximumGCAge: { default: true, stage: 'GA', locked: true },
  ImageVolume: { default: true, stage: 'GA', locked: true },
  ImageVolumeWithDigest: { default: false, stage: 'ALPHA' },
  InPlacePodLevelResourcesVerticalScaling: { default: true, stage: 'BETA' },
  InPlacePodVerticalScaling: { default: true, stage: 'GA', locked: true },
  InPlacePodVerticalScalingExclusiveCPUs: { default: false, stage: 'ALPHA' },
  InPlacePodVerticalScalingExclusiveMemory: { default: false, stage: 'ALPHA' },
  InPlacePodVerticalScalingInitContainers: { default: true, stage: 'GA', locked: true },
  InPlacePodVerticalScalingMemoryBackedVolumes: { default: false, stage: 'ALPHA' },
  InPlacePodVerticalScalingSchedulerPreemption: { default: false, stage: 'ALPHA' },
  InterPodAffinityHostnameFastPath: { default: false, stage: 'ALPHA' },
  JobManagedBy: { default: true, stage: 'GA', locked: true },
  KubeProxyIPVS: { default: true, stage: 'DEPRECATED' },
  KubeProxyNFTablesLocalhostNodePorts: { default: false, stage: 'ALPHA' },
  KubeletAllocatedPodsEndpoint: { default: false, stage: 'ALPHA' },
  KubeletCgroupDriverFromCRI: { default: true, stage: 'GA', locked: true },
  KubeletCrashLoopBackOffMax: { default: true, stage: 'BETA' },
  KubeletEnsureSecretPulledImages: { default: true, stage: 'BETA' },
  KubeletFineGrainedAuthz: { default: true, stage: 'GA', locked: true },
  KubeletInUserNamespace: { default: true, stage: 'BETA' },
  KubeletPSI: { default: true, stage: 'GA', locked: true },
  KubeletPodResourcesDynamicResources: { default: true, stage: 'GA', locked: true },
  KubeletPodResourcesGet: { default: true, stage: 'GA', locked: true },
  KubeletPodResourcesListUseActivePods: { default: true, stage: 'DEPRECATED' },
  KubeletRegistrationGetOnExistsOnly: { default: false, stage: 'DEPRECATED' },
  KubeletSeparateDiskGC: { default: true, stage: 'BETA' },
  KubeletServiceAccountTokenForCredentialProviders: { default: true, stage: 'BETA' },
  KubeletTracing: { default: true, stage: 'GA', locked: true },
  LocalStorageCapacityIsolationFSQuotaMonitoring: { default: false, stage: 'BETA' },
  MatchLabelKeysInPodAffinity: { default: true, stage: 'GA', locked: true },
  MatchLabelKeysInPodTopologySpread: { default: true, stage: 'BETA' },
  MatchLabelKeysInPodTopologySpreadSelectorMerge: { default: true, stage: 'BETA' },
  MaxUnavailableStatefulSet: { default: true, stage: 'BETA' },
  MemoryQoS: { default: true, stage: 'BETA' },
  MultiCIDRServiceAllocator: { default: true, stage: 'GA', locked: true },
  MutableCSINodeAllocatableCount: { default: true, stage: 'GA', locked: true },
  MutablePVNodeAffinity: { default: false, stage: 'ALPHA' },
  MutablePodResourcesForSuspendedJobs: { default: true, stage: 'BETA' },
  MutableSchedulingDirectivesForSuspendedJobs: { default: true, stage: 'BETA' },
  NFTablesNetlink: { default: true, stage: 'BETA' },
  NFTablesProxyMode: { default: true, stage: 'GA', locked: true },
  NodeControllerLeaseCircuitBreaker: { default: true, stage: 'BETA' },
  NodeDeclaredFeatures: { default: true, stage: 'GA', locked: true },
  NodeInclusionPolicyInPodTopologySpread: { default: true, stage: 'GA', locked: true },
  NodeLifecycleConditions: { default: false, stage: 'ALPHA' },
  NodeLogQuery: { default: true, stage: 'GA', locked: true },
  NodeSwap: { default: true, stage: 'GA', locked: true },
  NominatedNodeNameForExpectation: { default: true, stage: 'BETA' },
  OpportunisticBatching: { default: true, stage: 'BETA' },
  PLEGOnDemandRelist: { default: true, stage: 'GA', locked: true },
  PersistentVolumeClaimUnusedSinceTime: { default: true, stage: 'BETA' },
  PodAndContainerStatsFromCRI: { default: false, stage: 'BETA' },
  PodCertificateRequest: { default: true, stage: 'GA' },
  PodDeletionCost: { default: true, stage: 'BETA' },
  PodGroupPreemptionPolicy: { default: false, stage: 'ALPHA' },
  PodLevelResourceManagers: { default: false, stage: 'BETA' },
  PodLevelResources: { default: true, stage: 'BETA' },
  PodLevelResourcesFixDefaulting: { default: true, stage: 'BETA' },
  PodLevelResourcesFixKubeletQOSClass: { default: true, stage: 'BETA' },
  PodLogsQuerySplitStreams: { default: false, stage: 'ALPHA' },
  PodObservedGenerationTracking: { default: true, stage: 'GA', locked: true },
  PodReadyToStartContainersCondition: { default: true, stage: 'GA', locked: true },
  PodSchedulingReadiness: { default: true, stage: 'GA', locked: true },
  PodTopologyLabelsAdmission: { default: true, stage: 'BETA' },
  PodsAPI: { default: true, stage: 'BETA' },
  PortForwardWebsockets: { default: true, stage: 'BETA' },
  PreferSameTrafficDistribution: { default: true, stage: 'GA', locked: true },
  ProcMountType: { default: true, stage: 'GA', locked: true },
  QOSReserved: { default: false, stage: 'ALPHA' },
  RecoverVolumeExpansionFailure: { default: true, stage: 'GA', locked: true },
  RecursiveReadOnlyMounts: { default: true, stage: 'GA', locked: true },
  ReduceDefaultCrashLoopBackOffDecay: { default: false, stage: 'ALPHA' },
  RelaxedEnvironmentVariableValidation: { default: true, stage: 'GA', locked: true },
  RelaxedServiceNameValidation: { default: true, stage: 'GA', locked: true },
  ReloadKubeletClientCAFile: { default: true, stage: 'BETA' },
  ReloadKubeletServerCertificateFile: { default: true, stage: 'BETA' },
  ResourceHealthStatus: { default: true, stage: 'BETA' },
  ResourceHealthStatusMessage: { default: true, stage: 'BETA' },
  RestartAllContainersOnContainerExits: { default: true, stage: 'BETA' },
  RotateKubeletServerCertificate: { default: true, stage: 'BETA' },
  RuntimeClassInImageCriApi: { default: false, stage: 'ALPHA' },
  SELinuxChangePolicy: { default: true, stage: 'GA', locked: true },
  SELinuxMount: { default: true, stage: 'GA' },
  SELinuxMountReadWriteOncePod: { default: true, stage: 'GA', locked: true },
  SchedulerAsyncAPICalls: { default: false, stage: 'BETA' },
  SchedulerAsyncPreemption: { default: true, stage: 'BETA' },
  SchedulerPopFromBackoffQ: { default: true, stage: 'BETA' },
  SchedulerPreQueueingHints: { default: false, stage: 'ALPHA' },
  SeparateTaintEvictionController: { default: true, stage: 'GA', locked: true },
  ServiceAccountNodeAudienceRestriction: { default: true, stage: 'BETA' },
  ServiceAccountTokenJTI: { default: true, stage: 'GA', locked: true },
  ServiceAccountTokenNodeBinding: { default: true, stage: 'GA', locked: true },
  ServiceAccountTokenNodeBindingValidation: { default: true, stage: 'GA', locked: true },
  ServiceAccountTokenPodNodeInfo: { default: true, stage: 'GA', locked: true },
  ServiceCIDRStatusFieldWiping: { default: true, stage: 'DEPRECATED' },
  StaleControllerConsistencyDaemonSet: { default: true, stage: 'BETA' },
  StaleControllerConsistencyHPA: { default: true, stage: 'BETA' },
  StaleControllerConsistencyJob: { default: true, stage: 'BETA' },
  StaleControllerConsistencyReplicaSet: { default: true, stage: 'BETA' },
  StaleControllerConsistencyStatefulSet: { default: true, stage: 'BETA' },
  StatefulSetRecreateStrategy: { default: false, stage: 'ALPHA' },
  StatefulSetSemanticRevisionComparison: { default: true, stage: 'BETA' },
  StorageCapacityScoring: { default: true, stage: 'BETA' },
  StorageNamespaceIndex: { default: true, stage: 'DEPRECATED' },
  StorageVersionMigrator: { default: true, stage: 'GA' },
  StrictIPCIDRValidation: { default: true, stage: 'BETA' },
  SupplementalGroupsPolicy: { default: true, stage: 'GA', locked: true },
  SystemdWatchdog: { default: true, stage: 'GA', locked: true },
  TaintTolerationComparisonOperators: { default: false, stage: 'ALPHA' },
  TopologyAwareWorkloadScheduling: { default: false, stage: 'ALPHA' },
  TopologyManagerPolicyAlphaOptions: { default: false, stage: 'ALPHA' },
  TopologyManagerPolicyBetaOptions: { default: true, stage: 'BETA' },
  TopologyManagerPolicyOptions: { default: true, stage: 'GA', locked: true },
  TranslateStreamCloseWebsocketRequests: { default: true, stage: 'BETA' },
  UserNamespacesHostNetworkSupport: { default: false, stage: 'ALPHA' },
  UserNamespacesSupport: { default: true, stage: 'GA', locked: true },
  VolumeAttributesClass: { default: true, stage: 'GA', locked: true },
  VolumeBindMountOptions: { default: false, stage: 'ALPHA' },
  VolumeLimitScaling: { default: true, stage: 'BETA' },
  WinDSR: { default: true, stage: 'GA', locked: true },
  WinOverlay: { default: true, stage: 'GA', locked: true },
  WindowsCPUAndMemoryAffinity: { default: false, stage: 'ALPHA' },
  WindowsGracefulNodeShutdown: { default: true, stage: 'BETA' },
  WindowsHostNetwork: { default: false, stage: 'DEPRECATED' },
  WorkloadWithJob: { default: false, stage: 'ALPHA' },

  // apiextensions-apiserver pkg/features (relisted in kube_features.go).
  CRDObservedGenerationTracking: { default: true, stage: 'BETA' },
  CRDValidationRatcheting: { default: true, stage: 'GA', locked: true },
  CustomResourceFieldSelectors: { default: true, stage: 'GA', locked: true },

  // apiserver pkg/features (relisted in kube_features.go).
  APIResponseCompression: { default: true, stage: 'BETA' },
  APIServerIdentity: { default: true, stage: 'BETA' },
  APIServerWebhookAuthenticationToken: { default: false, stage: 'ALPHA' },
  APIServingWithRoutine: { default: false, stage: 'ALPHA' },
  AggregatedDiscoveryRemoveBetaType: { default: true, stage: 'DEPRECATED', locked: true },
  AllowParsingUserUIDFromCertAuth: { default: true, stage: 'BETA' },
  AllowUnsafeMalformedObjectDeletion: { default: true, stage: 'BETA' },
  CBORServingAndStorage: { default: false, stage: 'ALPHA' },
  ConcurrentWatchObjectDecode: { default: true, stage: 'BETA' },
  ConsistentListFromCacheSkipTimeoutFallback: { default: false, stage: 'ALPHA' },
  ConstrainedImpersonation: { default: true, stage: 'BETA' },
  CoordinatedLeaderElection: { default: false, stage: 'BETA' },
  DeclarativeValidation: { default: true, stage: 'GA', locked: true },
  DeclarativeValidationBeta: { default: true, stage: 'BETA' },
  DeclarativeValidationTakeover: { default: false, stage: 'DEPRECATED', locked: true },
  DetectCacheInconsistency: { default: true, stage: 'BETA' },
  EtcdRangeStream: { default: true, stage: 'BETA' },
  ExcludeAdmissionWebhookVirtualResources: { default: true, stage: 'BETA' },
  KMSv1: { default: false, stage: 'DEPRECATED' },
  ListFromCacheSnapshot: { default: true, stage: 'BETA' },
  ManifestBasedAdmissionControlConfig: { default: true, stage: 'BETA' },
  MutatingAdmissionPolicy: { default: true, stage: 'GA' },
  OpenAPIEnums: { default: true, stage: 'BETA' },
  RemoteRequestHeaderUID: { default: true, stage: 'BETA' },
  SeparateCacheWatchRPC: { default: false, stage: 'DEPRECATED', locked: true },
  ShardedListAndWatch: { default: false, stage: 'ALPHA' },
  SizeBasedListCostEstimate: { default: true, stage: 'BETA' },
  StorageVersionAPI: { default: false, stage: 'ALPHA' },
  StorageVersionHash: { default: true, stage: 'BETA' },
  StructuredAuthenticationConfigurationEgressSelector: { default: true, stage: 'BETA' },
  StructuredAuthenticationConfigurationJWKSMetrics: { default: true, stage: 'BETA' },
  TokenRequestServiceAccountUIDValidation: { default: true, stage: 'BETA' },
  UnauthenticatedHTTP2DOSMitigation: { default: true, stage: 'BETA' },
  UnknownVersionInteroperabilityProxy: { default: true, stage: 'BETA' },
  WatchCacheInitializationPostStartHook: { default: true, stage: 'GA', locked: true },
  WatchList: { default: true, stage: 'BETA' },
  WatchListCompression: { default: true, stage: 'BETA' },
  WebhookRoundTripLoadBalancing: { default: true, stage: 'BETA' },

  // controller-manager pkg/features, the two kube_features.go relists.
  CloudControllerManagerWatchBasedRoutesReconciliation: { default: false, stage: 'ALPHA' },
  CloudControllerManagerWebhook: { default: false, stage: 'ALPHA' },

  // component-base zpages/features.
  ComponentFlagz: { default: true, stage: 'BETA' },
  ComponentStatusz: { default: true, stage: 'BETA' },

  // client-go features/known_features.go, through the client adapter.
  AtomicFIFO: { default: true, stage: 'BETA' },
  ClientsAllowCARotation: { default: true, stage: 'BETA' },
  ClientsAllowCBOR: { default: false, stage: 'ALPHA' },
  ClientsAllowTLSCacheGC: { default: true, stage: 'BETA' },
  ClientsPreferCBOR: { default: false, stage: 'ALPHA' },
  InOrderInformers: { default: true, stage: 'GA', locked: true },
  InOrderInformersBatchProcess: { default: true, stage: 'BETA' },
  InformerResourceVersion: { default: true, stage: 'GA' },
  UnlockWhileProcessingFIFO: { default: true, stage: 'BETA' },
  WatchListClient: { default: true, stage: 'BETA' },

  // component-base metrics/features (kube-proxy's server.go init).
  NativeHistograms: { default: true, stage: 'BETA' },

  // component-base logs/api/v1 (kube-proxy's server.go init).
  ContextualLogging: { default: true, stage: 'BETA' },
  LoggingAlphaOptions: { default: false, stage: 'ALPHA' },
  LoggingBetaOptions: { default: true, stage: 'BETA' },
};
