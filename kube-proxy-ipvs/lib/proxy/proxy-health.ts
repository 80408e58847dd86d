/**
 * kube-proxy's ProxyHealthServer bookkeeping (pkg/proxy/healthcheck), per
 * IP family as there: queued(families) when a change arrives, updated(families)
 * when a sync has programmed it. A family is unhealthy when a queued change
 * has waited healthTimeout (2 × syncPeriod) without a sync completing; a
 * family that has never been updated cannot be unhealthy (the proxy marks
 * every family updated when its sync loop starts, as kube-proxy's SyncLoop
 * does, so a first sync that never succeeds does turn it unhealthy).
 *
 * /healthz also says no while this Node is unknown, being deleted or marked
 * for scale-down; /livez does not care about the node. Our extension: a
 * fatal condition (the --netns target deleted) makes both say no for good.
 */
import type { AddressFamily } from 'ipvs-netlink/address';
import { type Clock, systemClock } from './clock.js';

export interface FamilyHealth {
  lastUpdated: number;
  healthy: boolean;
}

export interface HealthStatus {
  healthy: boolean;
  /** The latest family update; 0 before any. */
  lastUpdated: number;
  currentTime: number;
  /** Families that have been updated at least once. */
  families: Map<AddressFamily, FamilyHealth>;
}

export class ProxyHealth {
  private readonly lastUpdatedOf = new Map<AddressFamily, number>();
  private readonly oldestPendingOf = new Map<AddressFamily, number>();
  private nodeEligible = false;
  private fatalReason?: string;

  constructor(
    readonly healthTimeoutMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  queued(families: readonly AddressFamily[]): void {
    let now: number | undefined;
    for (const f of families) if (!this.oldestPendingOf.has(f)) this.oldestPendingOf.set(f, (now ??= this.clock.now()));
  }

  updated(families: readonly AddressFamily[]): void {
    const now = this.clock.now();
    for (const f of families) {
      this.oldestPendingOf.delete(f);
      this.lastUpdatedOf.set(f, now);
    }
  }

  /** kubernetes/node.ts nodeEligible(): false until the Node object is seen. */
  setNodeEligible(eligible: boolean): void {
    this.nodeEligible = eligible;
  }

  /** Nothing the proxy does can make it healthy again (it must be restarted): unhealthy from now on. */
  setFatal(reason: string): void {
    this.fatalReason ??= reason;
  }

  get fatal(): string | undefined {
    return this.fatalReason;
  }

  get eligible(): boolean {
    return this.nodeEligible;
  }

  status(): HealthStatus {
    const now = this.clock.now();
    let healthy = this.fatalReason === undefined;
    let lastUpdated = 0;
    const families = new Map<AddressFamily, FamilyHealth>();
    for (const [family, at] of this.lastUpdatedOf) {
      lastUpdated = Math.max(lastUpdated, at);
      const pending = this.oldestPendingOf.get(family);
      // Nothing waiting, or waiting but not for long: healthy.
      const ok = pending === undefined || now - pending < this.healthTimeoutMs;
      if (!ok) healthy = false;
      families.set(family, { lastUpdated: at, healthy: ok });
    }
    return { healthy, lastUpdated, currentTime: now, families };
  }
}
