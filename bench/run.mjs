#!/usr/bin/env node
/**
 * `npm run bench`: every benchmark group, progress on stderr, figures in
 * bench/results/*.json, charts in bench/results/charts/*.svg and tables in
 * BENCHMARKS.md.
 *
 *   node bench/run.mjs [--size small|full] [--only GROUP[,GROUP]] [--sandboxes uml,qemu] [--strict]
 *
 * --size full (default): the IPVS and proxy benchmarks in both sandbox
 *   kernels (user-mode-linux and QEMU-TCG) at a ladder of cluster sizes
 *   (1,000, 10,000 and 50,000 services; the repeated runs at 10,000), ipset
 *   on the host; about 80 minutes here on a quiet machine; rewrites the generated part of
 *   BENCHMARKS.md (between the bench:begin/end markers; the notes around it
 *   are kept).
 * --size small: one small size per group, for CI (a few minutes); writes
 *   bench/results/*-small.json and bench/results/summary-small.md, never
 *   BENCHMARKS.md.
 * --only GROUP: run these groups only (the others' tables come from their
 *   earlier results). --sandboxes: run the sandbox groups in these kernels
 *   only. --report-only: run nothing, rewrite the tables and charts from
 *   bench/results. --strict: exit 1 when a target is missed.
 * --results DIR: read and write the JSON files there instead of bench/results
 *   (CI: node bench/run.mjs --size small --results "$TMP/bench").
 * --max-services N: leave out the sizes of a ladder above N (a loaded machine).
 * --resume: take the sizes a stopped run finished (their files in
 *   bench/.build) instead of running them again.
 *
 * A group is a file bench/group-NAME.mjs exporting { name, covers, files(ctx),
 * run(ctx), report(ctx) } (run is optional: a group may only report), listed
 * in GROUPS below in the order of BENCHMARKS.md, with its sizes in SIZES.
 *
 * Needs root (network namespaces), cc, ipvsadm, ipset, strace, /usr/bin/time,
 * and the build (npm run build). The sandboxes are booted through
 * scripts/with-kernel.sh, which installs what they need.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { renderSvg, scalingSpec } from './charts.mjs';
import controller from './group-controller.mjs';
import ipset from './group-ipset.mjs';
import ipvs from './group-ipvs.mjs';
import ipvsadmCost from './group-ipvsadm-cost.mjs';
import nft from './group-nft.mjs';
import scaling from './group-scaling.mjs';
import staleConntrack from './group-stale-conntrack.mjs';
import { targetBook } from './report-format.mjs';
import { SANDBOXES } from './sandboxes.mjs';

/** The groups, in BENCHMARKS.md's order. A new group: its file, one line here, its sizes in SIZES. */
const GROUPS = [ipvs, ipvsadmCost, ipset, controller, scaling, staleConntrack, nft];

/**
 * Sizes per group. In a sandbox group, one entry per kernel: the cluster sizes
 * of its ladder (one boot runs them all, smallest first), the headline size
 * (repeated runs, the tables' figures) and what the runs need.
 */
