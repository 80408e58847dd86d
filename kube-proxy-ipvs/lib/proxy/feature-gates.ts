/**
 * --feature-gates / featureGates, checked as featuregate SetFromMap checks
 * them: names are taken in sorted order, a locked gate set away from its
 * locked value adds an error and the check goes on, and an unknown name
 * adds "unrecognized feature gate" and stops there. The errors collected
 * are reported together in utilerrors.NewAggregate's form, so a user sees
 * the same message upstream kube-proxy prints.
 *
 * KubeProxyIPVS is upstream's gate for selecting the ipvs proxy mode
 * (deprecated in 1.37, on by default). With it off, the ipvs mode is not
 * available; this proxy is only the ipvs mode, so that setting is refused
 * once the gates themselves are valid.
 */
import { aggregate } from './bad-config.js';
import { FEATURE_GATE_NAMES, LOCKED_FEATURE_GATES } from './feature-gate-names.js';
import { OptionsError } from './options.js';

export const KNOWN_FEATURE_GATES: ReadonlySet<string> = new Set(FEATURE_GATE_NAMES);

export function checkFeatureGates(gates: Record<string, boolean>): void {
  const errors: string[] = [];
  // Go's sort.Strings orders by bytes; the default sort does the same for these ASCII names.
  for (const name of Object.keys(gates).sort()) {
    const value = gates[name];
    if (!KNOWN_FEATURE_GATES.has(name)) {
      errors.push(`unrecognized feature gate: ${name}`);
      break;
    }
    const lockedTo = Object.hasOwn(LOCKED_FEATURE_GATES, name) ? LOCKED_FEATURE_GATES[name] : undefined;
    if (lockedTo !== undefined && value !== lockedTo) {
      errors.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${lockedTo}`);
    }
  }
  const message = aggregate(errors);
  if (message !== undefined) throw new OptionsError(message);
  if (gates.KubeProxyIPVS === false) {
    throw new OptionsError('feature gate KubeProxyIPVS=false turns the IPVS proxy off, and IPVS is the only mode kube-proxy-ipvs runs');
  }
}
