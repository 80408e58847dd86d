/**
 * One measured pass of the library (run as its own node process, so its RSS
 * is its own): open a handle in --netns, program --services N x 10 with
 * Ipvs.apply, dump() them --dumps times, then report wall time, CPU, socket
 * counters and memory as one JSON line on stdout.
 *
 *   node --expose-gc bench/ipvs-ours.mjs --netns /run/netns/X --services N [--dumps 3] [--markers]
 *
 * --markers: make a recognizable failing access() call just before and just
 * after apply(), so an strace of this process can count the system calls of
 * apply() alone.
 * --capture FILE: after the measured reads, one more dump() whose replies from
 * the addon (the records and their strings) are written to FILE and
 * FILE.strings.json, for bench/ipvs-client-side.mjs to decode without a kernel.
 * --read-only: no apply(); one dump() of what the namespace holds, timed: the
 * first call in a fresh process (its code not yet compiled, no reply memory).
 * --wait-for-go: print "READY <pid>" on stderr once loaded and wait for a
 * line on stdin before starting (so strace can attach after node's start-up,
 * which is slow to trace under user-mode-linux).
 */
import { accessSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { Ipvs, trimNativeHeap } from '../dist/lib/index.js';
import { DESTS_PER_SERVICE, applyOps } from './ipvs-rules.mjs';
import { cpuByThreadKind, minorFaults, threadsCpuUs } from './proc-stat.mjs';

const { values: a } = parseArgs({
  options: {
    netns: { type: 'string' },
    services: { type: 'string', default: '200' },
    dumps: { type: 'string', default: '3' },
    markers: { type: 'boolean', default: false },
    'wait-for-go': { type: 'boolean', default: false },
    capture: { type: 'string' },
    'read-only': { type: 'boolean', default: false },
  },
});
const services = Number(a.services);
const marker = (name) => {
  if (!a.markers) return;
  try { accessSync(`/ipvs-bench-marker/${name}`); } catch { /* expected */ }
};
const gc = globalThis.gc ?? (() => {});
/**
 * What the process holds: read after a memory-reducing collection (V8's "last resort") and the C heap's free
 * pages given back, as the proxy does after bulk work (kube-proxy-ipvs/lib/proxy/heap.ts). A plain full
 * collection frees the objects but leaves V8's emptied pages mapped, so RSS would read the peak instead.
 */
const mem = async () => {
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  // Buffers the collection found dead are freed a turn of the event loop later.
  await new Promise((resolve) => setTimeout(resolve, 100));
  trimNativeHeap();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
};
const now = () => process.hrtime.bigint();
const msSince = (t) => Number(now() - t) / 1e6;

/**
 * The time one never-touched page costs this process (µs): `bytes` of fresh
 * memory (a buffer that large is mapped for it alone) written once, each
 * page faulted in on its first write. undefined where the buffer faulted
 * far fewer pages than it has: a kernel with transparent huge pages always
 * on (Debian's, in QEMU) backs such a mapping with 2 MiB pages, while V8
 * commits its heap in pieces too small for them, so the buffer's price is
 * not the result's.
 */
function freshPageUs(bytes) {
  const b = Buffer.allocUnsafeSlow(Math.max(bytes, 1 << 20));
  const f0 = minorFaults();
  const t = now();
  b.fill(1);
  const us = Number(now() - t) / 1e3;
  const faults = minorFaults() - f0;
  return faults < b.length / 4096 / 2 ? undefined : us / faults;
}

if (a['wait-for-go']) {
  process.stderr.write(`READY ${process.pid}\n`);
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.pause();
}
const out = { services, destsPerService: DESTS_PER_SERVICE };
// How the memory readings were taken, for the report (results from before this reading carry no such field).
out.memCollection = 'memory-reducing';
out.memBaseline = await mem();
const ipvs = await Ipvs.open({ netns: a.netns, timeoutMs: 60_000 });
out.memOpen = await mem();

if (a['read-only']) {
  const f0 = minorFaults();
  const t = now();
  const dumped = await ipvs.dump();
  out.dumpMs = [msSince(t)];
  out.dumpFaults = [minorFaults() - f0];
  // What a first call cannot avoid: its result's objects live in heap pages
  // the process has never touched. Their size (the heap still in use, the
  // result held, after a full collection) and what a never-touched page
  // costs in this kernel bound the first call from below.
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  out.dumpResultBytes = process.memoryUsage().heapUsed - out.memOpen.heapUsed;
  out.freshPageUs = freshPageUs(out.dumpResultBytes);
  out.dumpedServices = dumped.length;
  out.dumpedDestinations = dumped.reduce((n, s) => n + s.destinations.length, 0);
  ipvs.close();
  console.log(JSON.stringify(out));
  process.exit(0);
}

/**
 * Programs the table, reads it back, and takes the reading that still holds the ops, results and dump.
 * A function of its own so that the reading after it ("handle only") sees none of them: a module's top-level
 * code keeps the values it awaited in the registers of its suspended frame, which the collector treats as
 * live (the last dump's 110,000 objects, read at the top level, stayed reachable that way).
 */
async function programAndRead() {
  const ops = applyOps(services);
  out.ops = ops.length;
  const c0 = ipvs.counters();
  const cpu0 = process.cpuUsage();
  const threads0 = threadsCpuUs();
  const f0 = minorFaults();
  marker('apply-start');
  let t = now();
  const results = await ipvs.apply(ops);
  out.applyMs = msSince(t);
  marker('apply-end');
  out.applyFaults = minorFaults() - f0; // read outside the markers: its system calls are not apply()'s
  const cpu = process.cpuUsage(cpu0);
  // Which thread did what: the checks (JavaScript) all come before the addon's worker sends.
  // Read after the faults and the CPU time, which its own reads would add to.
  if (threads0.size) out.applyCpuByThreadUs = cpuByThreadKind(threads0, threadsCpuUs());
  const c1 = ipvs.counters();
  out.applyUserUs = cpu.user;
  out.applySystemUs = cpu.system;
  out.applyCounters = Object.fromEntries(Object.keys(c1).map((k) => [k, c1[k] - c0[k]]));
  out.failed = results.filter((r) => !r.ok).length;
  if (out.failed) out.firstError = String(results.find((r) => !r.ok).error);

  out.dumpMs = [];
  out.dumpUserUs = [];
  out.dumpFaults = [];
  let dumped;
  for (let i = 0; i < Number(a.dumps); i++) {
    dumped = undefined;
    gc();
    const d0 = ipvs.counters();
    const u0 = process.cpuUsage();
    const f1 = minorFaults();
    marker('dump-start');
    t = now();
    dumped = await ipvs.dump();
    out.dumpMs.push(msSince(t));
    marker('dump-end');
    out.dumpFaults.push(minorFaults() - f1); // outside the markers, as for apply
    out.dumpUserUs.push(process.cpuUsage(u0).user);
    const d1 = ipvs.counters();
    out.dumpCounters = Object.fromEntries(Object.keys(d1).map((k) => [k, d1[k] - d0[k]]));
  }
  // The read a proxy's resync does: rules and connection counts, no counters.
  out.rulesDumpMs = [];
  out.rulesDumpFaults = [];
  for (let i = 0; i < Number(a.dumps); i++) {
    gc();
    const f1 = minorFaults();
    t = now();
    const rules = await ipvs.dump({ stats: false });
    out.rulesDumpMs.push(msSince(t));
    out.rulesDumpFaults.push(minorFaults() - f1);
    if (rules.length !== dumped.length) throw new Error(`dump({ stats: false }) read ${rules.length} services, dump() ${dumped.length}`);
  }
  if (a.capture) {
    // The handle is the addon's (a private field of Ipvs): its dump() is
    // shadowed for this one call to keep a copy of what it hands back (the
    // addon's methods are read-only on its prototype, hence defineProperty).
    const handle = ipvs.handle;
    const real = handle.dump.bind(handle);
    Object.defineProperty(handle, 'dump', {
      configurable: true,
      value: async () => {
        const r = await real();
        if (r.failures.length) throw new Error(`dump failed while capturing: ${JSON.stringify(r.failures[0])}`);
        writeFileSync(a.capture, new Uint8Array(r.records));
        writeFileSync(`${a.capture}.strings.json`, JSON.stringify(r.strings));
        return r;
      },
    });
    await ipvs.dump();
    delete handle.dump;
  }
  out.dumpedServices = dumped?.length ?? 0;
  out.dumpedDestinations = dumped ? dumped.reduce((n, s) => n + s.destinations.length, 0) : 0;
  out.memHoldingDump = await mem();
}
await programAndRead();
out.memHandleOnly = await mem();
out.maxRssKb = process.resourceUsage().maxRSS;
ipvs.close();
console.log(JSON.stringify(out));
