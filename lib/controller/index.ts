/**
 * The pure half of the kube-proxy controller: Kubernetes objects → desired
 * IPVS / ipset / address / iptables state → operations. No kernel access.
 */
export * from './model.js';
export type { DesiredState, CurrentState, Operation, IpsetOp, IpvsOp, AddressOp, IptablesOp, DesiredVirtualServer, CurrentVirtualServer } from './state.js';
export { DUMMY_DEVICE, emptyCurrentState, virtualServerKey, destinationKey } from './state.js';
export { ProxyState, desiredState } from './proxy-state.js';
export type { Scope } from './desired-index.js';
export { plan, planDrainedDeletions, gracefulRemovals, type PlanOptions } from './planner.js';
export { Mirror, type KernelSnapshot } from './mirror.js';
export { JUMP_RULES, masqueradeMark } from './iptables.js';
export { SET, SET_DEFINITIONS, ipsetName } from './ipsets.js';
export { loadManifests, ManifestError, type Manifests } from './manifests.js';
export { planOutput, type PlanOutput } from './plan-output.js';
export { Controller, type ControllerOptions, type ControllerCounters, type SyncResult, type SyncKind, type IpsetFailure } from './controller.js';
export { Applier, splitBulk, type ApplyReport, type FailedOperation, type OperationCounts } from './applier.js';
export { readKernel, type KernelRead } from './kernel-reader.js';
export { nodeContext, narrowNodePortIPs, usableLocalAddresses, type NodeContext } from './node-addresses.js';
export { IptablesRunner, DEFAULT_IPTABLES, LEGACY_IPTABLES, type IptablesTools, type IptablesCommands } from './iptables-runner.js';
export { kubeProxySysctls, writeSysctls, type Sysctl } from './sysctls.js';
