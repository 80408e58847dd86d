/**
 * --feature-gates / featureGates, checked as featuregate.SetFromMap checks
 * them: any name the registry knows is accepted (feature-gate-names.ts),
 * an unknown one fails, and so does a locked gate set away from its
 * locked value, each with upstream's message.
 *
 * KubeProxyIPVS=false is refused: this proxy is the IPVS mode, and upstream
 * plans the same refusal once the gate exists.
 */
import { FEATURE_GATE_NAMES, LOCKED_FEATURE_GATES } from './feature-gate-names.js';
import { OptionsError } from './options.js';

export const KNOWN_FEATURE_GATES: ReadonlySet<string> = new Set(FEATURE_GATE_NAMES);

export function checkFeatureGates(gates: Record<string, boolean>): void {
  const locked: string[] = [];
  for (const [name, value] of Object.entries(gates)) {
    if (!KNOWN_FEATURE_GATES.has(name)) throw new OptionsError(`unrecognized feature gate: ${name}`);
    const lockedTo = Object.hasOwn(LOCKED_FEATURE_GATES, name) ? LOCKED_FEATURE_GATES[name] : undefined;
    // Upstream goes on past a locked gate and reports every one together.
    if (lockedTo !== undefined && value !== lockedTo) locked.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${lockedTo}`);
    if (name === 'KubeProxyIPVS' && value === false) {
      throw new OptionsError('feature gate KubeProxyIPVS=false turns the IPVS proxy off, and IPVS is the only mode kube-proxy-ipvs runs');
    }
  }
  // utilerrors.NewAggregate's text: one error alone, several bracketed and comma-joined.
  if (locked.length === 1) throw new OptionsError(locked[0]!);
  if (locked.length > 1) throw new OptionsError(`[${locked.join(', ')}]`);
}
