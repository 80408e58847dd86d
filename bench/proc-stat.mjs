/**
 * What a benchmark reads about its own process.
 */
import { readFileSync } from 'node:fs';

/** Minor page faults of the whole process so far (every thread; field 10 of /proc/self/stat). */
export function minorFaults() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}