const SIZES = {
  full: {
    ipvs: {
      uml: { sizes: [1_000, 10_000, 50_000], headline: 10_000, runs: 3, dumps: 3, straceServices: 2_000, sandboxMem: '4G', timeoutS: 10_800 },
      qemu: { sizes: [1_000, 10_000, 50_000], headline: 10_000, runs: 3, dumps: 3, sandboxMem: '4G', timeoutS: 14_400 },
    },
    ipset: { entries: 100_000, runs: 3 },
    'stale-conntrack': { services: 10_000, runs: 3 },
    controller: {
      // syncPeriodAt: the first resync of 50,000 Services takes 25-40 s in user-mode-linux, so a 30 s period would
      // start the next one at once and leave no idle stretch to read the settled memory in.
      uml: { sizes: [1_000, 10_000, 50_000], headline: 10_000, runs: 3, changes: 200, ladderChanges: 40, manifestChanges: 2, syncPeriod: '30s', syncPeriodAt: { 50_000: '90s' }, sandboxMem: '6G', timeoutS: 10_800 },
      // JavaScript runs ~33x slower under QEMU's emulation: the proxy at fewer sizes and runs there.
      // A cold start of 10,000 there takes ~15 minutes, a full pass over an hour: 200 and 1,000 services instead.
      qemu: { sizes: [200, 1_000], headline: 1_000, runs: 1, changes: 40, ladderChanges: 20, manifestChanges: 0, syncPeriod: '60s', sandboxMem: '4G', timeoutS: 7_200 },
    },
  },
  small: {
    ipvs: {
      // Under strace each system call stops the traced program twice, and a stop costs tens of
      // microseconds in user-mode-linux: the small size counts the calls of 50 services, not 200.
      uml: { sizes: [200], headline: 200, runs: 1, dumps: 3, straceServices: 50, sandboxMem: '1G', timeoutS: 600 },
      qemu: { sizes: [100], headline: 100, runs: 1, dumps: 2, sandboxMem: '1G', timeoutS: 600 },
    },
    ipset: { entries: 10_000, runs: 3 },
    'stale-conntrack': { services: 200, runs: 1 },
    // The small size's resync period is shorter than the full size's, so the memory figure (taken after the first
    // resync) waits less; but its first resync took 6-10 s in user-mode-linux in CI's runs (a loaded machine; at
    // this size its IPv4 iptables-save dominates, whose getsockopt calls are slow in that sandbox: BENCHMARKS.md),
    // and the period must leave an idle stretch after it (bench/controller.mjs refuses one that does not).
    controller: { uml: { sizes: [200], headline: 200, runs: 1, changes: 40, ladderChanges: 0, manifestChanges: 2, syncPeriod: '20s', sandboxMem: '1G', timeoutS: 900 } },
  },
};

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const { values: a } = parseArgs({
  options: {
    size: { type: 'string', default: 'full' },
    only: { type: 'string' },
    sandboxes: { type: 'string' },
    strict: { type: 'boolean', default: false },
    'report-only': { type: 'boolean', default: false },
    results: { type: 'string' },
    resume: { type: 'boolean', default: false },
    'max-services': { type: 'string' },
  },
});
if (!SIZES[a.size]) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const small = a.size === 'small';
const only = a.only?.split(',');
for (const g of only ?? []) if (!GROUPS.some((x) => x.name === g)) throw new Error(`--only ${g}: no such group (${GROUPS.map((x) => x.name).join(', ')})`);
const chosenSandboxes = a.sandboxes?.split(',') ?? Object.keys(SANDBOXES);
for (const s of chosenSandboxes) if (!SANDBOXES[s]) throw new Error(`--sandboxes ${s}: one of ${Object.keys(SANDBOXES).join(', ')}`);
const suffix = small ? '-small' : '';
const results = a.results ? path.resolve(a.results) : path.join(here, 'results');
const build = path.join(here, '.build');
mkdirSync(results, { recursive: true });
mkdirSync(build, { recursive: true });
const t0 = Date.now();
const say = (s) => process.stderr.write(`bench [${((Date.now() - t0) / 1000).toFixed(0)}s]: ${s}\n`);

