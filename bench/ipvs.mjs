/**
 * IPVS benchmarks (run where IPVS exists: `bash scripts/with-kernel.sh node bench/ipvs.mjs ...`).
 *
 * Programs N services x 10 destinations three ways, each in a fresh network
 * namespace: Ipvs.apply (bench/ipvs-ours.mjs, its own node process), `ipvsadm -R`
 * of the same rules, and bench/floor-probe (the same netlink messages in big
 * batches, nothing around them). Reads them back with dump() and `ipvsadm -Sn`.
 * Then the library's side alone (bench/ipvs-client-side.mjs: apply() and the
 * decoding of a captured dump, the kernel stubbed out), and, on separate runs
 * under strace, system calls per operation.
 *
 *   node bench/ipvs.mjs --services N [--strace-services M] [--runs R] --probe PATH --out FILE [--replies FILE]
 *
 * --replies: where the first run's captured dump replies go (for the
 * client-side runs here and, afterwards, on the host: bench/run.mjs).
 * --no-strace: no system-call counts (they are the programs', the same in any
 * kernel; under QEMU's emulation strace makes ipvsadm -R of 200 services take
 * minutes). --no-client-side: no runs of the library's side alone (the
 * cluster-size ladder's other sizes). --cost-probe PATH: first, what this
 * kernel charges for a system call, a page and so on (bench/kernel-costs.mjs),
 * in the result as kernelCosts.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { DESTS_PER_SERVICE, messages, restoreText } from './ipvs-rules.mjs';
import { clientSide } from './ipvs-client-side-run.mjs';
import { kernelCosts } from './kernel-costs.mjs';
import { freshNetns, timed } from './netns-util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    services: { type: 'string', default: '200' },
    'strace-services': { type: 'string' },
    runs: { type: 'string', default: '1' },
    dumps: { type: 'string', default: '3' },
    probe: { type: 'string', default: path.join(here, '.build', 'floor-probe') },
    out: { type: 'string', default: path.join(here, 'results', 'ipvs.json') },
    'no-strace': { type: 'boolean', default: false },
    'no-client-side': { type: 'boolean', default: false },
    replies: { type: 'string', default: path.join(here, '.build', 'ipvs-dump-replies.bin') },
    'cost-probe': { type: 'string' },
  },
});
const N = Number(a.services);
const NS_STRACE = Number(a['strace-services'] ?? a.services);
const RUNS = Number(a.runs);
const DUMPS = Number(a.dumps);
const OPS = N * (DESTS_PER_SERVICE + 1);
const T0 = Date.now();
const say = (s) => process.stderr.write(`bench ipvs [${((Date.now() - T0) / 1000).toFixed(0)}s]: ${s}\n`);
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

if (!existsSync('/proc/net/ip_vs')) throw new Error('no IPVS here: run through scripts/with-kernel.sh');
if (!existsSync(a.probe)) throw new Error(`${a.probe} missing: bench/run.mjs compiles bench/floor-probe.c`);

// Rule files, time and strace output: scratch space, removed at the end.
const work = mkdtempSync(path.join(os.tmpdir(), 'ipvs-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const files = {};
function prepare(n) {
  if (files[n]) return files[n];
  const f = { restore: path.join(work, `rules-${n}.ipvsadm`), msgs: path.join(work, `rules-${n}.nlmsg`) };
  writeFileSync(f.restore, restoreText(n));
  writeFileSync(f.msgs, messages(n));
  return (files[n] = f);
}

function withNetns(fn) {
  const ns = freshNetns('ipvsbench');
  try {
    return fn(ns.name, ns.path);
  } finally {
    ns.remove();
  }
}

function countIpvs(ns) {
  const out = execFileSync('ip', ['netns', 'exec', ns, 'ipvsadm', '-Sn'], { maxBuffer: 1 << 30 }).toString();
  let s = 0, d = 0;
  for (const l of out.split('\n')) if (l.startsWith('-A ')) s++; else if (l.startsWith('-a ')) d++;
  return { services: s, destinations: d };
}
function expectCount(ns, n, who) {
  const c = countIpvs(ns);
  if (c.services !== n || c.destinations !== n * DESTS_PER_SERVICE)
    throw new Error(`${who}: expected ${n} services and ${n * DESTS_PER_SERVICE} destinations, found ${JSON.stringify(c)}`);
}

function oursProcess(nsPath, n, args) {
  const r = spawnSync(process.execPath, ['--expose-gc', path.join(here, 'ipvs-ours.mjs'), '--netns', nsPath, '--services', String(n), ...args], { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`ipvs-ours exited ${r.status}: ${String(r.stderr).slice(0, 2000)}`);
  return JSON.parse(String(r.stdout).trim().split('\n').pop());
}

function ours(n, extra = []) {
  return withNetns((ns, nsPath) => {
    const res = oursProcess(nsPath, n, ['--dumps', String(DUMPS), ...extra]);
    if (res.failed) throw new Error(`apply: ${res.failed} ops failed, first: ${res.firstError}`);
    expectCount(ns, n, 'Ipvs.apply');
    // dump() as a program that reads once does it: the first call in a fresh process.
    const fresh = oursProcess(nsPath, n, ['--read-only']);
    if (fresh.dumpedDestinations !== n * DESTS_PER_SERVICE) throw new Error(`a fresh process's dump() read ${fresh.dumpedDestinations} destinations`);
    res.freshDumpMs = fresh.dumpMs[0];
    res.freshDumpFaults = fresh.dumpFaults[0];
    res.freshDumpResultBytes = fresh.dumpResultBytes;
    res.freshPageUs = fresh.freshPageUs;
    return res;
  });
}

function ipvsadm(n) {
  const f = prepare(n);
  return withNetns((ns) => {
    const prog = timed(ns, ['ipvsadm', '-R'], readFileSync(f.restore));
    expectCount(ns, n, 'ipvsadm -R');
    const dumps = [];
    for (let i = 0; i < DUMPS; i++) {
      const t = timed(ns, ['ipvsadm', '-Sn']);
      const lines = t.stdout.split('\n').filter((l) => l.startsWith('-a ')).length;
      if (lines !== n * DESTS_PER_SERVICE) throw new Error(`ipvsadm -Sn printed ${lines} destinations`);
      dumps.push({ wallMs: t.wallMs, userUs: t.userUs, systemUs: t.systemUs, minorFaults: t.minorFaults });
    }
    return { program: { wallMs: prog.wallMs, userUs: prog.userUs, systemUs: prog.systemUs, minorFaults: prog.minorFaults }, dumps };
  });
}

function probe(n) {
  const f = prepare(n);
  return withNetns((ns) => {
    const t = timed(ns, [a.probe, f.msgs]);
    const m = /ok (\d+) errors (\d+) sendmsg (\d+) recv (\d+)/.exec(t.stdout);
    if (!m || Number(m[1]) !== n * (DESTS_PER_SERVICE + 1) || Number(m[2]) !== 0) throw new Error(`floor-probe: ${t.stdout}`);
    expectCount(ns, n, 'floor-probe');
    // The floor for reading the same table back: the same dumps, nothing decoded.
    const dumps = [];
    for (let i = 0; i < DUMPS; i++) {
      const d = timed(ns, [a.probe, '--dump']);
      const dm = /dump services (\d+) destinations (\d+) sendmsg (\d+) recv (\d+)/.exec(d.stdout);
      if (!dm || Number(dm[1]) !== n || Number(dm[2]) !== n * DESTS_PER_SERVICE) throw new Error(`floor-probe --dump: ${d.stdout}`);
      dumps.push({ wallMs: d.wallMs, userUs: d.userUs, systemUs: d.systemUs, minorFaults: d.minorFaults, sendmsg: Number(dm[3]), recv: Number(dm[4]) });
    }
    return { wallMs: t.wallMs, userUs: t.userUs, systemUs: t.systemUs, minorFaults: t.minorFaults, sendmsg: Number(m[3]), recv: Number(m[4]), dumps };
  });
}

/** strace -c summary: total calls and the top calls by count. */
function straceSummary(file) {
  const rows = readFileSync(file, 'utf8').split('\n').filter((l) => /^\s*\d/.test(l));
  const byName = {};
  let total = 0;
  for (const l of rows) {
    const t = l.trim().split(/\s+/);
    const name = t[t.length - 1];
    const calls = Number(t[3]);
    if (name === 'total') total = calls;
    else byName[name] = calls;
  }
  return { total, byName };
}

