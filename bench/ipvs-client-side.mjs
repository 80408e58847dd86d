/**
 * The library's own side of apply() and dump(), with the kernel taken out:
 * an Ipvs over a stub of the addon's handle, in its own node process, the
 * same steps as bench/ipvs-ours.mjs. apply() checks every op, writes its
 * request records and builds its results, and the stub answers "all done" at
 * once (so the addon's encoding and the kernel's work are both left out);
 * dump() decodes the replies a real dump handed back (captured by
 * `ipvs-ours.mjs --capture`), read once beforehand, as the addon's reply
 * memory is when dumps follow one another.
 *
 * What it answers: how much of apply()'s and dump()'s time against their
 * floors is the client's work, here (run inside the sandbox) and on a real
 * kernel's page-fault costs (run on the host).
 *
 *   node --expose-gc bench/ipvs-client-side.mjs --services N [--replies FILE] [--dumps 3] [--applies 1] [--profile PREFIX] [--addresses built|parsed]
 *
 * --applies: apply() the same ops that many times in the one process, with
 * a full collection before each (it frees the last batch's buffer, which
 * malloc then hands out again). The first is the judged figure (a fresh
 * process's first call, as a cold start makes it); the later ones show the
 * client's work once its code is compiled and its memory in place, which
 * bounds from below what any apply() of that size costs in that kernel.
 * (The second still faults its buffer in: a batch's buffer above 2 MiB is
 * not kept, and malloc gives the first one back to the kernel; from the
 * third on, it reuses it. On the host, a call right after a forced
 * collection runs slower than one without; in user-mode-linux, without it
 * each call faults in a fresh buffer, which costs more.)
 *
 * --addresses: how the ops' address strings are made. `built` (default):
 * by template literals, as bench/ipvs-rules.mjs spells them; V8 keeps the
 * longer ones as concatenations until first read, and apply()'s first read
 * of each makes V8 copy it into one piece. `parsed`: the same text as
 * JSON.parse returns it (one piece already), as the proxy's addresses come
 * from the API server's JSON or the manifests' YAML. The ops' objects are
 * shared as before either way.
 *
 * --profile: a V8 CPU profile of the first apply() and the first dump() with
 * counters alone (the inspector started and stopped around each call), written
 * to PREFIX-apply.cpuprofile and PREFIX-dump.cpuprofile.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';

import { Ipvs } from '../dist/lib/index.js';
import { applyOps } from './ipvs-rules.mjs';
import { cpuByThreadKind, minorFaults, threadsCpuUs } from './proc-stat.mjs';

const { values: a } = parseArgs({
  options: {
    services: { type: 'string', default: '200' },
    replies: { type: 'string' },
    dumps: { type: 'string', default: '3' },
    applies: { type: 'string', default: '1' },
    profile: { type: 'string' },
    addresses: { type: 'string', default: 'built' },
  },
});
/** Runs fn under the CPU profiler when --profile is given; the profile goes to PREFIX-name.cpuprofile. */
let session;
async function profiled(name, fn) {
  if (!a.profile) return fn();
  if (!session) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
  }
  await session.post('Profiler.start');
  const result = await fn();
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(`${a.profile}-${name}.cpuprofile`, JSON.stringify(profile));
  return result;
}
const gc = globalThis.gc ?? (() => {});
const now = () => process.hrtime.bigint();
const msSince = (t) => Number(now() - t) / 1e6;

