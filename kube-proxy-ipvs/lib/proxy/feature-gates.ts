/**
 * --feature-gates / featureGates, checked as featuregate.SetFromMap checks
 * them: any name the registry knows is accepted (feature-gate-names.ts),
 * an unknown one fails with upstream's message.
 *
 * KubeProxyIPVS=false is refused: this proxy is the IPVS mode, and upstream
 * plans the same refusal once the gate exists.
 */
import { FEATURE_GATE_NAMES } from './feature-gate-names.js';
import { OptionsError } from './options.js';

export const KNOWN_FEATURE_GATES: ReadonlySet<string> = new Set(FEATURE_GATE_NAMES);

export function checkFeatureGates(gates: Record<string, boolean>): void {
  for (const [name, value] of Object.entries(gates)) {
    if (!KNOWN_FEATURE_GATES.has(name)) throw new OptionsError(`unrecognized feature gate: ${name}`);
    if (name === 'KubeProxyIPVS' && value === false) {
      throw new OptionsError('feature gate KubeProxyIPVS=false turns the IPVS proxy off, and IPVS is the only mode kube-proxy-ipvs runs');
    }
  }
}
