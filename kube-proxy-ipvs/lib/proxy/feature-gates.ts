/**
 * --feature-gates / featureGates: the gate names kube-proxy's registry
 * knows that matter to a proxy (pkg/features as kube-proxy reads it, and
 * component-base's logging, metrics and zpages gates), checked as
 * featuregate.SetFromMap checks them: an unknown name fails with
 * upstream's message, AllAlpha/AllBeta are accepted.
 *
 * KubeProxyIPVS=false is refused: this proxy is the IPVS mode, and upstream
 * plans the same refusal once the gate exists.
 */
import { OptionsError } from './options.js';

export const KNOWN_FEATURE_GATES: ReadonlySet<string> = new Set([
  'AllAlpha',
  'AllBeta',
  // component-base
  'ComponentFlagz',
  'ComponentStatusz',
  'ContextualLogging',
  'LoggingAlphaOptions',
  'LoggingBetaOptions',
  'LoggingStableOptions',
  'NativeHistograms',
  // pkg/features gates kube-proxy reads
  'KubeProxyIPVS',
  'KubeProxyDrainingTerminatingNodes',
  'KubeProxyNFTablesLocalhostNodePorts',
  'MultiCIDRServiceAllocator',
  'NFTablesProxyMode',
  'PreferSameTrafficDistribution',
  'ServiceTrafficDistribution',
  'TopologyAwareHints',
  'DisableAllocatorDualWrite',
]);

export function checkFeatureGates(gates: Record<string, boolean>): void {
  for (const [name, value] of Object.entries(gates)) {
    if (!KNOWN_FEATURE_GATES.has(name)) throw new OptionsError(`unrecognized feature gate: ${name}`);
    if (name === 'KubeProxyIPVS' && value === false) {
      throw new OptionsError('feature gate KubeProxyIPVS=false turns the IPVS proxy off, and IPVS is the only mode kube-proxy-ipvs runs');
    }
  }
}
