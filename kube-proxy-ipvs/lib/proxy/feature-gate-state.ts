/**
 * The feature gates' values once --feature-gates / featureGates are set,
 * as component-base's featuregate gives them: Enabled for one gate, and
 * the series AddMetrics records for kubernetes_feature_enabled.
 */
import { FEATURE_GATE_SPECS, type FeatureStage } from './feature-gate-specs.js';

/**
 * featuregate's Enabled after SetFromMap took `gates` (already checked):
 * a gate set there has that value; an unset alpha gate takes AllAlpha's
 * value and an unset beta gate AllBeta's, where those are set
 * (setUnsetAlphaGates and setUnsetBetaGates fill only gates not set, so
 * the order the names come in does not matter); any other gate its 1.37
 * default. AllAlpha and AllBeta themselves are only ever set or default.
 */
export function featureGateEnabled(gates: Readonly<Record<string, boolean>>, name: string): boolean {
  if (Object.hasOwn(gates, name)) return gates[name]!;
  // featuregate panics on a gate it does not know.
  if (!Object.hasOwn(FEATURE_GATE_SPECS, name)) throw new Error(`feature "${name}" is not registered in FeatureGate`);
  const spec = FEATURE_GATE_SPECS[name]!;
  const all = spec.stage === 'ALPHA' ? 'AllAlpha' : spec.stage === 'BETA' ? 'AllBeta' : undefined;
  if (all !== undefined && Object.hasOwn(gates, all)) return gates[all]!;
  return spec.default;
}

/** featuregate's PreRelease as a string: GA is the empty string. */
export function preRelease(stage: FeatureStage): '' | 'ALPHA' | 'BETA' | 'DEPRECATED' {
  return stage === 'GA' ? '' : stage;
}

export interface FeatureGateState {
  readonly name: string;
  /** The stage label: ALPHA, BETA, DEPRECATED, or '' for GA. */
  readonly stage: '' | 'ALPHA' | 'BETA' | 'DEPRECATED';
  readonly enabled: boolean;
}

/**
 * What featuregate's AddMetrics records: every known gate (GetAll leaves
 * out only pre-alpha ones, and at 1.37 none is), AllAlpha and AllBeta
 * included, with its stage and whether it is enabled. In name order, the
 * order Go's client writes the series in.
 */
export function featureGateStates(gates: Readonly<Record<string, boolean>>): FeatureGateState[] {
  return Object.keys(FEATURE_GATE_SPECS)
    .sort()
    .map((name) => ({ name, stage: preRelease(FEATURE_GATE_SPECS[name]!.stage), enabled: featureGateEnabled(gates, name) }));
}
