/**
 * When to sync: kube-proxy's BoundedFrequencyRunner, split the way this
 * controller works.
 *
 *  - request(): objects changed. Changes are coalesced: one incremental
 *    sync covers all that arrived before it started, and syncs start at
 *    most once per minSyncPeriod (0 = as soon as the previous one ends).
 *  - every syncPeriod, a full resync (read the kernel back, repair drift),
 *    whether or not anything changed; it also covers pending changes.
 *  - every drainPeriod (kube-proxy: 1 minute), the graceful-termination
 *    pass that deletes drained weight-0 real servers.
 *
 * Runs never overlap. A failed sync or resync is retried as a resync after
 * a backoff (1 s doubling up to syncPeriod) rather than at once, so a
 * kernel that keeps refusing does not turn into a busy loop; nothing else
 * syncs before it. One that went through with some operations refused
 * (`incomplete`) is no failure: a resync retries them after the same
 * backoff, and syncs of new changes go ahead meanwhile, as kube-proxy goes
 * on syncing after an ipset or IPVS call failed.
 */
import { type Clock, systemClock } from './clock.js';

export type RunKind = 'sync' | 'resync' | 'drain';

export interface RunOutcome {
  kind: RunKind;
  startedAt: number;
  durationMs: number;
  error?: unknown;
  /** What the run returned (its report), when it did not fail. */
  result?: unknown;
}

export interface SyncRunnerOptions {
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  drainPeriodMs?: number;
  sync(): Promise<unknown>;
  resync(): Promise<unknown>;
  drain(): Promise<unknown>;
  /** Whether a sync or resync that returned this left work to retry (operations refused); default: never. */
  incomplete?(result: unknown): boolean;
  /** After every run, failed or not (metrics, healthz, logs). */
  onRun?(outcome: RunOutcome): void;
  clock?: Clock;
  retryInitialMs?: number;
}

export class SyncRunner {
  private readonly clock: Clock;
  private readonly drainPeriodMs: number;
  private pendingSync = false;
  private pendingResync = false;
  private pendingDrain = false;
  private running?: Promise<void>;
  /** Start of the last sync or resync: minSyncPeriod counts from there. */
  private lastSyncStart?: number;
  private nextResyncAt = 0;
  private nextDrainAt = 0;
  /** After a failure, no sync/resync before this. */
  private retryAt = 0;
  /** After an incomplete run, the resync that retries it not before this (syncs may run meanwhile). */
  private resyncRetryAt = 0;
  private retryDelayMs: number;
  private timer?: unknown;
  private timerAt?: number;
  private started = false;
  private stopped = false;

  constructor(private readonly o: SyncRunnerOptions) {
    this.clock = o.clock ?? systemClock;
    this.drainPeriodMs = o.drainPeriodMs ?? 60_000;
    this.retryDelayMs = o.retryInitialMs ?? 1000;
  }

  /** Starts the periodic timers; the first resync is one syncPeriod away (call request() for an initial sync). */
  start(): void {
    if (this.started) return;
    this.started = true;
    const now = this.clock.now();
    this.nextResyncAt = now + this.o.syncPeriodMs;
    this.nextDrainAt = now + this.drainPeriodMs;
    this.schedule();
  }

  /** Objects changed: sync soon (coalesced, rate-limited). */
  request(): void {
    this.pendingSync = true;
    this.schedule();
  }

  /** Forces a full resync as soon as the rate limit allows. */
  requestResync(): void {
    this.pendingResync = true;
    this.schedule();
  }

  /** Stops the timers and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer();
    await this.running;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  private schedule(): void {
    if (!this.started || this.stopped || this.running) return;
    const now = this.clock.now();
    if (now >= this.nextResyncAt) this.pendingResync = true;
    if (now >= this.nextDrainAt) this.pendingDrain = true;
    const syncAllowedAt = Math.max(this.retryAt, this.lastSyncStart === undefined ? now : this.lastSyncStart + this.o.minSyncPeriodMs);
    const resyncAllowedAt = Math.max(syncAllowedAt, this.resyncRetryAt);
    // A resync covers pending changes too.
    if (this.pendingResync && now >= resyncAllowedAt) return this.run('resync');
    if (this.pendingSync && now >= syncAllowedAt) return this.run('sync');
    if (this.pendingDrain) return this.run('drain');
    // Nothing to do yet: wake up at the earliest due time.
    // (A resync or drain already pending is not due again: it waits for its allowed time.)
    const due = Math.min(this.pendingSync ? syncAllowedAt : Infinity, this.pendingResync ? resyncAllowedAt : this.nextResyncAt, this.pendingDrain ? Infinity : this.nextDrainAt);
    this.armTimer(Math.max(due, now));
  }

  private run(kind: RunKind): void {
    this.cancelTimer();
    const startedAt = this.clock.now();
    if (kind === 'drain') {
      this.pendingDrain = false;
      this.nextDrainAt = startedAt + this.drainPeriodMs;
    } else {
      // A resync applies pending changes too.
      this.pendingSync = false;
      this.lastSyncStart = startedAt;
      if (kind === 'resync') {
        this.pendingResync = false;
        this.nextResyncAt = startedAt + this.o.syncPeriodMs;
      }
    }
    const fn = kind === 'sync' ? this.o.sync : kind === 'resync' ? this.o.resync : this.o.drain;
    this.running = (async () => {
      let error: unknown;
      let result: unknown;
      try {
        result = await fn();
      } catch (e) {
        error = e ?? new Error(`${kind} failed`);
      }
      const durationMs = this.clock.now() - startedAt;
      if (kind !== 'drain') this.afterSync(error !== undefined ? 'failed' : this.o.incomplete?.(result) ? 'incomplete' : 'done', kind);
      this.running = undefined;
      try {
        this.o.onRun?.({ kind, startedAt, durationMs, error, result });
      } finally {
        this.schedule();
      }
    })();
  }

  private afterSync(outcome: 'done' | 'incomplete' | 'failed', kind: 'sync' | 'resync'): void {
    if (outcome === 'done') {
      this.retryAt = 0;
      // A sync of new changes that went through retried nothing: a refusal still waiting for its resync keeps its backoff.
      if (kind === 'resync' || !this.pendingResync) {
        this.retryDelayMs = this.o.retryInitialMs ?? 1000;
        this.resyncRetryAt = 0;
      }
      return;
    }
    const now = this.clock.now();
    // A retry already waiting keeps its time: syncs of a stream of changes, each with the refusal again, would put it off for ever.
    if (outcome === 'incomplete' && this.pendingResync && this.resyncRetryAt > now) return;
    // The refused operations' state is unknown: a resync reads the kernel back before retrying.
    this.pendingResync = true;
    if (outcome === 'failed') {
      // Nothing runs before the repairing resync, and it waits for this failure's backoff only.
      this.retryAt = now + this.retryDelayMs;
      this.resyncRetryAt = 0;
    } else this.resyncRetryAt = now + this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, this.o.syncPeriodMs);
  }

  private armTimer(at: number): void {
    if (this.timer !== undefined && this.timerAt === at) return;
    this.cancelTimer();
    if (!Number.isFinite(at)) return;
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      this.schedule();
    }, at - this.clock.now());
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }
}
