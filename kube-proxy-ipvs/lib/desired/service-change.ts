/**
 * One Service event as kube-proxy's ServiceChangeTracker weighs it. Each
 * family has its tracker, comparing what its proxier reads of the Service
 * before and after: its ports in that family (upstream's port map: the
 * family's ClusterIP, external and load-balancer IPs, source ranges,
 * affinity, traffic policies, node ports). An update that leaves them as
 * they were (a label, a status condition, the other family's ClusterIP) is
 * no change in the family, nor is an event of a Service the family does
 * not proxy (headless, ExternalName, no ClusterIP of the family). The
 * annotations the proxy reads (the scheduler's, an extension) count too.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import type { ServicePortInfo } from './service-ports.js';

/** What one family's proxier reads of a Service. */
export interface ServiceReading {
  readonly ports: readonly ServicePortInfo[];
  readonly annotations: Readonly<Record<string, string>> | undefined;
}

export interface ServiceChange {
  /** Before the event, in each family that proxied the Service. */
  readonly before: ReadonlyMap<AddressFamily, ServiceReading>;
  /** And after it (nowhere after a deletion). */
  readonly after: ReadonlyMap<AddressFamily, ServiceReading>;
}

/** Whether two readings are the same (undefined: the family does not proxy the Service). */
export function sameRead(a: ServiceReading | undefined, b: ServiceReading | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  // Readings are built field by field in one order: equal readings give equal text.
  return JSON.stringify(a) === JSON.stringify(b);
}
