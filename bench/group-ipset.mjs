/**
 * Benchmark group "ipset" (benchmark 3): Ipset.addMany / list against
 * `ipset restore` / `ipset save`, on the host kernel (bench/ipset.ts).
 * Results: bench/results/ipset[-small].json.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { count } from './report-format.mjs';

const fileOf = (ctx) => path.join(ctx.results, `ipset${ctx.suffix}.json`);

export default {
  name: 'ipset',
  covers: 'benchmark 3',
  files: (ctx) => [fileOf(ctx)],
  run(ctx) {
    const cfg = ctx.size.ipset;
    ctx.say(`ipset: ${cfg.entries} hash:ip,port entries, ${cfg.runs} runs`);
    ctx.run(process.execPath, ['--import=./node_modules/@tapjs/typescript/dist/esm/import.mjs', 'bench/ipset.ts', '--entries', String(cfg.entries), '--runs', String(cfg.runs), '--out', fileOf(ctx)]);
    ctx.expectWritten(fileOf(ctx));
  },
  report(ctx) {
    if (!existsSync(fileOf(ctx))) return [];
    const r = JSON.parse(readFileSync(fileOf(ctx), 'utf8'));
    const md = [];
    md.push('');
    md.push(`### 3. ipset: ${count(r.entries)} hash:ip,port entries (host kernel ${ctx.measuredOn(fileOf(ctx)).kernel})`);
    md.push('');
    md.push(`Each run in a fresh network namespace, the set created beforehand on both sides; median of ${r.runs} runs; the tool's times include its process start. addMany sent ${r.messagesPerLoad} netlink messages per load.`);
    md.push('');
    md.push('| case | ours (ms) | tool (ms) | tool/ours | target ≥2x |');
    md.push('|---|---:|---:|---:|---|');
    for (const row of r.rows) md.push(`| ${row.name} | ${row.oursMs} | ${row.toolMs} | ${row.speedup}x | ${ctx.target(`ipset ${row.name}`, row.speedup >= 2, `${row.speedup}x`)} |`);
    return md;
  },
};
