/**
 * A Service's own IPVS scheduler, chosen by annotation (an extension:
 * kube-proxy has one scheduler for every Service). Two spellings are read:
 *
 * - ours, `ipvs.kube-proxy-ipvs.io/scheduler` (any IPVS scheduler kube-proxy's
 *   --ipvs-scheduler takes) and `ipvs.kube-proxy-ipvs.io/scheduler-flags`
 *   (ipvsadm's --sched-flags names, comma-separated: `flag-1`..`flag-3`, and
 *   `sh-fallback`, `sh-port`, `mh-fallback`, `mh-port` for their own
 *   scheduler only, as ipvsadm refuses them for another);
 * - kube-router's, read as kube-router reads them (network_services_controller.go):
 *   `kube-router.io/service.scheduler` takes exactly rr, lc, dh, sh or mh;
 *   `kube-router.io/service.schedflags` (`flag-1,flag-2,flag-3`, spaces
 *   trimmed, other words ignored) applies to mh only.
 *
 * Ours wins when both are present. Anything not applied is a problem to
 * report; the Service then uses the global scheduler, except where
 * kube-router itself would still apply the rest (flags it ignores).
 * Pure: whether the kernel has the scheduler is learnt later, by the kernel
 * stage.
 */

/**
 * Linux's IPVS schedulers (net/netfilter/ipvs): what the annotations take.
 * --ipvs-scheduler is not checked against it: the kernel is asked at start
 * (kernel/ipvs-proxier-check.ts), as kube-proxy asks it since 1.27.
 */
export const IPVS_SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'dh', 'sh', 'sed', 'nq', 'mh', 'fo', 'ovf', 'twos'] as const;

export const SCHEDULER_ANNOTATION = 'ipvs.kube-proxy-ipvs.io/scheduler';
export const SCHEDULER_FLAGS_ANNOTATION = 'ipvs.kube-proxy-ipvs.io/scheduler-flags';
export const KUBE_ROUTER_SCHEDULER_ANNOTATION = 'kube-router.io/service.scheduler';
export const KUBE_ROUTER_FLAGS_ANNOTATION = 'kube-router.io/service.schedflags';

const ANNOTATIONS = [SCHEDULER_ANNOTATION, SCHEDULER_FLAGS_ANNOTATION, KUBE_ROUTER_SCHEDULER_ANNOTATION, KUBE_ROUTER_FLAGS_ANNOTATION];

/** The values kube-router's switch takes (moby/ipvs' RoundRobin, LeastConnection, DestinationHashing, SourceHashing, and "mh"). */
const KUBE_ROUTER_SCHEDULERS = ['rr', 'lc', 'dh', 'sh', 'mh'];

/** The scheduler flags, by the library's names (IP_VS_SVC_F_SCHED1..3). */
export interface SchedulerFlags {
  sched1?: boolean;
  sched2?: boolean;
  sched3?: boolean;
}

type FlagBit = keyof SchedulerFlags;

/**
 * ipvsadm's names for the flags. sh and mh read flag 1 as "fall back to
 * another server when the chosen one is unavailable" and flag 2 as "hash
 * the source port too" (IP_VS_SVC_F_SCHED_SH_FALLBACK/_PORT in
 * <linux/ip_vs.h>; IP_VS_SVC_F_SCHED_MH_FALLBACK/_PORT in ip_vs_mh.c).
 */
const FLAG_NAMES: Readonly<Record<string, Readonly<Record<FlagBit, string>>>> = {
  sh: { sched1: 'sh-fallback', sched2: 'sh-port', sched3: 'flag-3' },
  mh: { sched1: 'mh-fallback', sched2: 'mh-port', sched3: 'flag-3' },
};
const GENERIC_NAMES: Readonly<Record<FlagBit, string>> = { sched1: 'flag-1', sched2: 'flag-2', sched3: 'flag-3' };
const BITS: readonly FlagBit[] = ['sched1', 'sched2', 'sched3'];

export interface AnnotatedScheduling {
  scheduler: string;
  /** Undefined: none given, the scheduler's defaults apply (mh hashes the port too, as kube-proxy sets it). */
  flags?: SchedulerFlags;
  /** The annotation that chose the scheduler. */
  annotation: string;
}

export interface SchedulingProblem {
  annotation: string;
  value: string;
  problem: string;
}

export interface SchedulingAnnotations {
  /** What applies; undefined: the global scheduler. */
  scheduling?: AnnotatedScheduling;
  /** What was not applied, and why. */
  problem?: SchedulingProblem;
}

