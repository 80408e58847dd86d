/**
 * One Service event as kube-proxy's ServiceChangeTracker weighs it. Each
 * family has its tracker, comparing what its proxier reads of the Service
 * (its port map in that family) before and after: an update that leaves
 * it as it was (a label, an annotation the proxy does not read, a status
 * condition) is no change, nor is an event of a Service the family does
 * not proxy (headless, ExternalName, no ClusterIP of the family).
 *
 * What the proxy reads is the Service's facts (kubernetes/object-facts),
 * kept per family where that family proxies the Service. They are the whole
 * Service's, not its ports in the family: a change that only the other
 * family reads (its ClusterIP) counts in both, where upstream's trackers
 * count it in one. Facts are compared as text only when both sides have
 * some, so a cold start (every Service new) compares nothing.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { Service } from '../kubernetes/model.js';

export interface ServiceChange {
  /** The Service's facts before the event, in each family that proxied it. */
  readonly before: ReadonlyMap<AddressFamily, Service>;
  /** And after it (none after a deletion). */
  readonly after: ReadonlyMap<AddressFamily, Service>;
}

/** Whether two readings of a Service are the same (undefined: the family does not proxy it). */
export function sameRead(a: Service | undefined, b: Service | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  // Facts are built field by field in one order: equal facts give equal text.
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether any family's tracker would take the event as a change to sync. */
export function isChange(c: ServiceChange, families: readonly AddressFamily[]): boolean {
  return families.some((f) => !sameRead(c.before.get(f), c.after.get(f)));
}
