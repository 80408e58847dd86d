/**
 * network_programming_duration_seconds as kube-proxy's
 * EndpointsChangeTracker feeds it: from an EndpointSlice's
 * last-change-trigger-time to the end of the sync that programmed the
 * change. Only an update's trigger counts (a deletion carries the time of
 * the slice's last update) and only one after this process started (older
 * ones would be the downtime of a restart, not programming); a deletion
 * drops the Service's triggers not yet programmed.
 */
import type { EndpointSlice } from '../kubernetes/model.js';

const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

type Family = 'IPv4' | 'IPv6';

export class ProgrammingLatency {
  /** Trigger times not yet programmed, with when each change came (a sync programs those that came before it started). */
  private triggers: Array<{ at: number; receivedAt: number; family: Family; service: string }> = [];
  /** kube-proxy's trackerStartTime; wall-clock time, as the annotation is. */
  private readonly start = Date.now();

  /** A slice of `service` in `family` changed at `now` (the proxy's clock). */
  changed(slice: EndpointSlice, family: Family, service: string, deleted: boolean, now: number): void {
    if (deleted) {
      this.triggers = this.triggers.filter((t) => t.service !== service || t.family !== family);
      return;
    }
    const at = Date.parse(slice.metadata.annotations?.[TRIGGER_TIME_ANNOTATION] ?? '');
    if (at > this.start) this.triggers.push({ at, receivedAt: now, family, service });
  }

  /** A sync that started at `startedAt` ended at `end`: each change it programmed, with its latency in seconds. */
  programmed(startedAt: number, end: number): Array<{ family: Family; seconds: number }> {
    const done = this.triggers.filter((t) => t.receivedAt <= startedAt);
    this.dropTaken(startedAt);
    return done.map((t) => ({ family: t.family, seconds: Math.max(0, end - t.at) / 1000 }));
  }

  /** Forgets the changes a sync that started at `startedAt` took: a failed one is not measured later (kube-proxy checked them out). */
  dropTaken(startedAt: number): void {
    this.triggers = this.triggers.filter((t) => t.receivedAt > startedAt);
  }
}