function run(cmd, args, opts = {}) {
  say(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}`);
}
const writtenThisRun = (file) => existsSync(file) && statSync(file).mtimeMs >= t0 - 1000;

// --- prerequisites ---
if (!['dist/lib/index.js', 'kube-proxy-ipvs/dist/lib/cli/main.js', 'build/Release/ipvs_netlink.node'].every((f) => existsSync(path.join(root, f))))
  throw new Error('build first: npm run build');
const probe = path.join(build, 'floor-probe');
const addressProbe = path.join(build, 'address-probe');
const costProbe = path.join(build, 'kernel-cost-probe');
/** Compiles a C probe into place atomically: another run (--only, --sandboxes) may be executing the old one. */
function compile(source, exe) {
  run('cc', ['-O2', '-Wall', '-o', `${exe}.${process.pid}`, path.join(here, source)]);
  renameSync(`${exe}.${process.pid}`, exe);
}
if (!a['report-only']) {
  compile('floor-probe.c', probe);
  compile('address-probe.c', addressProbe);
  compile('kernel-cost-probe.c', costProbe);
}
const pkgVersion = (name) => spawnSync('dpkg-query', ['-W', '-f', '${Version}', name], { encoding: 'utf8' }).stdout?.trim() || 'unknown';
const machine = {
  kernel: os.release(),
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
  node: process.version,
  ipvsadm: `ipvsadm ${pkgVersion('ipvsadm')}`,
  ipset: `ipset ${pkgVersion('ipset')}`,
};
// The machine is shared: its load average at each group's start and end is part of the record.
const loads = [];
const noteLoad = (what) => loads.push({ what, at: new Date().toISOString(), loadavg: os.loadavg().map((x) => +x.toFixed(2)) });

// --- the context every group gets ---
const book = targetBook();
const machineFile = path.join(results, `machine${suffix}.json`);
const previousRun = existsSync(machineFile) ? JSON.parse(readFileSync(machineFile, 'utf8')) : {};
// Keyed by result file (older records were keyed by group: dropped).
const measuredOn = Object.fromEntries(Object.entries(previousRun.measuredOn ?? {}).filter(([f]) => f.endsWith('.json')));
const charts = [];
const ctx = {
  root, here, build, results, suffix, small, say, run, compile, writtenThisRun, probe, addressProbe, costProbe,
  size: SIZES[a.size],
  maxServices: a['max-services'] ? Number(a['max-services']) : Infinity,
  resume: a.resume,
  allSandboxes: Object.keys(SANDBOXES),
  /** The sandboxes a group runs in at this size, less those not chosen. */
  sandboxesOf: (group) => Object.keys(SIZES[a.size][group] ?? {}).filter((s) => SANDBOXES[s] && chosenSandboxes.includes(s)),
  /** Every sandbox a group has results for at this size, chosen for this run or not (for the report). */
  resultSandboxesOf: (group) => Object.keys(SIZES[a.size][group] ?? {}).filter((s) => SANDBOXES[s]),
  expectWritten(file) {
    if (!writtenThisRun(file)) throw new Error(`${file} was not written by this run (under /tmp? a sandbox guest has its own /tmp)`);
  },
  /** A failure that leaves the group's other figures usable: reported at the end, exit 1. */
  fail: (msg) => { failures.push(msg); say(`FAILED: ${msg}`); },
  /** The machine a result file was measured on (its record, or this machine). */
  measuredOn: (file) => (measuredOn[path.basename(file)] ?? { machine }).machine,
  target: book.target,
  targetIn: book.targetIn,
  /** A chart to draw at the end; its path as BENCHMARKS.md links it. */
  chart(name, opts) {
    const file = path.join(results, 'charts', `${name}${suffix}.svg`);
    charts.push({ file, spec: scalingSpec(opts) });
    return path.relative(root, file);
  },
};
const failures = [];

// --- run ---
for (const g of GROUPS) {
  if (a['report-only'] || !g.run || (only && !only.includes(g.name))) continue;
  noteLoad(`${g.name} start`);
  try {
    await g.run(ctx);
  } catch (err) {
    ctx.fail(`${g.name}: ${err.message}`);
  }
  noteLoad(`${g.name} end`);
  for (const f of g.files(ctx)) if (writtenThisRun(f)) measuredOn[path.basename(f)] = { date: new Date().toISOString(), machine, loads: loads.slice(-2) };
}

// --- report ---
const md = [];
const describeMachine = (m) => `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; host kernel ${m.kernel}; Node ${m.node}; ${m.ipvsadm}; ${m.ipset}`;
const present = GROUPS.flatMap((g) => g.files(ctx).filter(existsSync).map((f) => ({ g, f: path.basename(f) })));
// With --only, the other groups' tables come from earlier results: when those were measured.
function earlierText() {
  const earlier = [...new Set(present.filter(({ f }) => !writtenThisRun(path.join(results, f))).map(({ f }) => measuredOn[f]?.date?.slice(0, 10) ?? 'an unrecorded date'))].sort();
  return earlier.length ? `; the other groups' figures from results measured on ${earlier.join(', ')}` : '';
}
const measuredDates = [...new Set(present.map(({ f }) => measuredOn[f]?.date?.slice(0, 10)).filter(Boolean))].sort();
// --report-only measures nothing: the line says when the figures were measured, not only when the tables were written.
md.push(
  a['report-only'] && measuredDates.length
    ? `Generated by \`node bench/run.mjs --size ${a.size} --report-only\` on ${new Date().toISOString().slice(0, 10)} from results measured ${measuredDates.length > 1 ? `from ${measuredDates[0]} to ${measuredDates.at(-1)}` : `on ${measuredDates[0]}`}.`
    : `Generated by \`node bench/run.mjs --size ${a.size}${only ? ` --only ${only.join(',')}` : ''}\` on ${new Date().toISOString().slice(0, 10)}${earlierText()}.`,
);
md.push('');
const machines = [...new Set(present.map(({ f }) => describeMachine(measuredOn[f]?.machine ?? machine)))];
if (machines.length <= 1) md.push(`Machine: ${machines[0] ?? describeMachine(machine)}; shared with other work (2 cores): compare ratios within a run, not times across runs.`);
else for (const { g, f } of present) md.push(`Machine for ${g.covers} (\`${f}\`, measured ${(measuredOn[f]?.date ?? '?').slice(0, 10)}): ${describeMachine(measuredOn[f]?.machine ?? machine)}.`, '');
const loadText = present
  .filter(({ f }) => measuredOn[f]?.loads?.length)
  .map(({ f }) => `\`${f}\` ${measuredOn[f].loads.map((l) => l.loadavg[0].toFixed(1)).join(' → ')}`);