let replies;
if (a.replies) {
  const b = readFileSync(a.replies);
  replies = { failures: [], records: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength), strings: JSON.parse(readFileSync(`${a.replies}.strings.json`, 'utf8')) };
}
const counters = { sendmsgCalls: 0, recvCalls: 0, messagesSent: 0, messagesReceived: 0, dumpsRestarted: 0 };
/** The addon's IpvsHandle (lib/netlink/binding.ts), answering without a kernel. */
const stub = {
  open: async () => 0,
  execute: async () => ({ failures: [], records: new ArrayBuffer(0), strings: [] }),
  dump: async () => {
    if (!replies) throw new Error('--replies FILE is needed for dump()');
    return replies;
  },
  releaseReplies() {},
  releaseBuffers: () => 0,
  close() {},
  counters: () => ({ ...counters }),
  familyId: () => 0,
};
// Ipvs's constructor is private to TypeScript only: Ipvs.open() would open a socket.
const ipvs = new Ipvs(stub);

const out = { services: Number(a.services) };
const ops = applyOps(out.services);
if (a.addresses === 'parsed') asParsed(ops);
else if (a.addresses !== 'built') throw new Error(`--addresses must be built or parsed, not ${a.addresses}`);
out.addresses = a.addresses;
out.ops = ops.length;
const cpu0 = process.cpuUsage();
const threads0 = threadsCpuUs();
const f0 = minorFaults();
let t = now();
const results = await profiled('apply', () => ipvs.apply(ops));
out.applyMs = msSince(t);
out.applyFaults = minorFaults() - f0;
const cpu = process.cpuUsage(cpu0);
out.applyCpuUs = cpu.user + cpu.system;
// The JavaScript thread's share: the library's code as it runs (interpreted
// at first, then compiled) and the collections made on that thread; the rest
// of the CPU time is V8's compiler and collector threads.
if (threads0.size) out.applyThreadCpuUs = cpuByThreadKind(threads0, threadsCpuUs()).javascript;
if (results.length !== ops.length || results.some((r) => !r.ok)) throw new Error('apply over the stub: every op should succeed');
if (Number(a.applies) > 1) {
  out.laterApplyMs = [];
  out.laterApplyFaults = [];
  out.laterApplyCpuUs = [];
  for (let i = 1; i < Number(a.applies); i++) {
    gc();
    const f1 = minorFaults();
    const c0 = process.cpuUsage();
    t = now();
    await ipvs.apply(ops);
    out.laterApplyMs.push(msSince(t));
    const c = process.cpuUsage(c0);
    out.laterApplyCpuUs.push(c.user + c.system);
    out.laterApplyFaults.push(minorFaults() - f1);
  }
}

if (replies) {
  out.dumpMs = [];
  out.dumpFaults = [];
  out.dumpCpuUs = [];
  out.rulesDumpMs = [];
  out.rulesDumpFaults = [];
  out.rulesDumpCpuUs = [];
  let destinations = 0;
  // CPU time as well as wall time: on a shared machine the wall time includes waiting for a core.
  for (const [ms, faults, cpuUs, options] of [[out.dumpMs, out.dumpFaults, out.dumpCpuUs, undefined], [out.rulesDumpMs, out.rulesDumpFaults, out.rulesDumpCpuUs, { stats: false }]]) {
    for (let i = 0; i < Number(a.dumps); i++) {
      gc();
      const f1 = minorFaults();
      const c0 = process.cpuUsage();
      t = now();
      const dumped = i === 0 && !options ? await profiled('dump', () => ipvs.dump(options)) : await ipvs.dump(options);
      ms.push(msSince(t));
      const c = process.cpuUsage(c0);
      cpuUs.push(c.user + c.system);
      faults.push(minorFaults() - f1);
      destinations = dumped.reduce((n, s) => n + s.destinations.length, 0);
      out.dumpedServices = dumped.length;
    }
  }
  out.dumpedDestinations = destinations;
}
console.log(JSON.stringify(out));

/** Every address string of the ops replaced by its JSON.parse copy; a shared object is rewritten once. */
function asParsed(ops) {
  const seen = new Set();
  const flat = (o) => {
    if (seen.has(o)) return;
    seen.add(o);
    o.address = JSON.parse(JSON.stringify(o.address));
  };
  for (const op of ops) {
    flat(op.service);
    if (op.destination) flat(op.destination);
  }
}
