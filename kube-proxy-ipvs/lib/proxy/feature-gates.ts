/**
 * --feature-gates / featureGates, checked as featuregate SetFromMap checks
 * them, against kube-proxy v1.37's registry (feature-gate-specs.ts): names
 * are taken in sorted order, a locked gate set away from its locked value
 * adds an error and the check goes on, and an unknown name adds
 * "unrecognized feature gate" and stops there. The errors collected are
 * reported together in utilerrors.NewAggregate's form, so a user sees the
 * same message upstream kube-proxy prints. (Upstream ranges over a Go map,
 * in no set order; sorted is that order made repeatable.)
 *
 * KubeProxyIPVS is upstream's gate for selecting the ipvs proxy mode
 * (deprecated in 1.37, on by default). With it off, the ipvs mode is not
 * available; this proxy is only the ipvs mode, so that setting is refused
 * once the gates themselves are valid.
 */
import { aggregate } from './bad-config.js';
import { FEATURE_GATE_SPECS } from './feature-gate-specs.js';
import { OptionsError } from './options.js';

export const KNOWN_FEATURE_GATES: ReadonlySet<string> = new Set(Object.keys(FEATURE_GATE_SPECS));

/** The value a locked gate must keep (its default), or undefined for a gate that is not locked. */
export function lockedValue(name: string): boolean | undefined {
  if (!Object.hasOwn(FEATURE_GATE_SPECS, name)) return undefined;
  const spec = FEATURE_GATE_SPECS[name]!;
  return spec.locked ? spec.default : undefined;
}

export function checkFeatureGates(gates: Record<string, boolean>): void {
  const errors: string[] = [];
  // Go's sort.Strings orders by bytes; the default sort does the same for these ASCII names.
  for (const name of Object.keys(gates).sort()) {
    const value = gates[name];
    if (!KNOWN_FEATURE_GATES.has(name)) {
      errors.push(`unrecognized feature gate: ${name}`);
      break;
    }
    const lockedTo = lockedValue(name);
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
