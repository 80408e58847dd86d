/**
 * Benchmark group "ipvs" (benchmarks 1, 2 and the library's memory): IPVS
 * programming and reading, Ipvs against `ipvsadm` and the floor probe, in
 * each sandbox kernel (bench/ipvs.mjs inside one boot per sandbox, once per
 * cluster size), then the library's side alone on the host.
 *
 * Results: bench/results/ipvs-SANDBOX[-small].json, each
 * { sandbox, headline, sizes: { N: bench/ipvs.mjs's result at N services } }.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { clientSide } from './ipvs-client-side-run.mjs';
import { ipvsReport } from './ipvs-report.mjs';
import { kernelCosts } from './kernel-costs.mjs';
import { profileSummary } from './profile-summary.mjs';
import { runLadder, saveLadder } from './sandboxes.mjs';

export const fileOf = (ctx, sandbox) => path.join(ctx.results, `ipvs-${sandbox}${ctx.suffix}.json`);

/** One sandbox boot: every size of the ladder, the headline size with repeated runs (and, in UML, system calls counted). */
function runSandbox(ctx, sandbox, cfg) {
  const replies = (n) => path.join(ctx.build, `ipvs-dump-replies-${sandbox}-${n}${ctx.suffix}.bin`);
  const out = runLadder(ctx, 'ipvs', sandbox, cfg, (n, headline, outFile) => {
    const argv = [process.execPath, 'bench/ipvs.mjs', '--services', String(n), '--runs', String(headline ? cfg.runs : 1), '--dumps', String(headline ? cfg.dumps : 2),
      '--probe', ctx.probe, '--out', outFile, '--replies', replies(n)];
    // System calls are the programs' own, the same in any kernel: counted once, in UML (under QEMU strace takes minutes per thousand rules).
    if (headline && sandbox === 'uml') argv.push('--strace-services', String(cfg.straceServices));
    else argv.push('--no-strace');
    if (!headline) argv.push('--no-client-side');
    else argv.push('--cost-probe', ctx.costProbe);
    return argv;
  });
  const head = out.sizes[cfg.headline];
  // The library's side alone where page faults and system calls cost what a real kernel charges.
  if (!existsSync(replies(cfg.headline))) throw new Error(`ipvs in ${sandbox}: no captured dump replies at ${replies(cfg.headline)}`);
  head.hostClientSide = [];
  for (let i = 0; i < cfg.runs; i++) {
    ctx.say(`ipvs (${sandbox}): the library's side alone on the host (kernel stubbed), ${i + 1}/${cfg.runs}`);
    head.hostClientSide.push(clientSide(cfg.headline, replies(cfg.headline), cfg.dumps));
  }
  head.hostKernel = os.release();
  ctx.say(`ipvs (${sandbox}): what the host kernel charges, beside the sandbox's`);
  head.hostKernelCosts = kernelCosts(ctx.costProbe, { brief: cfg.runs === 1 });
  // Where the library's own time goes, for the report: one more process, under the profiler (which slows it: not timed).
  const prefix = path.join(ctx.build, `ipvs-profile-${sandbox}`);
  clientSide(cfg.headline, replies(cfg.headline), 1, prefix);
  head.hostProfile = {};
  for (const what of ['apply', 'dump']) {
    const s = profileSummary(JSON.parse(readFileSync(`${prefix}-${what}.cpuprofile`, 'utf8')));
    head.hostProfile[what] = { totalUs: s.totalUs, self: s.self.slice(0, 10), inclusive: s.inclusive.slice(0, 10) };
    rmSync(`${prefix}-${what}.cpuprofile`, { force: true });
  }
  for (const n of cfg.sizes) for (const f of [replies(n), `${replies(n)}.strings.json`]) rmSync(f, { force: true });
  saveLadder(ctx, 'ipvs', fileOf(ctx, sandbox), out);
}

export default {
  name: 'ipvs',
  covers: "benchmarks 1, 2 and the library's memory",
  files: (ctx) => ctx.resultSandboxesOf('ipvs').map((sb) => fileOf(ctx, sb)),
  run(ctx) {
    for (const sandbox of ctx.sandboxesOf('ipvs')) {
      const cfg = ctx.size.ipvs[sandbox];
      ctx.say(`ipvs in ${sandbox}: ${cfg.sizes.join(', ')} services x 10 destinations; ${cfg.runs} run(s) at ${cfg.headline}`);
      runSandbox(ctx, sandbox, cfg);
    }
  },
  report(ctx) {
    const bySandbox = {};
    for (const sb of ctx.allSandboxes) if (existsSync(fileOf(ctx, sb))) bySandbox[sb] = JSON.parse(readFileSync(fileOf(ctx, sb), 'utf8'));
    return Object.keys(bySandbox).length ? ipvsReport(bySandbox, ctx) : [];
  },
};