if (loadText.length) md.push('', `Load average (1 min) when each result's group started → ended: ${loadText.join('; ')}.`);
for (const g of GROUPS) md.push(...g.report(ctx));
await Promise.all(charts.map((c) => renderSvg(c.spec, c.file)));
if (charts.length) say(`drew ${charts.length} chart(s) in ${path.relative(root, path.join(results, 'charts'))}`);

const text = md.join('\n') + '\n';
process.stdout.write('\n' + text);
if (small) {
  writeFileSync(path.join(results, 'summary-small.md'), text);
  say(`wrote ${path.relative(root, path.join(results, 'summary-small.md'))} (BENCHMARKS.md is left alone in small mode)`);
} else {
  const file = path.join(root, 'BENCHMARKS.md');
  const begin = '<!-- bench:begin (generated by bench/run.mjs; edits inside are overwritten) -->';
  const end = '<!-- bench:end -->';
  let doc = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmarks\n\n${begin}\n${end}\n`;
  if (doc.indexOf(begin.slice(0, 18)) < 0 || doc.indexOf(end) < 0) doc = `${doc.trimEnd()}\n\n${begin}\n${end}\n`;
  doc = doc.slice(0, doc.indexOf(begin.slice(0, 18))) + begin + '\n' + text + doc.slice(doc.indexOf(end));
  writeFileSync(file, doc);
  say('wrote BENCHMARKS.md');
}
// Another run (--only, --sandboxes) may have recorded its own files meanwhile: keep its entries, replace ours.
const latest = Object.fromEntries(Object.entries(existsSync(machineFile) ? JSON.parse(readFileSync(machineFile, 'utf8')).measuredOn ?? {} : {}).filter(([f]) => f.endsWith('.json')));
const ours = Object.fromEntries(Object.entries(measuredOn).filter(([f]) => writtenThisRun(path.join(results, f))));
// The run's own record (date, machine, loads) is a measuring run's: --report-only keeps the one it found.
const runRecord = a['report-only'] && previousRun.machine ? { date: previousRun.date, machine: previousRun.machine, loads: previousRun.loads ?? [] } : { date: new Date().toISOString(), machine, loads };
writeFileSync(machineFile, JSON.stringify({ date: runRecord.date, size: a.size, machine: runRecord.machine, measuredOn: { ...measuredOn, ...latest, ...ours }, loads: runRecord.loads, checks: book.checks, failures }, null, 2) + '\n');
const missed = book.checks.filter((x) => !x.ok);
say(`done: ${book.checks.length - missed.length}/${book.checks.length} targets met${missed.length ? `; missed: ${missed.map((x) => x.name).join('; ')}` : ''}`);
if (failures.length) {
  say(`${failures.length} failure(s):\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
if (a.strict && missed.length) process.exit(1);
