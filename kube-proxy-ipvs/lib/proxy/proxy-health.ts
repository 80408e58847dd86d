/**
 * kube-proxy's ProxyHealthServer bookkeeping (pkg/proxy/healthcheck):
 * queued() when a change arrives, updated() when a sync completes. The
 * proxy is unhealthy when a queued change has waited longer than
 * healthTimeout (2 × syncPeriod) without a sync completing, or when it has
 * never synced by then; healthy while starting and whenever nothing waits.
 * /healthz additionally says no when this Node is being deleted (so load
 * balancers drain it first); /livez does not care about that. A fatal
 * condition (the --netns target deleted) makes both say no for good.
 */
import { type Clock, systemClock } from './clock.js';

export interface HealthStatus {
  healthy: boolean;
  lastUpdated: number;
  currentTime: number;
}

export class ProxyHealth {
  private lastUpdated = 0;
  private oldestPendingQueued = 0;
  private nodeEligible = true;
  private fatalReason?: string;

  constructor(
    readonly healthTimeoutMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  queued(): void {
    if (this.oldestPendingQueued === 0) this.oldestPendingQueued = this.clock.now();
  }

  updated(): void {
    this.lastUpdated = this.clock.now();
    this.oldestPendingQueued = 0;
  }

  /** Node being deleted (deletionTimestamp) or tainted ToBeDeletedByClusterAutoscaler. */
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
    const pending = this.oldestPendingQueued;
    // Nothing waiting, or waiting but not for long: healthy.
    const healthy = this.fatalReason === undefined && (pending === 0 || now - pending < this.healthTimeoutMs);
    return { healthy, lastUpdated: this.lastUpdated, currentTime: now };
  }
}
