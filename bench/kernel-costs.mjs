/**
 * What the kernel a benchmark runs on charges, measured where it runs:
 * bench/kernel-cost-probe (a system call, a fresh page, a generic-netlink
 * round trip, plain computation) and bench/js-cost-probe.mjs (JavaScript).
 * bench/ipvs.mjs measures it in each sandbox kernel, bench/group-ipvs.mjs on
 * the host, and the report puts the two side by side: how each sandbox
 * distorts a real kernel, from the run's own figures.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { median } from './report-format.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * { getpidUs, pageUs, genlUs, computeUs, jsFirstMs, jsBestMs }: the median of
 * three runs of each probe, each C measure timed for half a second,
 * JavaScript for five rounds. `brief` (a benchmark size of a single run, as
 * CI's): one short run, whose figures show the probes work, not what they
 * are.
 */
export function kernelCosts(costProbe, { brief = false } = {}) {
  const { seconds, runs, jsRounds } = brief ? { seconds: 0.2, runs: 1, jsRounds: 3 } : { seconds: 0.5, runs: 3, jsRounds: 5 };
  const field = (text, name) => {
    const m = new RegExp(`${name} ([\\d.]+)`).exec(text);
    if (!m) throw new Error(`${path.basename(costProbe)}: no ${name} in: ${text}`);
    return Number(m[1]);
  };
  const c = [], js = [];
  for (let i = 0; i < runs; i++) {
    c.push(execFileSync(costProbe, [String(seconds)]).toString());
    js.push(execFileSync(process.execPath, [path.join(here, 'js-cost-probe.mjs'), String(jsRounds)]).toString());
  }
  return {
    getpidUs: median(c.map((t) => field(t, 'getpid_us'))),
    pageUs: median(c.map((t) => field(t, 'page_us'))),
    genlUs: median(c.map((t) => field(t, 'genl_us'))),
    computeUs: median(c.map((t) => field(t, 'compute_us'))),
    jsFirstMs: median(js.map((t) => field(t, 'js_first_ms'))),
    jsBestMs: median(js.map((t) => field(t, 'js_best_ms'))),
  };
}
