/**
 * The BENCHMARKS.md tables of benchmarks 1, 2 and the library's memory, one
 * column per sandbox kernel (bench/group-ipvs.mjs's results).
 */
import { ipvsFigures } from './ipvs-figures.mjs';
import { cell, count, f1, mib, ratio } from './report-format.mjs';
import { kernelLabel, SANDBOXES } from './sandboxes.mjs';

/** Targets of issue 19 for the library, each judged in both sandboxes. */
const APPLY_VS_PROBE = 1.25;
const DUMP_VS_FLOOR = 1.5;
const CLIENT_US_PER_OP = 0.5;
const DECODE_US_PER_RECORD = 0.5;

/** A host CPU profile (bench/profile-summary.mjs) as one line: the functions with the most self time. */
function profileLine(p) {
  const share = (us) => `${((100 * us) / p.totalUs).toFixed(0)}%`;
  const top = p.self.filter((x) => !x.name.startsWith('(program)') && x.us >= 0.02 * p.totalUs).slice(0, 7);
  return `a separate run under V8's CPU profiler (which slows it; ${f1(p.totalUs / 1000)} ms sampled), self time by function: ${top.map((x) => `\`${x.name.replace(/\s+/g, ' ').trim()}\` ${share(x.us)}`).join(', ')}`;
}

/**
 * How a sandbox distorts, from what bench/kernel-costs.mjs measured in it and
 * on the host in the same run; the sandbox's fixed description for results
 * from before those were measured.
 */
function distortion(sb, head) {
  const c = head.kernelCosts, h = head.hostKernelCosts;
  if (!c || !h) return SANDBOXES[sb].distortion;
  const x = (key) => ratio(c[key] / h[key]);
  const us = (v) => (v < 10 ? v.toFixed(2) : f1(v));
  return `measured in this run, against the host kernel (${head.hostKernel}): a system call ${us(c.getpidUs)} µs (getpid; ${x('getpidUs')} the host's), a fresh page ${us(c.pageUs)} µs (${x('pageUs')}), a generic-netlink round trip ${us(c.genlUs)} µs (${x('genlUs')}); plain C computation takes ${x('computeUs')} the host's time, JavaScript ${x('jsBestMs')} (compiled; ${x('jsFirstMs')} for its first round, compiling as it goes). ${SANDBOXES[sb].meaning}`;
}

export function ipvsReport(bySandbox, { targetIn, target }) {
  const required = Object.values(SANDBOXES).map((s) => s.label);
  const sbs = Object.keys(bySandbox);
  const head = Object.fromEntries(sbs.map((sb) => [sb, bySandbox[sb].sizes[bySandbox[sb].headline]]));
  const fig = Object.fromEntries(sbs.map((sb) => [sb, ipvsFigures(head[sb])]));
  const label = (sb) => kernelLabel(sb, head[sb]);
  const first = fig[sbs[0]];
  const md = [];
  const header = (title) => {
    md.push(`| ${title} | ${sbs.map(label).join(' | ')} |`);
    md.push(`|---|${sbs.map(() => '---:').join('|')}|`);
  };
  const row = (name, fn) => md.push(`| ${name} | ${sbs.map((sb) => fn(fig[sb], head[sb], sb) ?? '').join(' | ')} |`);
  const perOp = (x, us) => cell(us / x.ops);

  md.push('');
  md.push('IPVS runs in two sandbox kernels (the host kernel has no IPVS), the same Linux 6.1.176 IPVS code in each; every figure of benchmarks 1, 2 and 4-6 names the kernel it came from. They distort a real kernel in opposite directions:');
  md.push('');
  for (const sb of sbs) md.push(`- **${SANDBOXES[sb].label}**: ${distortion(sb, head[sb])}`);
  md.push('');
  md.push('A ratio that holds in both should hold on a real kernel, whose balance of user work to kernel work lies between them; a target that names both sandboxes is met only when it holds in each.');
  const straced = head.uml?.strace ? head.uml : sbs.map((sb) => head[sb]).find((r) => r.strace);
  const admPerRule = straced && straced.strace.ipvsadm.program.total / straced.straceOps;
  const probeRatio = sbs.map((sb) => `${ratio(fig[sb].ipvsadm.wallMs / fig[sb].probe.wallMs)} the floor probe's time in ${SANDBOXES[sb].label}`);
  md.push('');
  md.push(`How much of \`ipvsadm -R\`'s headline is the sandbox's doing: in this run it takes ${probeRatio.join(' and ')}. It opens a new netlink socket and looks up the IPVS family for every rule (${admPerRule ? `${admPerRule.toFixed(0)} system calls per rule, counted below` : 'some 16 system calls per rule'}), which user-mode-linux prices at ${head.uml?.kernelCosts ? `${f1(head.uml.kernelCosts.getpidUs)} µs for the cheapest call (getpid, measured above)` : '~20 µs a call'}; the estimate for a real kernel ("\`ipvsadm -R\` on a real kernel", after the library's memory) prices those calls on this host's own kernel.`);

  // --- 1 ---
  md.push('');
  md.push(`### 1. IPVS programming: ${count(first.services)} services x 10 destinations = ${count(first.ops)} adds`);
  md.push('');
  md.push(`Each in a fresh network namespace; median of ${sbs.map((sb) => `${fig[sb].runs} (${SANDBOXES[sb].label})`).join(', ')} run(s). Ipvs.apply is timed around the call in a running node process; \`ipvsadm -R\` (reading the same rules on stdin) and the floor probe (bench/floor-probe.c: the very messages apply sends, 4096 per sendmsg, one ack per batch) are timed with /usr/bin/time (10 ms resolution) and include their process start.`);
  md.push('');
  header('');
  row('Ipvs.apply, wall time (ms)', (x) => cell(x.apply.wallMs));
  row('`ipvsadm -R`, wall time (ms)', (x) => cell(x.ipvsadm.wallMs));
  row('floor probe, wall time (ms)', (x) => cell(x.probe.wallMs));
  row(`**apply / probe** (target ≤ ${APPLY_VS_PROBE}x in both)`, (x) => `**${ratio(x.apply.wallMs / x.probe.wallMs)}**`);
  row('`ipvsadm -R` / probe', (x) => ratio(x.ipvsadm.wallMs / x.probe.wallMs));
  row('apply vs `ipvsadm -R`', (x) => `${ratio(x.ipvsadm.wallMs / x.apply.wallMs)} faster`);
  row('CPU per op, user+sys (µs): apply / ipvsadm / probe', (x) => `${perOp(x, x.apply.cpuUs)} / ${perOp(x, x.ipvsadm.cpuUs)} / ${perOp(x, x.probe.cpuUs)}`);
  const byThread = sbs.some((sb) => fig[sb].apply.byThreadUs);
  if (byThread)
    row("apply's CPU by thread (ms): JavaScript / the addon's worker / V8's own", (x) => (x.apply.byThreadUs ? ['javascript', 'libuv', 'v8'].map((k) => cell(x.apply.byThreadUs[k] / 1000)).join(' / ') : ''));
  row('CPU per op above the probe\'s (µs): apply / ipvsadm', (x) => `${perOp(x, Math.max(0, x.apply.cpuUs - x.probe.cpuUs))} / ${perOp(x, Math.max(0, x.ipvsadm.cpuUs - x.probe.cpuUs))}`);
  row('minor page faults: apply / ipvsadm / probe (tools: process start included)', (x) => [x.apply.faults, x.ipvsadm.faults, x.probe.faults].map((v) => cell(v, count)).join(' / '));
  row('library counters per op: sendmsg, recvmmsg', (x) => `${(x.apply.counters.sendmsgCalls / x.ops).toFixed(4)}, ${(x.apply.counters.recvCalls / x.ops).toFixed(4)}`);
  if (byThread)
    md.push('', "apply's CPU by thread: each thread's on-CPU time (/proc/self/task/*/schedstat; user-mode-linux counts it in 10 ms ticks) around the call. The addon's worker (libuv's pool) encodes the requests, sends them and reads the acks; the kernel's work on the requests runs in its sendmsg calls, as it does in the probe's. The JavaScript thread checks and writes every op before the worker's first send. V8's own threads compile and collect.");

  const strace = head.uml?.strace ?? sbs.map((sb) => head[sb].strace).find(Boolean);
  const straceFrom = head.uml?.strace ? head.uml : sbs.map((sb) => head[sb]).find((r) => r.strace);
  let sys;
  if (strace) {
    const so = straceFrom.straceOps;
    const noClock = (x) => (x.total - (x.byName.clock_gettime ?? 0)) / so;
    sys = { ours: strace.ours.apply.total / so, adm: strace.ipvsadm.program.total / so, prb: strace.probe.program.total / so, oursNoClock: noClock(strace.ours.apply) };
    const top = (o) => Object.entries(o).sort((x, y) => y[1] - x[1]).slice(0, 6).map(([k, v]) => `${k} ${v}`).join(', ');
    md.push('');
    md.push(`System calls are the programs' own, not the kernel's: counted once, in ${kernelLabel(straceFrom.sandbox ?? 'uml', straceFrom)}, under \`strace -f\` on ${count(straceFrom.straceServices)} x 10 = ${count(so)} adds (for apply: strace attaches to every thread of the node process after start-up and counts only the calls made between entering and leaving apply()). Per op: apply ${sys.ours.toFixed(3)} (${sys.oursNoClock.toFixed(3)} without clock_gettime, a vDSO call and no system call on a real kernel), \`ipvsadm -R\` ${sys.adm.toFixed(2)}, the probe ${sys.prb.toFixed(4)}. By name: apply: ${top(strace.ours.apply.byName)}; ipvsadm -R: ${top(strace.ipvsadm.program.byName)}; probe: ${top(strace.probe.program.byName)}.`);
  }
  // The host runs of every sandbox's group measure the same thing; the newest kind (with decoding's CPU time) first.
  const hostSide = sbs.map((sb) => fig[sb].hostClientSide).filter(Boolean).sort((x, y) => (y.dumpCpuUs ? 1 : 0) - (x.dumpCpuUs ? 1 : 0))[0];
  if (hostSide || sbs.some((sb) => fig[sb].clientSide)) {
    md.push('');
    const sides = [...sbs.map((sb) => fig[sb].clientSide && [fig[sb].clientSide, fig[sb]]), hostSide && [hostSide, first]];
    // Results from runs that predate a figure have none of it: its row and its sentence are left out.
    const recorded = (key) => sides.some((x) => x && x[0][key] !== undefined);
    md.push(
      `The library's side of apply() alone (bench/ipvs-client-side.mjs, one fresh node process per run): the same ops checked, written as request records and their results built, with a stub of the addon answering at once; the addon's encoding and the kernel's work are left out. On the host kernel (${head[sbs[0]].hostKernel ?? 'this host'}) a page fault and a system call cost what a real kernel charges: that column is what the target judges, with the first call in a fresh process.` +
        (recorded('applyThreadCpuUs') ? " Its CPU time counts every thread; the JavaScript thread's share is the library's code as it runs (interpreted at first) and the collections made there, the rest is V8 compiling that code and collecting on its own threads." : '') +
        (recorded('warmApplyMs') ? ' The third call runs the same ops with the code compiled.' : ''),
    );
    md.push('');
    md.push(`| | ${sbs.map((sb) => `in ${label(sb)}`).join(' | ')} | on the host |`);
    md.push(`|---|${sbs.map(() => '---:').join('|')}|---:|`);
    const side = (name, fn, key) => {
      if (key && !recorded(key)) return;
      md.push(`| ${name} | ${sides.map((x) => (x ? fn(...x) : '')).join(' | ')} |`);
    };
    side('wall time (ms)', (s) => cell(s.applyMs));
    side('CPU per op (µs)', (s, x) => cell(s.applyCpuUs / x.ops));
    side('of which the JavaScript thread (µs per op)', (s, x) => cell(s.applyThreadCpuUs / x.ops), 'applyThreadCpuUs');
    side('minor page faults', (s) => cell(s.applyFaults, count));
    side('the third call in the same process: wall time (ms)', (s) => cell(s.warmApplyMs), 'warmApplyMs');
    side('the third call: CPU per op (µs)', (s, x) => cell(s.warmApplyCpuUs / x.ops), 'warmApplyCpuUs');
  }
  const profile = sbs.map((sb) => head[sb].hostProfile).find(Boolean);
  if (profile) md.push('', `Where it goes on the host: ${profileLine(profile.apply)}.`);
  md.push('');
  md.push('Targets:');
  md.push(`- apply within ${APPLY_VS_PROBE}x the floor probe's wall time in both sandboxes: ${targetIn('ipvs apply <= 1.25x probe', sbs.map((sb) => ({ label: SANDBOXES[sb].label, ok: fig[sb].apply.wallMs <= APPLY_VS_PROBE * fig[sb].probe.wallMs, detail: ratio(fig[sb].apply.wallMs / fig[sb].probe.wallMs) })), required)}`);
  if (hostSide) md.push(`- the library's own work at most ${CLIENT_US_PER_OP} µs per op on the host (kernel stubbed, CPU time): ${target('ipvs client work <= 0.5 µs/op', hostSide.applyCpuUs / first.ops <= CLIENT_US_PER_OP, `${f1(hostSide.applyCpuUs / first.ops)} µs`)}`);
  md.push(`- user CPU per op at most a fifth of ipvsadm's: ${targetIn('ipvs user CPU <= ipvsadm/5', sbs.map((sb) => ({ label: SANDBOXES[sb].label, ok: fig[sb].apply.userUs * 5 <= fig[sb].ipvsadm.userUs, detail: `${ratio(fig[sb].apply.userUs / fig[sb].ipvsadm.userUs)} of ipvsadm's` })), required)}`);
  // Judged as a real kernel sees them: there clock_gettime is a vDSO call, no system call (under user-mode-linux it is
  // one, and the worker's waits read the clock more often the longer the kernel keeps it waiting).
  if (sys) md.push(`- at most 0.05 system calls per op, clock_gettime left out: ${target('ipvs syscalls/op <= 0.05', sys.oursNoClock <= 0.05, `${sys.oursNoClock.toFixed(3)}, ${sys.ours.toFixed(3)} with user-mode-linux's clock_gettime; ipvsadm ${sys.adm.toFixed(1)}`)}`);

  // --- 2 ---
  md.push('');
  md.push(`### 2. IPVS reading: dump() vs \`ipvsadm -Sn\` of the same ${count(first.services)} services / ${count(first.services * 10)} destinations`);
  md.push('');
  md.push('dump() returns typed objects with their counters as BigInts; dump({ stats: false }) the same without counters (what a proxy\'s resync reads); `ipvsadm -Sn` prints text. All of them, and the floor (`floor-probe --dump`: the same service dump and destination dumps, one sendmsg and one recvmmsg each, nothing decoded), ask the kernel the same thing: one dump of the services, then one dump of each service\'s destinations, which the kernel serves one at a time per socket. "First call": a fresh node process that opens a handle and reads once (its code not yet compiled), timed around the call; "warm": the reads after the first in the process that programmed the table. `ipvsadm` and the probe are timed with /usr/bin/time, process start included.');
  md.push('');
  header('');
  row('dump(), first call in a fresh process (ms)', (x) => cell(x.dump.freshMs));
  row('dump(), warm (ms)', (x) => cell(x.dump.warmMs));
  row('dump({ stats: false }), warm (ms)', (x) => cell(x.dump.rulesMs));
  row('`ipvsadm -Sn` (ms)', (x) => cell(x.ipvsadm.dumpMs));
  row('floor probe --dump (ms)', (x) => cell(x.probe.dumpMs));
  row(`**dump() first call / floor** (target ≤ ${DUMP_VS_FLOOR}x in both)`, (x) => (x.dump.freshMs && x.probe.dumpMs ? `**${ratio(x.dump.freshMs / x.probe.dumpMs)}**` : ''));
  row(`**dump() warm / floor** (target ≤ ${DUMP_VS_FLOOR}x in both)`, (x) => (x.probe.dumpMs ? `**${ratio(x.dump.warmMs / x.probe.dumpMs)}**` : ''));
  row('`ipvsadm -Sn` / dump() warm', (x) => ratio(x.ipvsadm.dumpMs / x.dump.warmMs));
  row('`ipvsadm -Sn` / floor', (x) => (x.probe.dumpMs ? ratio(x.ipvsadm.dumpMs / x.probe.dumpMs) : ''));
  row('CPU (ms): dump() warm / ipvsadm -Sn / floor', (x) => `${cell(x.dump.warmCpuUs / 1000)} / ${cell(x.ipvsadm.dumpCpuUs / 1000)} / ${cell(x.probe.dumpCpuUs === undefined ? undefined : x.probe.dumpCpuUs / 1000)}`);
  if (sbs.some((sb) => fig[sb].dump.freshResultBytes)) row('first call: its result in the heap (MiB) / a never-touched page (µs)', (x) => (x.dump.freshResultBytes ? `${f1(x.dump.freshResultBytes / 2 ** 20)} / ${x.dump.freshPageUs === undefined ? 'not priced (huge pages)' : f1(x.dump.freshPageUs)}` : ''));
  row('minor page faults: first call / warm / ipvsadm -Sn / floor', (x) => [x.dump.freshFaults, x.dump.warmFaults, x.ipvsadm.dumpFaults, x.probe.dumpFaults].map((v) => cell(v, count)).join(' / '));
  if (strace) md.push(`\nSystem calls per service read (strace, ${count(straceFrom.straceServices)} services): dump() ${(strace.ours.dump.total / straceFrom.straceServices).toFixed(2)}, \`ipvsadm -Sn\` ${(strace.ipvsadm.dump.total / straceFrom.straceServices).toFixed(2)}.`);
  const records = first.services * 11;
  const decodeSides = sbs.filter((sb) => fig[sb].clientSide?.dumpMs);
  if (hostSide?.dumpMs) {
    md.push('');
    md.push(`Decoding alone (bench/ipvs-client-side.mjs): the reply records a real dump() handed back, captured, and turned into the same objects again by dump() over a stub of the addon (no kernel call, the records already in memory); ${count(records)} records (services and destinations).`);
    md.push('');
    md.push(`| wall time (ms) | ${decodeSides.map((sb) => `in ${label(sb)}`).join(' | ')}${decodeSides.length ? ' | ' : ''}on the host | on the host, CPU per record (µs) |`);
    md.push(`|---|${decodeSides.map(() => '---:|').join('')}---:|---:|`);
    const dec = (name, key) => md.push(`| ${name} | ${decodeSides.map((sb) => `${cell(fig[sb].clientSide[key])} | `).join('')}${cell(hostSide[key])} | ${hostSide[`${key.replace('Ms', '')}CpuUs`] === undefined ? '' : cell(hostSide[`${key.replace('Ms', '')}CpuUs`] / records)} |`);
    dec('dump()', 'dumpMs');
    dec('dump({ stats: false })', 'rulesDumpMs');
  }
  if (profile) md.push('', `Where decoding goes on the host: ${profileLine(profile.dump)}.`);
  md.push('');
  md.push('Targets:');
  const dumpTarget = (name, key, what) =>
    md.push(`- dump() ${what} within ${DUMP_VS_FLOOR}x the floor's dump in both sandboxes: ${targetIn(name, sbs.filter((sb) => fig[sb].probe.dumpMs && fig[sb].dump[key]).map((sb) => ({ label: SANDBOXES[sb].label, ok: fig[sb].dump[key] <= DUMP_VS_FLOOR * fig[sb].probe.dumpMs, detail: ratio(fig[sb].dump[key] / fig[sb].probe.dumpMs) })), required)}`);
  dumpTarget('ipvs dump first call <= 1.5x floor', 'freshMs', 'as the first call in a fresh process');
  dumpTarget('ipvs dump warm <= 1.5x floor', 'warmMs', 'warm');
  // A fresh process's heap holds none of the result's pages, so no first call can take less.
  const bounded = sbs.filter((sb) => fig[sb].dump.freshResultBytes && fig[sb].dump.freshPageUs && fig[sb].probe.dumpMs);
  if (bounded.length) {
    const bound = (sb) => fig[sb].probe.dumpMs + (fig[sb].dump.freshResultBytes / 4096) * fig[sb].dump.freshPageUs / 1000;
    md.push(`- the least any first call can take (no target): the floor's dump plus the result's own pages at that kernel's price for a never-touched page, with no decoding at all: ${bounded.map((sb) => `${cell(bound(sb))} ms, ${ratio(bound(sb) / fig[sb].probe.dumpMs)} the floor, in ${SANDBOXES[sb].label}`).join('; ')}`);
  }
  // CPU time where measured: on a shared machine the wall time includes waiting for a core.
  const decodeUs = hostSide?.dumpCpuUs !== undefined ? hostSide.dumpCpuUs / records : hostSide?.dumpMs && (hostSide.dumpMs * 1000) / records;
  if (decodeUs !== undefined) md.push(`- decoding at most ${DECODE_US_PER_RECORD} µs per record on the host (${hostSide.dumpCpuUs !== undefined ? 'CPU time' : 'wall time'}): ${target('ipvs decode <= 0.5 µs/record', decodeUs <= DECODE_US_PER_RECORD, `${f1(decodeUs)} µs`)}`);
  md.push(`- against \`ipvsadm -Sn\` (no target): dump() warm is ${sbs.map((sb) => `${ratio(fig[sb].ipvsadm.dumpMs / fig[sb].dump.warmMs)} faster in ${SANDBOXES[sb].label}`).join(', ')}; the floor itself ${sbs.filter((sb) => fig[sb].probe.dumpMs).map((sb) => `${ratio(fig[sb].ipvsadm.dumpMs / fig[sb].probe.dumpMs)} in ${SANDBOXES[sb].label}`).join(', ')}`);

  // --- memory ---
  md.push('');
  md.push(`### Memory of the library alone: a node process holding an Ipvs handle after programming and dumping ${count(first.services)} x 10 (the proxy's is benchmark 6)`);
  md.push('');
  const reducing = sbs.every((sb) => fig[sb].memory.collection === 'memory-reducing');
  md.push(
    reducing
      ? 'Resident set (RSS) and JS heap used, median over runs, MiB, each read after a memory-reducing collection (V8\'s "last resort") and `trimNativeHeap()`, as the proxy does after bulk work: what the process holds, not what V8 and malloc keep mapped from earlier work:'
      : 'Resident set (RSS) and JS heap used after two plain forced collections (`gc()`), median over runs, MiB (results from before bench/ipvs-ours.mjs read memory after a memory-reducing collection):',
  );
  md.push('');
  header('state: RSS (heap used)');
  const memRow = (name, rss, heap) => row(name, (x) => `${mib(x.memory[rss])}${heap ? ` (${mib(x.memory[heap])})` : ''}`);
  memRow('node started, library loaded', 'baseline', 'baselineHeap');
  memRow('handle open', 'open', 'openHeap');
  memRow('after apply + dump, still holding the dump result', 'holding', 'holdingHeap');
  memRow('the same, dump result, ops and results dropped (handle only)', 'handleOnly', 'handleOnlyHeap');
  memRow('peak RSS (maxRSS)', 'peak');
  md.push('');
  md.push(
    reducing
      ? 'The handle itself holds one socket, 4 MiB of receive slots and, after a batch of at most 2 MiB of request records, that buffer for the next batch; a plain full collection (`gc()`) frees the same objects but leaves V8\'s emptied pages mapped, so read that way RSS stays near the peak.'
      : 'Read this way RSS stays near the peak after the objects are freed (a plain full collection leaves V8\'s emptied pages mapped), and the "handle only" heap includes the last dump, which the script then kept reachable from its top-level frame. The handle itself holds one socket and 4 MiB of receive slots.',
  );
  return md;
}