/** The scheduling annotations of a Service, the only ones the proxy keeps; undefined when it has none. */
export function schedulingAnnotationsOf(annotations: Readonly<Record<string, unknown>> | undefined): Record<string, string> | undefined {
  if (annotations === undefined) return undefined;
  let out: Record<string, string> | undefined;
  for (const name of ANNOTATIONS) {
    const v = annotations[name];
    if (v !== undefined) (out ??= {})[name] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

export function annotatedScheduling(annotations: Readonly<Record<string, string>> | undefined): SchedulingAnnotations {
  if (annotations === undefined) return {};
  if (annotations[SCHEDULER_ANNOTATION] !== undefined) return ours(annotations[SCHEDULER_ANNOTATION], annotations[SCHEDULER_FLAGS_ANNOTATION]);
  if (annotations[SCHEDULER_FLAGS_ANNOTATION] !== undefined) {
    return { problem: { annotation: SCHEDULER_FLAGS_ANNOTATION, value: annotations[SCHEDULER_FLAGS_ANNOTATION], problem: `has no effect without ${SCHEDULER_ANNOTATION}` } };
  }
  if (annotations[KUBE_ROUTER_SCHEDULER_ANNOTATION] !== undefined) return kubeRouter(annotations[KUBE_ROUTER_SCHEDULER_ANNOTATION], annotations[KUBE_ROUTER_FLAGS_ANNOTATION]);
  if (annotations[KUBE_ROUTER_FLAGS_ANNOTATION] !== undefined) {
    return { problem: { annotation: KUBE_ROUTER_FLAGS_ANNOTATION, value: annotations[KUBE_ROUTER_FLAGS_ANNOTATION], problem: `is ignored without ${KUBE_ROUTER_SCHEDULER_ANNOTATION}: mh, as kube-router ignores it` } };
  }
  return {};
}

function ours(scheduler: string, flagsText: string | undefined): SchedulingAnnotations {
  if (!(IPVS_SCHEDULERS as readonly string[]).includes(scheduler)) {
    return { problem: { annotation: SCHEDULER_ANNOTATION, value: scheduler, problem: `is not an IPVS scheduler; use one of ${IPVS_SCHEDULERS.join(', ')}` } };
  }
  if (flagsText === undefined) return { scheduling: { scheduler, annotation: SCHEDULER_ANNOTATION } };
  const flags: SchedulerFlags = {};
  for (const word of flagsText.split(',').map((w) => w.trim())) {
    if (word === '') continue;
    const bit = flagBit(scheduler, word);
    if (bit === undefined) return { problem: { annotation: SCHEDULER_FLAGS_ANNOTATION, value: flagsText, problem: `"${word}" is not a flag of scheduler ${scheduler}; use ${flagWords(scheduler).join(', ')}` } };
    flags[bit] = true;
  }
  return { scheduling: { scheduler, flags, annotation: SCHEDULER_ANNOTATION } };
}

/** A flag name as ipvsadm takes it: flag-N for any scheduler, sh-*\/mh-* only for their own (ipvsadm: "incompatible scheduler flag"). */
function flagBit(scheduler: string, word: string): FlagBit | undefined {
  const own = FLAG_NAMES[scheduler];
  return BITS.find((b) => GENERIC_NAMES[b] === word || own?.[b] === word);
}

function flagWords(scheduler: string): string[] {
  const own = FLAG_NAMES[scheduler];
  return [...BITS.map((b) => GENERIC_NAMES[b]), ...(own ? [own.sched1, own.sched2] : [])];
}

function kubeRouter(scheduler: string, flagsText: string | undefined): SchedulingAnnotations {
  if (!KUBE_ROUTER_SCHEDULERS.includes(scheduler)) {
    return { problem: { annotation: KUBE_ROUTER_SCHEDULER_ANNOTATION, value: scheduler, problem: `is not one kube-router takes (${KUBE_ROUTER_SCHEDULERS.join(', ')})` } };
  }
  const scheduling: AnnotatedScheduling = { scheduler, flags: {}, annotation: KUBE_ROUTER_SCHEDULER_ANNOTATION };
  if (flagsText === undefined || flagsText === '') return { scheduling };
  if (scheduler !== 'mh') {
    return { scheduling, problem: { annotation: KUBE_ROUTER_FLAGS_ANNOTATION, value: flagsText, problem: 'is ignored: kube-router applies it to scheduler mh only' } };
  }
  const ignored: string[] = [];
  for (const word of flagsText.split(',').map((w) => w.trim())) {
    const bit = BITS.find((b) => GENERIC_NAMES[b] === word);
    if (bit) scheduling.flags![bit] = true;
    else if (word !== '') ignored.push(word);
  }
  if (ignored.length === 0) return { scheduling };
  return { scheduling, problem: { annotation: KUBE_ROUTER_FLAGS_ANNOTATION, value: flagsText, problem: `ignores ${ignored.map((w) => `"${w}"`).join(', ')}, as kube-router does (it takes flag-1, flag-2, flag-3)` } };
}

/** The flags set, by ipvsadm's names for this scheduler ("mh-fallback,mh-port"), for plan's output and the logs. */
export function flagNames(scheduler: string, flags: SchedulerFlags | undefined): string[] {
  const names = FLAG_NAMES[scheduler] ?? GENERIC_NAMES;
  return BITS.filter((b) => flags?.[b]).map((b) => names[b]);
}
