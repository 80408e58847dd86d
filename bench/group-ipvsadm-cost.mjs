/**
 * Group "ipvsadm-cost": how much of `ipvsadm -R`'s ratio to the floor
 * probe is the sandbox's doing. ipvsadm's per-rule system calls (a new
 * netlink socket, a family lookup and the command, bench/ipvsadm-cost.c)
 * priced on the host kernel, which has no IPVS but charges what a real
 * kernel charges for those calls; against the kernel's own work per add,
 * which the floor probe's CPU per op in user-mode-linux bounds from above.
 * Results: bench/results/ipvsadm-cost[-small].json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

import { fileOf as ipvsFile } from './group-ipvs.mjs';
import { ipvsFigures } from './ipvs-figures.mjs';
import { f1, median, ratio } from './report-format.mjs';
import { SANDBOXES } from './sandboxes.mjs';

const fileOf = (ctx) => path.join(ctx.results, `ipvsadm-cost${ctx.suffix}.json`);
const RULES = 20_000;
const RUNS = 3;

export default {
  name: 'ipvsadm-cost',
  covers: "the estimate of ipvsadm -R's ratio on a real kernel",
  files: (ctx) => [fileOf(ctx)],
  run(ctx) {
    const exe = path.join(ctx.build, 'ipvsadm-cost');
    ctx.compile('ipvsadm-cost.c', exe);
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      const out = execFileSync(exe, [String(RULES)]).toString();
      const m = /rules (\d+) us_per_rule ([\d.]+) cpu_us_per_rule ([\d.]+) syscalls_per_rule ([\d.]+)/.exec(out);
      if (!m) throw new Error(`ipvsadm-cost printed: ${out}`);
      runs.push({ rules: Number(m[1]), wallUsPerRule: Number(m[2]), cpuUsPerRule: Number(m[3]), syscallsPerRule: Number(m[4]) });
      ctx.say(`ipvsadm-cost ${i + 1}/${RUNS}: ${m[3]} µs of CPU per rule (${m[2]} µs wall)`);
    }
    writeFileSync(fileOf(ctx), JSON.stringify({ date: new Date().toISOString(), runs }, null, 2) + '\n');
  },
  report(ctx) {
    if (!existsSync(fileOf(ctx)) || !existsSync(ipvsFile(ctx, 'uml'))) return [];
    const runs = JSON.parse(readFileSync(fileOf(ctx), 'utf8')).runs;
    const overhead = median(runs.map((x) => x.cpuUsPerRule));
    const uml = JSON.parse(readFileSync(ipvsFile(ctx, 'uml'), 'utf8'));
    const x = ipvsFigures(uml.sizes[uml.headline]);
    // The probe's CPU per op in UML: system calls are few there (one per 4096 ops), so this is mostly the kernel's
    // own work on each add, run natively; more than a real kernel spends (UML's page and timer handling), hence a bound.
    const kernelWork = x.probe.cpuUs / x.ops;
    const addCpu = x.ipvsadm.cpuUs / x.ops;
    const others = Object.keys(SANDBOXES).filter((sb) => sb !== 'uml' && existsSync(ipvsFile(ctx, sb)));
    const otherRatios = others.map((sb) => {
      const r = JSON.parse(readFileSync(ipvsFile(ctx, sb), 'utf8'));
      const y = ipvsFigures(r.sizes[r.headline]);
      return `${ratio(y.ipvsadm.wallMs / y.probe.wallMs)} in ${SANDBOXES[sb].label}`;
    });
    return [
      '',
      `**\`ipvsadm -R\` on a real kernel, estimated.** Its ratio to the floor probe is ${ratio(x.ipvsadm.wallMs / x.probe.wallMs)} in user-mode-linux${otherRatios.length ? ` and ${otherRatios.join(', ')}` : ''} (wall time, table 1). For every rule it opens a new netlink socket, sizes, binds and names it, looks the IPVS family up, sends the command, reads each answer three times (peek, data, ack) and closes the socket. bench/ipvsadm-cost.c makes those calls (${runs[0].syscallsPerRule} per rule) on this host's own kernel (the netlink controller standing in for IPVS, so everything but the add itself): ${f1(overhead)} µs of CPU per rule (median of ${runs.length} runs of ${runs[0].rules.toLocaleString('en')}; CPU time, as the wall time on this shared machine is mostly waiting for a core). In user-mode-linux the same rule costs ipvsadm ${f1(addCpu)} µs of CPU. The kernel's own work per add is at most the floor probe's CPU per op there, ${f1(kernelWork)} µs (the probe makes one system call per 4,096 adds, and user-mode-linux runs kernel code natively). So on a real kernel \`ipvsadm -R\` should take at least ${ratio((overhead + kernelWork) / kernelWork)} the probe's time, and more as the kernel's work per add falls below that bound: the sandbox inflates the headline ratio, but the cost is ipvsadm's own.`,
    ];
  },
};
