/**
 * The scheduler and flags a Service's virtual servers get: what its
 * annotations choose (kubernetes/service-scheduling.ts), unless they cannot
 * be applied or the kernel was found to lack that scheduler's module, and
 * then the global one (--ipvs-scheduler). What was not applied comes back
 * as a report naming the Service, the annotation and why.
 */
import type { ServiceFlags } from 'ipvs-netlink';
import { serviceKeyOf, type Service } from '../kubernetes/model.js';
import { annotatedScheduling, flagNames, type SchedulerFlags } from '../kubernetes/service-scheduling.js';

export interface Scheduling {
  scheduler: string;
  flags?: ServiceFlags;
}

/** invalid-annotation: the annotations were not (or not all) applied; module-missing: the kernel lacks the scheduler. */
export type SchedulingReason = 'invalid-annotation' | 'module-missing';

export interface SchedulingReport {
  /** "namespace/name" */
  service: string;
  annotation: string;
  value: string;
  reason: SchedulingReason;
  problem: string;
  /** What the Service's virtual servers get instead. */
  scheduler: string;
  flags: string[];
}

export interface ServiceScheduling {
  scheduling: Scheduling;
  report?: SchedulingReport;
}

const NO_MISSING: ReadonlySet<string> = new Set();

/**
 * @param missing schedulers the kernel refused (ENOENT: no module ip_vs_NAME), learnt by the kernel stage
 */
export function serviceScheduling(svc: Service, global: string, missing: ReadonlySet<string> = NO_MISSING): ServiceScheduling {
  const { scheduling: annotated, problem } = annotatedScheduling(svc.metadata.annotations);
  const fallback = withDefaults(global, undefined);
  const report = (reason: SchedulingReason, annotation: string, value: string, text: string, used: Scheduling): SchedulingReport => ({
    service: serviceKeyOf(svc.metadata),
    annotation,
    value,
    reason,
    problem: text,
    scheduler: used.scheduler,
    flags: flagNames(used.scheduler, used.flags),
  });
  if (annotated === undefined) {
    return problem ? { scheduling: fallback, report: report('invalid-annotation', problem.annotation, problem.value, problem.problem, fallback) } : { scheduling: fallback };
  }
  if (missing.has(annotated.scheduler)) {
    const text = `asks for a scheduler the kernel has not got (no module ip_vs_${annotated.scheduler})`;
    return { scheduling: fallback, report: report('module-missing', annotated.annotation, annotated.scheduler, text, fallback) };
  }
  const chosen = withDefaults(annotated.scheduler, annotated.flags);
  return problem ? { scheduling: chosen, report: report('invalid-annotation', problem.annotation, problem.value, problem.problem, chosen) } : { scheduling: chosen };
}

/**
 * Flags left unsaid take kube-proxy's: mh hashes the source port too
 * (FlagSourceHash, IP_VS_SVC_F_SCHED2), as kube-proxy sets it for
 * --ipvs-scheduler=mh. No flag set: no flags object, as before there were
 * annotations.
 */
function withDefaults(scheduler: string, flags: SchedulerFlags | undefined): Scheduling {
  const f = flags ?? (scheduler === 'mh' ? { sched2: true } : undefined);
  return f && (f.sched1 || f.sched2 || f.sched3) ? { scheduler, flags: compact(f) } : { scheduler };
}

function compact(f: SchedulerFlags): ServiceFlags {
  const out: ServiceFlags = {};
  if (f.sched1) out.sched1 = true;
  if (f.sched2) out.sched2 = true;
  if (f.sched3) out.sched3 = true;
  return out;
}

/** The annotated scheduler a Service asks for, whatever the kernel has (to find the Services a missing module concerns). */
export function requestedScheduler(svc: Service): string | undefined {
  return annotatedScheduling(svc.metadata.annotations).scheduling?.scheduler;
}

/** Whether two reports say the same (a Service is reported once per change of what is said). */
export function sameReport(a: SchedulingReport | undefined, b: SchedulingReport | undefined): boolean {
  return a?.reason === b?.reason && a?.annotation === b?.annotation && a?.value === b?.value && a?.scheduler === b?.scheduler;
}

/** The report as one sentence, for the proxy's log and plan's warnings. */
export function describeReport(r: SchedulingReport): string {
  const flags = r.flags.length ? ` (${r.flags.join(',')})` : '';
  return `Service ${r.service}: ${r.annotation}="${r.value}" ${r.problem}; its virtual servers use scheduler ${r.scheduler}${flags}`;
}
