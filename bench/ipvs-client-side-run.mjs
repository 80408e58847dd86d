/**
 * Runs bench/ipvs-client-side.mjs (the library's side of apply() and dump(),
 * kernel stubbed out) as its own node process: inside the sandbox from
 * bench/ipvs.mjs, on the host from bench/run.mjs.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { DESTS_PER_SERVICE } from './ipvs-rules.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * One process: apply() of n x 10 ops three times, then `dumps` decodes of the replies in `replies` with and without counters.
 * profile: a path prefix for CPU profiles of apply() and of one decode (bench/ipvs-client-side.mjs --profile).
 */
export function clientSide(n, replies, dumps, profile) {
  // Three applies: the first is judged (a fresh process's first call); the third shows the same work with the code compiled and the buffer's pages in place.
  const args = ['--expose-gc', path.join(here, 'ipvs-client-side.mjs'), '--services', String(n), '--replies', replies, '--dumps', String(dumps), '--applies', '3'];
  if (profile) args.push('--profile', profile);
  const r = spawnSync(process.execPath, args, { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ipvs-client-side exited ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  const res = JSON.parse(String(r.stdout).trim().split('\n').pop());
  if (res.dumpedServices !== n || res.dumpedDestinations !== n * DESTS_PER_SERVICE)
    throw new Error(`ipvs-client-side decoded ${res.dumpedServices} services and ${res.dumpedDestinations} destinations, expected ${n} and ${n * DESTS_PER_SERVICE}`);
  return res;
}
