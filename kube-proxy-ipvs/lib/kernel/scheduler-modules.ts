/**
 * Which IPVS schedulers the kernel lacks, learnt from its refusals, and the
 * reports about Services' scheduler annotations (log lines and counts).
 *
 * A virtual server added or changed with a scheduler whose module the
 * kernel has not got and cannot load is refused with ENOENT (ip_vs_ctl.c:
 * "Scheduler module ip_vs_%s not found"; the proxy sets no persistence
 * engine, the other cause of it). An annotation's scheduler is not probed:
 * the first Service that asks for such a scheduler finds it missing, and it
 * stays missing for the life of the process (a module that could not be
 * loaded does not appear by itself; a restart tries again). The global
 * scheduler is never marked: the start made sure the kernel has it
 * (ipvs-proxier-check.ts), and its failures stay what they are.
 */
import type { Logger } from 'pino';
import { describeReport, type SchedulingReason, type SchedulingReport } from '../desired/scheduling.js';
import type { ApplyReport } from './applier.js';

export class SchedulerModules {
  /** Reports made since start, by reason (the metric). */
  readonly counts: Record<SchedulingReason, number> = { 'invalid-annotation': 0, 'module-missing': 0 };
  private readonly missing = new Set<string>();

  constructor(
    private readonly globalScheduler: string,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /** The schedulers this report newly shows the kernel lacks (each logged once). */
  learn(report: ApplyReport): string[] {
    const found: string[] = [];
    for (const { op, error } of report.failed) {
      if (op.kind !== 'ipvs' || (op.batch.op !== 'addService' && op.batch.op !== 'updateService')) continue;
      const scheduler = op.batch.service.scheduler;
      if ((error as { code?: string }).code !== 'ENOENT' || scheduler === undefined || scheduler === this.globalScheduler || this.missing.has(scheduler)) continue;
      this.missing.add(scheduler);
      found.push(scheduler);
      this.logger.warn(
        { scheduler, module: `ip_vs_${scheduler}`, err: error.message },
        `the kernel has no IPVS scheduler ${scheduler}: Services annotated with it use the global scheduler ${this.globalScheduler} (load module ip_vs_${scheduler} and restart to use it)`,
      );
    }
    return found;
  }

  /** One warning per report, naming the Service, the annotation and what its virtual servers use. */
  report(reports: readonly SchedulingReport[]): void {
    for (const r of reports) {
      this.counts[r.reason]++;
      this.logger.warn({ service: r.service, annotation: r.annotation, value: r.value, reason: r.reason, scheduler: r.scheduler, flags: r.flags.join(',') }, describeReport(r));
    }
  }
}
