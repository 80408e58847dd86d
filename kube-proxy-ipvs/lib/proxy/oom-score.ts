/**
 * --oom-score-adj (default -999): the kernel's OOM killer should pick
 * almost anything before the proxy, since a node without it loses every
 * Service. kube-proxy writes it once at start (pkg/util/oom), trying
 * twice; a failure is logged at V(2) and the proxy runs on.
 */
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

export async function applyOomScoreAdj(value: number | null, log: Logger, path = '/proc/self/oom_score_adj'): Promise<void> {
  if (value === null || value === undefined) return;
  let last: unknown;
  for (let attempt = 0; attempt < 2; attempt++) {
    if (attempt > 0) await sleep(100);
    try {
      await writeFile(path, String(value));
      return;
    } catch (err) {
      last = err;
    }
  }
  log.debug({ err: (last as Error).message }, 'Failed to apply OOMScore');
}
