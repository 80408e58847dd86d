/**
 * Benchmark group "controller" (benchmarks 4-6): the kube-proxy-ipvs
 * binary's cold start against the floor, endpoint changes and memory, in
 * each sandbox kernel (bench/controller.mjs inside one boot per sandbox,
 * once per cluster size).
 *
 * Results: bench/results/controller-SANDBOX[-small].json, each
 * { sandbox, headline, sizes: { N: bench/controller.mjs's result at N services } }.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { controllerTables } from './controller-report.mjs';
import { runLadder, saveLadder } from './sandboxes.mjs';

export const fileOf = (ctx, sandbox) => path.join(ctx.results, `controller-${sandbox}${ctx.suffix}.json`);

/**
 * The TypeScript loader for the test API server (kube-proxy-ipvs/test/support/fake-apiserver.ts): the project's
 * TypeScript transpiled on the host, as the tests run it (ts-node would spend seconds in UML, minutes in QEMU).
 */
const LOADER = './scripts/test-files/ts-transpiled.mjs';

function runSandbox(ctx, sandbox, cfg) {
  ctx.run(process.execPath, ['scripts/test-files/ts-transpile.mjs']);
  const out = runLadder(ctx, 'controller', sandbox, cfg, (n, headline, outFile) => [
    process.execPath, `--import=${LOADER}`, 'bench/controller.mjs', '--services', String(n),
    '--runs', String(headline ? cfg.runs : 1), '--changes', String(headline ? cfg.changes : cfg.ladderChanges),
    '--manifest-changes', String(headline ? cfg.manifestChanges : 0), '--sync-period', cfg.syncPeriodAt?.[n] ?? cfg.syncPeriod,
    '--probe', ctx.probe, '--address-probe', ctx.addressProbe, '--out', outFile,
  ]);
  saveLadder(ctx, 'controller', fileOf(ctx, sandbox), out);
}

export default {
  name: 'controller',
  covers: 'benchmarks 4-6',
  files: (ctx) => ctx.resultSandboxesOf('controller').map((sb) => fileOf(ctx, sb)),
  run(ctx) {
    for (const sandbox of ctx.sandboxesOf('controller')) {
      const cfg = ctx.size.controller[sandbox];
      ctx.say(`controller in ${sandbox}: kube-proxy-ipvs with ${cfg.sizes.join(', ')} Services x 10 endpoints; ${cfg.runs} cold start(s) and ${cfg.changes} endpoint changes at ${cfg.headline}`);
      runSandbox(ctx, sandbox, cfg);
    }
  },
  report(ctx) {
    const atHeadline = {};
    for (const sb of ctx.allSandboxes) {
      if (!existsSync(fileOf(ctx, sb))) continue;
      const r = JSON.parse(readFileSync(fileOf(ctx, sb), 'utf8'));
      atHeadline[sb] = r.sizes[r.headline];
    }
    return Object.keys(atHeadline).length ? controllerTables(atHeadline, ctx) : [];
  },
};
