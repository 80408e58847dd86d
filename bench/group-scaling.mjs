/**
 * Report group "scaling": how each cost grows with the cluster, from the
 * ipvs and controller groups' results at every size of their ladders (it
 * runs nothing itself). One table and one chart (bench/charts.mjs) per
 * measure: ours, the floor and the reference tool, one panel per sandbox.
 */
import { existsSync, readFileSync } from 'node:fs';

import { controllerFigures } from './controller-figures.mjs';
import { fileOf as controllerFile } from './group-controller.mjs';
import { fileOf as ipvsFile } from './group-ipvs.mjs';
import { ipvsFigures } from './ipvs-figures.mjs';
import { cell, count, f1 } from './report-format.mjs';
import { kernelLabel, SANDBOXES } from './sandboxes.mjs';

const MiB = 2 ** 20;

/** Each measure: which group's results, and its lines (undefined where a size lacks the figure). */
const MEASURES = [
  {
    name: 'apply',
    from: 'ipvs',
    title: 'Programming N services x 10 destinations',
    yTitle: 'wall time (ms)',
    lines: [
      ['Ipvs.apply', (x) => x.apply.wallMs],
      ['floor probe', (x) => x.probe.wallMs],
      ['ipvsadm -R', (x) => x.ipvsadm.wallMs],
    ],
  },
  {
    name: 'dump',
    from: 'ipvs',
    title: 'Reading them back',
    yTitle: 'wall time (ms)',
    lines: [
      ['dump(), first call in a fresh process', (x) => x.dump.freshMs],
      ['dump(), warm', (x) => x.dump.warmMs],
      ['floor probe --dump', (x) => x.probe.dumpMs],
      ['ipvsadm -Sn', (x) => x.ipvsadm.dumpMs],
    ],
  },
  {
    name: 'cold-start',
    from: 'controller',
    title: 'The proxy\'s cold start: spawn to a programmed kernel',
    yTitle: 'wall time (ms)',
    lines: [
      ['kube-proxy-ipvs --manifests', (x) => x.cold.total],
      ['kube-proxy-ipvs --master (API server)', (x) => x.apiCold?.total],
      ['floor (probes, addMany, iptables-restore)', (x) => x.floor.total],
      ['node start + JSON.parse of the objects only', (x) => x.floor.parseOnly],
    ],
  },
  {
    name: 'endpoint-change',
    from: 'controller',
    title: 'One endpoint change, with N services programmed (no reference tool: kube-proxy is not here)',
    yTitle: 'latency (ms)',
    lines: [
      ['99th percentile', (x) => x.changes?.all.p99],
      ['median', (x) => x.changes?.all.median],
      ['median, the sync alone (netlink round trips)', (x) => x.changes?.all.sync],
    ],
  },
  {
    name: 'memory',
    from: 'controller',
    title: 'The proxy\'s resident memory with N services programmed',
    yTitle: 'MiB',
    // Linear: memory grows slower than the cluster (node's own ~40 MiB first).
    logY: false,
    lines: [
      ['peak (VmHWM)', (x) => x.memory && Math.max(x.memory.peak, x.memory.settledPeak ?? 0) / MiB],
      ['settled, between resyncs', (x) => x.memory && (x.memory.settled ?? x.memory.rss) / MiB],
      ['node + JSON.parse of the objects only, peak', (x) => x.floor.parseOnlyRss && x.floor.parseOnlyRss / MiB],
      ["node -e '', peak", (x) => x.floor.nodeStartRss && x.floor.nodeStartRss / MiB],
    ],
  },
];