/** Counts the system calls of a full strace -f log between two marker calls. */
function countBetween(file, start, end) {
  const lines = readFileSync(file, 'utf8').split('\n');
  let on = false, total = 0;
  const byName = {};
  for (const l of lines) {
    if (l.includes(`/ipvs-bench-marker/${start}`)) { on = true; continue; }
    if (l.includes(`/ipvs-bench-marker/${end}`)) break;
    if (!on || l.includes('resumed>') || /^\d+\s+(\+\+\+|---)/.test(l)) continue;
    const m = /^\d+\s+([a-z0-9_]+)\(/.exec(l);
    if (!m) continue;
    total++;
    byName[m[1]] = (byName[m[1]] ?? 0) + 1;
  }
  return { total, byName };
}

/**
 * Ipvs.apply under strace: the child loads, says READY, strace attaches to
 * all its threads, then the child runs (node's start-up is not traced: it
 * is slow to trace under user-mode-linux and not part of apply()).
 */
async function straceOurs(n, ns) {
  const log = path.join(work, `strace-ours-${process.pid}.txt`);
  rmSync(log, { force: true });
  const child = spawn(process.execPath, [path.join(here, 'ipvs-ours.mjs'), '--netns', `/run/netns/${ns}`, '--services', String(n), '--dumps', '1', '--markers', '--wait-for-go'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const pid = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /READY (\d+)/.exec(stderr);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`ipvs-ours exited ${code} before READY: ${stderr.slice(0, 2000)}`)));
  });
  const tracer = spawn('strace', ['-f', '-qq', '-e', 'verbose=none', '-s', '64', '-o', log, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  const traced = new Promise((resolve) => tracer.on('exit', resolve));
  // Attached once the child's status shows a tracer.
  for (let i = 0; i < 200; i++) {
    const st = readFileSync(`/proc/${pid}/status`, 'utf8');
    if (!/^TracerPid:\s+0$/m.test(st)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 500));  // every thread attached
  child.stdin.end('go\n');
  const code = await exited;
  await traced;
  if (code !== 0) throw new Error(`strace ipvs-ours exited ${code}: ${stderr.slice(0, 2000)}`);
  expectCount(ns, n, 'Ipvs.apply under strace');
  const res = { apply: countBetween(log, 'apply-start', 'apply-end'), dump: countBetween(log, 'dump-start', 'dump-end') };
  if (!res.apply.byName.sendmsg) throw new Error(`the strace log shows no sendmsg during apply(): ${JSON.stringify(res.apply)}`);
  return res;
}

async function straced(n) {
  const f = prepare(n);
  const log = path.join(work, `strace-${process.pid}.txt`);
  const out = {};
  say(`strace: Ipvs.apply, ${n} services`);
  const ns = freshNetns('ipvsbench');
  try {
    out.ours = await straceOurs(n, ns.name);
  } finally {
    ns.remove();
  }
  say(`strace: ipvsadm -R, ${n} services`);
  out.ipvsadm = withNetns((ns) => {
    rmSync(log, { force: true });
    const r = spawnSync('ip', ['netns', 'exec', ns, 'strace', '-f', '-c', '-o', log, 'ipvsadm', '-R'], { input: readFileSync(f.restore) });
    if (r.status !== 0) throw new Error(`strace ipvsadm -R exited ${r.status}: ${String(r.stderr).slice(0, 500)}`);
    const program = straceSummary(log);
    rmSync(log, { force: true });
    const d = spawnSync('ip', ['netns', 'exec', ns, 'strace', '-f', '-c', '-o', log, 'ipvsadm', '-Sn'], { maxBuffer: 1 << 30 });
    if (d.status !== 0) throw new Error(`strace ipvsadm -Sn exited ${d.status}`);
    return { program, dump: straceSummary(log) };
  });
  say(`strace: floor probe, ${n} services`);
  out.probe = withNetns((ns) => {
    rmSync(log, { force: true });
    const r = spawnSync('ip', ['netns', 'exec', ns, 'strace', '-f', '-c', '-o', log, a.probe, f.msgs]);
    if (r.status !== 0) throw new Error(`strace floor-probe exited ${r.status}: ${String(r.stdout)} ${String(r.stderr).slice(0, 500)}`);
    return { program: straceSummary(log) };
  });
  rmSync(log, { force: true });
  return out;
}

const started = Date.now();
say(`${N} services x ${DESTS_PER_SERVICE} destinations = ${OPS} ops, ${RUNS} run(s)`);
prepare(N);
// Before anything else, while the boot is otherwise idle.
let costs = null;
if (a['cost-probe']) {
  say('what this kernel charges: a system call, a page, a netlink round trip, computation, JavaScript');
  costs = kernelCosts(a['cost-probe'], { brief: RUNS === 1 });
  say(`  getpid ${costs.getpidUs} µs, a fresh page ${costs.pageUs} µs, a generic-netlink round trip ${costs.genlUs} µs`);
}
const runs = [];
for (let r = 0; r < RUNS; r++) {
  const run = {};
  say(`run ${r + 1}/${RUNS}: Ipvs.apply + dump()`);
  run.ours = ours(N, r === 0 && !a['no-client-side'] ? ['--capture', a.replies] : []);
  say(`  apply ${run.ours.applyMs.toFixed(0)} ms, dump ${median(run.ours.dumpMs).toFixed(0)} ms`);
  say(`  a fresh process's first dump() ${run.ours.freshDumpMs.toFixed(0)} ms`);
  if (!a['no-client-side']) {
    say(`run ${r + 1}/${RUNS}: the library's side alone (kernel stubbed)`);
    run.clientSide = clientSide(N, a.replies, DUMPS);
    say(`  apply ${run.clientSide.applyMs.toFixed(0)} ms, dump ${median(run.clientSide.dumpMs).toFixed(0)} ms`);
  }
  say(`run ${r + 1}/${RUNS}: ipvsadm -R + ipvsadm -Sn`);
  run.ipvsadm = ipvsadm(N);
  say(`  ipvsadm -R ${run.ipvsadm.program.wallMs.toFixed(0)} ms, -Sn ${median(run.ipvsadm.dumps.map((d) => d.wallMs)).toFixed(0)} ms`);
  say(`run ${r + 1}/${RUNS}: floor probe`);
  run.probe = probe(N);
  say(`  probe ${run.probe.wallMs.toFixed(0)} ms`);
  runs.push(run);
}
const strace = a['no-strace'] ? null : await straced(NS_STRACE);

const result = {
  date: new Date().toISOString(),
  kernel: execFileSync('uname', ['-r']).toString().trim(),
  // Which sandbox (uml, qemu; set by its runner) and the kernel's build, e.g. "... (Debian 6.1.176-1)".
  sandbox: process.env.IPVS_NETLINK_SANDBOX ?? 'host',
  kernelBuild: readFileSync('/proc/version', 'utf8').trim(),
  services: N,
  destsPerService: DESTS_PER_SERVICE,
  ops: OPS,
  runs: RUNS,
  dumps: DUMPS,
  straceServices: strace ? NS_STRACE : null,
  straceOps: strace ? NS_STRACE * (DESTS_PER_SERVICE + 1) : null,
  elapsedS: (Date.now() - started) / 1000,
  raw: runs,
  strace,
  kernelCosts: costs,
};
mkdirSync(path.dirname(a.out), { recursive: true });
writeFileSync(a.out, JSON.stringify(result, null, 2) + '\n');
say(`wrote ${a.out} (${result.elapsedS.toFixed(0)} s)`);
