/**
 * The figures of one bench/ipvs.mjs result (one sandbox, one cluster size):
 * medians over its runs, for the report's tables and the scaling charts.
 */
import { median } from './report-format.mjs';

/** Medians of one result; fields absent from older results are undefined. */
export function ipvsFigures(r) {
  const runs = r.raw;
  const m = (fn) => median(runs.map(fn));
  const all = (fn) => median(runs.flatMap(fn));
  const ops = r.ops;
  const has = (fn) => runs.every((x) => fn(x) !== undefined);
  // Warm: the process's reads after its first (the code compiled, the reply memory there); the first
  // read of a fresh process is measured on its own (freshDumpMs).
  const warm = (list) => (list.length > 1 ? list.slice(1) : list);
  return {
    services: r.services,
    ops,
    runs: runs.length,
    apply: {
      wallMs: m((x) => x.ours.applyMs),
      cpuUs: m((x) => x.ours.applyUserUs + x.ours.applySystemUs),
      userUs: m((x) => x.ours.applyUserUs),
      faults: has((x) => x.ours.applyFaults) ? m((x) => x.ours.applyFaults) : undefined,
      counters: runs[0].ours.applyCounters,
      // CPU by kind of thread (bench/proc-stat.mjs cpuByThreadKind); results from before it have none.
      byThreadUs: has((x) => x.ours.applyCpuByThreadUs)
        ? Object.fromEntries(['javascript', 'libuv', 'v8', 'other'].map((k) => [k, m((x) => x.ours.applyCpuByThreadUs[k])]))
        : undefined,
    },
    ipvsadm: {
      wallMs: m((x) => x.ipvsadm.program.wallMs),
      cpuUs: m((x) => x.ipvsadm.program.userUs + x.ipvsadm.program.systemUs),
      userUs: m((x) => x.ipvsadm.program.userUs),
      faults: has((x) => x.ipvsadm.program.minorFaults) ? m((x) => x.ipvsadm.program.minorFaults) : undefined,
      dumpMs: all((x) => x.ipvsadm.dumps.map((d) => d.wallMs)),
      dumpCpuUs: all((x) => x.ipvsadm.dumps.map((d) => d.userUs + d.systemUs)),
      dumpFaults: all((x) => x.ipvsadm.dumps.map((d) => d.minorFaults)),
    },
    probe: {
      wallMs: m((x) => x.probe.wallMs),
      cpuUs: m((x) => x.probe.userUs + x.probe.systemUs),
      userUs: m((x) => x.probe.userUs),
      faults: has((x) => x.probe.minorFaults) ? m((x) => x.probe.minorFaults) : undefined,
      sendmsg: runs[0].probe.sendmsg,
      recv: runs[0].probe.recv,
      dumpMs: has((x) => x.probe.dumps) ? all((x) => x.probe.dumps.map((d) => d.wallMs)) : undefined,
      dumpCpuUs: has((x) => x.probe.dumps) ? all((x) => x.probe.dumps.map((d) => d.userUs + d.systemUs)) : undefined,
      dumpFaults: has((x) => x.probe.dumps) ? all((x) => x.probe.dumps.map((d) => d.minorFaults)) : undefined,
    },
    dump: {
      freshMs: has((x) => x.ours.freshDumpMs) ? m((x) => x.ours.freshDumpMs) : undefined,
      freshFaults: has((x) => x.ours.freshDumpFaults) ? m((x) => x.ours.freshDumpFaults) : undefined,
      // The first call's result held in the heap, and what a never-touched page costs in that kernel.
      freshResultBytes: has((x) => x.ours.freshDumpResultBytes) ? m((x) => x.ours.freshDumpResultBytes) : undefined,
      freshPageUs: has((x) => x.ours.freshPageUs) ? m((x) => x.ours.freshPageUs) : undefined,
      warmMs: all((x) => warm(x.ours.dumpMs)),
      warmCpuUs: all((x) => warm(x.ours.dumpUserUs)),
      warmFaults: has((x) => x.ours.dumpFaults) ? all((x) => warm(x.ours.dumpFaults)) : undefined,
      rulesMs: has((x) => x.ours.rulesDumpMs) ? all((x) => x.ours.rulesDumpMs) : undefined,
      rulesFaults: has((x) => x.ours.rulesDumpFaults) ? all((x) => x.ours.rulesDumpFaults) : undefined,
    },
    memory: {
      baseline: m((x) => x.ours.memBaseline.rss),
      baselineHeap: m((x) => x.ours.memBaseline.heapUsed),
      open: m((x) => x.ours.memOpen.rss),
      openHeap: m((x) => x.ours.memOpen.heapUsed),
      holding: m((x) => x.ours.memHoldingDump.rss),
      holdingHeap: m((x) => x.ours.memHoldingDump.heapUsed),
      handleOnly: m((x) => x.ours.memHandleOnly.rss),
      handleOnlyHeap: m((x) => x.ours.memHandleOnly.heapUsed),
      peak: m((x) => x.ours.maxRssKb * 1024),
      // 'memory-reducing' (bench/ipvs-ours.mjs's mem()); results from before it read after two plain gc() calls.
      collection: runs.every((x) => x.ours.memCollection === 'memory-reducing') ? 'memory-reducing' : 'plain',
    },
    clientSide: has((x) => x.clientSide) ? sideOf(runs.map((x) => x.clientSide)) : undefined,
    hostClientSide: r.hostClientSide?.length ? sideOf(r.hostClientSide) : undefined,
  };
}

/** bench/ipvs-client-side.mjs runs: apply() and decoding alone. */
function sideOf(list) {
  const all = (key) => (list.every((x) => x[key]) ? median(list.flatMap((x) => x[key])) : undefined);
  return {
    applyMs: median(list.map((x) => x.applyMs)),
    applyFaults: median(list.map((x) => x.applyFaults)),
    applyCpuUs: median(list.map((x) => x.applyCpuUs)),
    // Results from before these were recorded leave them undefined.
    applyThreadCpuUs: list.every((x) => x.applyThreadCpuUs !== undefined) ? median(list.map((x) => x.applyThreadCpuUs)) : undefined,
    warmApplyMs: list.every((x) => x.laterApplyMs?.length) ? median(list.map((x) => x.laterApplyMs.at(-1))) : undefined,
    warmApplyCpuUs: list.every((x) => x.laterApplyCpuUs?.length) ? median(list.map((x) => x.laterApplyCpuUs.at(-1))) : undefined,
    dumpMs: all('dumpMs'),
    dumpFaults: all('dumpFaults'),
    rulesDumpMs: all('rulesDumpMs'),
    rulesDumpFaults: all('rulesDumpFaults'),
    dumpCpuUs: all('dumpCpuUs'),
    rulesDumpCpuUs: all('rulesDumpCpuUs'),
  };
}
