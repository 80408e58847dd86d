/**
 * What a benchmark reads about its own process.
 */
import { existsSync, readFileSync } from 'node:fs';

/** Minor page faults of the whole process so far (every thread; field 10 of /proc/self/stat). */
export function minorFaults() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

/**
 * Time the JavaScript thread has spent on a CPU so far, in µs (the first
 * field of /proc/self/task/PID/schedstat, in ns): without V8's compiler and
 * collector threads, which process.cpuUsage() counts as well. undefined
 * where the kernel keeps no such figures (no CONFIG_SCHED_INFO).
 */
export function mainThreadCpuUs() {
  const file = `/proc/self/task/${process.pid}/schedstat`;
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split(' ')[0]) / 1000 : undefined;
}