function load(ctx, from) {
  const out = {};
  for (const sb of ctx.allSandboxes) {
    const file = from === 'ipvs' ? ipvsFile(ctx, sb) : controllerFile(ctx, sb);
    if (!existsSync(file)) continue;
    const r = JSON.parse(readFileSync(file, 'utf8'));
    const figures = from === 'ipvs' ? ipvsFigures : controllerFigures;
    // One panel per sandbox, named after the kernel of its headline result.
    const kernel = kernelLabel(sb, r.sizes[r.headline] ?? Object.values(r.sizes)[0]);
    out[sb] = Object.entries(r.sizes).map(([n, res]) => ({ services: Number(n), kernel, fig: figures(res) })).sort((a, b) => a.services - b.services);
  }
  return out;
}

export default {
  name: 'scaling',
  covers: 'the cluster-size ladder (from benchmarks 1, 2 and 4-6)',
  files: () => [],
  report(ctx) {
    const data = { ipvs: load(ctx, 'ipvs'), controller: load(ctx, 'controller') };
    // A ladder needs two sizes in one kernel at least (CI's small size has one).
    if (!Object.values(data).some((d) => Object.values(d).some((l) => l.length >= 2))) return [];
    const md = [];
    md.push('');
    md.push('### How cost grows with the cluster');
    md.push('');
    md.push(`The same benchmarks at every size of the ladder (N services x 10 destinations or endpoints), in each sandbox: the headline size is the median of the runs above, every other size one run (dump figures: 2 reads). Charts are drawn by bench/run.mjs from the results (Vega-Lite, rendered to SVG); log scales on both axes where a straight line means cost proportional to size (slope 1); memory on a linear scale. Each panel names its kernel.`);
    for (const m of MEASURES) {
      const bySb = data[m.from];
      const sbs = Object.keys(bySb);
      if (!sbs.length) continue;
      const points = [];
      for (const sb of sbs)
        for (const { services, kernel, fig } of bySb[sb])
          for (const [who, get] of m.lines) {
            const v = get(fig);
            if (v !== undefined && v !== null && Number.isFinite(v) && v > 0) points.push({ kernel, services, who, value: +v.toPrecision(4) });
          }
      if (!points.length) continue;
      const file = ctx.chart(m.name, { title: m.title, yTitle: m.yTitle, points, logY: m.logY ?? true, order: m.lines.map(([w]) => w), kernels: sbs.map((sb) => bySb[sb][0]?.kernel) });
      md.push('');
      md.push(`#### ${m.title}`);
      md.push('');
      md.push(`![${m.title}](${file})`);
      md.push('');
      const cols = sbs.flatMap((sb) => m.lines.map(([w], i) => (i === 0 ? `${bySb[sb][0].kernel}: ${w}` : w)));
      md.push(`| services | ${cols.join(' | ')} |`);
      md.push(`|---:|${cols.map(() => '---:').join('|')}|`);
      const all = [...new Set(sbs.flatMap((sb) => bySb[sb].map((x) => x.services)))].sort((a, b) => a - b);
      for (const n of all) md.push(`| ${count(n)} | ${sbs.flatMap((sb) => m.lines.map(([, get]) => { const at = bySb[sb].find((x) => x.services === n); return at ? cell(get(at.fig), f1) : ''; })).join(' | ')} |`);
      const failed = sbs.flatMap((sb) => {
        const file = m.from === 'ipvs' ? ipvsFile(ctx, sb) : controllerFile(ctx, sb);
        return (JSON.parse(readFileSync(file, 'utf8')).failedSizes ?? []).map((x) => `${count(x.services)} in ${SANDBOXES[sb].label} (exit ${x.exit})`);
      });
      if (failed.length) md.push('', `Sizes that did not complete: ${failed.join(', ')}.`);
      const skipped = sbs.flatMap((sb) => {
        const file = m.from === 'ipvs' ? ipvsFile(ctx, sb) : controllerFile(ctx, sb);
        return (JSON.parse(readFileSync(file, 'utf8')).skippedSizes ?? []).map((n) => `${count(n)} in ${SANDBOXES[sb].label}`);
      });
      if (skipped.length) md.push('', `Sizes of the ladder left out of this run (\`--max-services\`): ${skipped.join(', ')}.`);
    }
    return md;
  },
};
