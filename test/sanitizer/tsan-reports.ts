/**
 * What the ThreadSanitizer tests share (threads.test.ts on this host's
 * kernel, threads-ipvs-qemu.test.ts for IPVS in the QEMU sandbox kernel):
 * the addon and runtime scripts/asan-test.sh built and named, the program
 * they run, and the reading of the sanitizer's reports.
 *
 * node itself is not built with the sanitizer, so V8's own threads are
 * reported too (their atomics are invisible to it); a report fails a test
 * only when the addon's own code makes one of the racing accesses.
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import type { Test } from 'tap';

export const run = promisify(execFile);
const addonEnv = process.env.IPVS_NETLINK_TSAN_ADDON;
const runtimeEnv = process.env.IPVS_NETLINK_TSAN_RUNTIME;
if (!addonEnv || !runtimeEnv) throw new Error('run the sanitizer tests with scripts/asan-test.sh host-tsan (or qemu-tsan): it builds the addon with ThreadSanitizer and names it and the runtime');
/** The addon built with ThreadSanitizer. */
export const addon: string = addonEnv;
/** The sanitizer's runtime, LD_PRELOADed into the program (node is not instrumented). */
export const runtime: string = runtimeEnv;
/** handles-across-threads.mjs: handles used on the JavaScript thread while their jobs run on others. */
export const program = path.join(import.meta.dirname, 'handles-across-threads.mjs');
export const root = path.join(import.meta.dirname, '..', '..');

/**
 * The environment for the program: tap's own settings left out (its
 * NODE_OPTIONS loads tap's process recorder, which would count the
 * program, and in the QEMU guest its coverage too, as part of the test).
 */
export const programEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && k !== 'NODE_V8_COVERAGE' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')));

/** Fails `t` on each report in `logs` whose race is the addon's own. */
export function noRaceInAddon(t: Test, logs: string): void {
  const reports = readdirSync(logs)
    .map((f) => readFileSync(path.join(logs, f), 'utf8'))
    .join('\n')
    .split(/^={18}$/m)
    .filter((r) => r.includes('WARNING: ThreadSanitizer'));
  const ours = reports.filter(racesInAddon);
  if (ours.length) t.comment(`the addon's frames are offsets: addr2line -f -C -e ${addon} OFFSET names them`);
  t.same(ours, [], `no race in the addon's own code (${reports.length - ours.length} about node's own threads, ignored)`);
}

/**
 * Whether one of a report's two racing accesses ("Write of size 8 at ... by
 * thread T9:", "Previous read ...") is made by the addon's own code: the
 * first frame of that stack outside the sanitizer's runtime (its
 * interceptors of memcpy and the like come first) is in the addon. The
 * addon shows up in other stacks too: where a thread was created (its first
 * job starts libuv's workers), where memory was allocated, and under V8's
 * own accesses when the addon called into V8; none of those say who raced.
 */
function racesInAddon(report: string): boolean {
  const accesses = report.split(/\n\s*\n/).filter((p) => /^(Previous )?(atomic )?(read|write)\b/i.test(p.trimStart()));
  return accesses.some((stack) => {
    const first = stack.split('\n').find((line) => /^\s*#\d/.test(line) && !line.includes('libtsan'));
    return first !== undefined && first.includes('ipvs_netlink.node');
  });
}
