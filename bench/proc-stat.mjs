/**
 * What a benchmark reads about its own process.
 */
import { readFileSync, readdirSync } from 'node:fs';

/** Minor page faults of the whole process so far (every thread; field 10 of /proc/self/stat). */
export function minorFaults() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

/** Each thread's on-CPU time so far (µs) and name, by thread id; empty where the kernel keeps no schedstat. */
export function threadsCpuUs() {
  const out = new Map();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const us = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
      out.set(tid, { name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(), us });
    } catch {
      // a thread that ended between the listing and the read, or no schedstat
    }
  }
  return out;
}

/**
 * The CPU time each kind of thread spent between two threadsCpuUs()
 * snapshots (µs): the JavaScript thread, libuv's pool (where the addon's
 * jobs run, and with them the kernel's work in their system calls), and
 * V8's own threads (its compiler and collector); anything else as other.
 */
export function cpuByThreadKind(before, after) {
  const kinds = { javascript: 0, libuv: 0, v8: 0, other: 0 };
  for (const [tid, { name, us }] of after) {
    const spent = us - (before.get(tid)?.us ?? 0);
    if (tid === String(process.pid)) kinds.javascript += spent;
    else if (name.startsWith('libuv-worker')) kinds.libuv += spent;
    else if (name.startsWith('V8')) kinds.v8 += spent;
    else kinds.other += spent;
  }
  return kinds;
}
