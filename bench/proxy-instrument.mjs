/**
 * Loaded into the real kube-proxy-ipvs binary by the controller benchmarks
 * (`node --import ./bench/proxy-instrument.mjs kube-proxy-ipvs/dist/lib/cli/main.js ...`):
 * reports, as JSON lines on the file descriptor BENCH_PROXY_EVENTS_FD,
 * when the controller starts and when each sync, resync and drain begins
 * and ends; each end with the netlink traffic of the run (messages and
 * system calls per socket, from the clients' own counters), the process's
 * CPU time and its memory. Nothing else changes: it wraps the methods of
 * the very module instances the binary loads (ES modules are cached by URL).
 *
 * Times are process.hrtime (CLOCK_MONOTONIC, shared by every process of the
 * machine), so the benchmark driver can subtract its own timestamps.
 *
 * Why a preload and not /metrics: the proxy exports each sync's netlink
 * messages and sendmsg calls (kubeproxy_sync_netlink_*, from SyncResult.netlink,
 * which this preload reports too), but not when a sync begins and ends to
 * better than a millisecond, nor the phases of a cold start.
 */
import { openSync, readFileSync, writeSync } from 'node:fs';

const fd = Number(process.env.BENCH_PROXY_EVENTS_FD);
if (Number.isInteger(fd) && fd > 2) {
  const { Controller } = await import('../kube-proxy-ipvs/dist/lib/kernel/controller.js');
  const { ManifestsSource } = await import('../kube-proxy-ipvs/dist/lib/proxy/sources/manifests-source.js');
  const { Proxy } = await import('../kube-proxy-ipvs/dist/lib/proxy/proxy.js');

  /**
   * How long the main thread has waited, runnable, for a CPU (/proc/PID/schedstat's second field). User-mode-linux's
   * scheduler clock advances in whole ticks (10 ms), so there a wait reads as 0 or a multiple of 10 ms.
   */
  const runDelayNs = () => Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]);
  // Profiling aid (not used by the benchmark's figures): BENCH_PROXY_TRACE=PREFIX writes every event to PREFIX.PID
  // too, with V8's garbage-collection pauses, the arrival of each object event and the main thread's wait for a CPU,
  // to see where a slow change's time went.
  const traceFd = process.env.BENCH_PROXY_TRACE ? openSync(`${process.env.BENCH_PROXY_TRACE}.${process.pid}`, 'w') : undefined;
  // A line written to the pipe wakes the driver (bench/controller.mjs), which
  // then competes with the proxy for the CPU (user-mode-linux has one): a
  // line nothing waits for, written in the middle of a sync, would count the
  // driver's work in that sync's time. So a run's begin line is held back
  // until the next line or, for a long run, HOLD_MS (the driver's stop()
  // reads a begin line as a run under way); its time is taken at once.
  const HOLD_MS = 50;
  let held = '';
  let heldTimer;
  const write = (text) => {
    clearTimeout(heldTimer);
    heldTimer = undefined;
    writeSync(fd, held + text);
    held = '';
  };
  const trace = (line) => {
    if (traceFd !== undefined) writeSync(traceFd, JSON.stringify({ ...line, runDelayNs: runDelayNs() }) + '\n');
  };
  /** A run's begin: its time only (the driver reads no usage from a begin line, and reading it would count in the run). */
  const begin = (ev) => {
    const line = { ev, t: String(process.hrtime.bigint()) };
    held += JSON.stringify(line) + '\n';
    heldTimer ??= setTimeout(() => write(''), HOLD_MS).unref();
    trace(line);
  };
  const emit = (ev, extra = {}) => {
    const cpu = process.cpuUsage();
    const mem = process.memoryUsage();
    const line = {
      ev,
      t: String(process.hrtime.bigint()),
      userUs: cpu.user,
      systemUs: cpu.system,
      rss: mem.rss,
      maxRssKb: process.resourceUsage().maxRSS,
      heapUsed: mem.heapUsed,
      heapTotal: mem.heapTotal,
      external: mem.external,
      arrayBuffers: mem.arrayBuffers,
      ...extra,
    };
    write(JSON.stringify(line) + '\n');
    trace(line);
  };
  emit('loaded');
  if (traceFd !== undefined) {
    const { constants: C, PerformanceObserver, performance } = await import('node:perf_hooks');
    const KINDS = { [C.NODE_PERFORMANCE_GC_MINOR]: 'minor', [C.NODE_PERFORMANCE_GC_MAJOR]: 'major', [C.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [C.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks' };
    new PerformanceObserver((list) => {
      const nowNs = process.hrtime.bigint();
      const nowMs = performance.now();
      for (const e of list.getEntries()) {
        const t = String(nowNs - BigInt(Math.round((nowMs - e.startTime) * 1e6)));
        writeSync(traceFd, JSON.stringify({ ev: 'gc-pause', t, kind: KINDS[e.detail?.kind] ?? e.detail?.kind, ms: e.duration }) + '\n');
      }
    }).observe({ entryTypes: ['gc'] });
    const onEvent = Proxy.prototype.onEvent;
    if (typeof onEvent !== 'function') throw new Error('proxy-instrument: Proxy.onEvent is not a method any more; update bench/proxy-instrument.mjs');
    Proxy.prototype.onEvent = function (e) {
      writeSync(traceFd, JSON.stringify({ ev: 'object-event', t: String(process.hrtime.bigint()), kind: e.kind, type: e.type, runDelayNs: runDelayNs() }) + '\n');
      return onEvent.call(this, e);
    };
  }

  // Profiling aid (not used by the benchmark's figures): SIGUSR2 writes a heap snapshot into BENCH_PROXY_HEAP_DIR.
  if (process.env.BENCH_PROXY_HEAP_DIR) {
    const { writeHeapSnapshot } = await import('node:v8');
    const { join } = await import('node:path');
    process.on('SIGUSR2', () => {
      const file = writeHeapSnapshot(join(process.env.BENCH_PROXY_HEAP_DIR, `proxy-${process.pid}-${Date.now()}.heapsnapshot`));
      emit('heap-snapshot', { file });
    });
  }

  /** Per-socket counters; the clients are private to the Controller, read here straight from its sockets. */
  const netlink = (wrapped) => {
    // The manifests source is wrapped too: it has no sockets.
    if (!(wrapped instanceof Controller)) return {};
    if (!('session' in wrapped)) throw new Error('proxy-instrument: the Controller keeps its sockets elsewhere now; update bench/proxy-instrument.mjs');
    // Before start() opens them there are none.
    const c = wrapped.session.opened?.clients;
    if (!c) return {};
    return { ipvs: c.ipvs.counters(), ipset: c.ipset.counters(), rtnl: c.rtnl.counters() };
  };
  const delta = (a, b) => {
    const out = {};
    for (const [sock, after] of Object.entries(b)) {
      const before = a[sock] ?? {};
      out[sock] = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
    }
    return out;
  };

  const wrap = (proto, method, name) => {
    const original = proto[method];
    if (typeof original !== 'function') throw new Error(`proxy-instrument: ${name} is not a method any more; update bench/proxy-instrument.mjs`);
    proto[method] = async function (...args) {
      const before = netlink(this);
      begin(`${name}-begin`);
      let result, error;
      try {
        result = await original.apply(this, args);
        return result;
      } catch (err) {
        error = err;
        throw err;
      } finally {
        const summary = result && typeof result === 'object' ? { kind: result.kind, planned: result.planned, applied: result.applied, failed: result.failed } : {};
        // The end time is taken before the counters are read, so reading them does not count.
        const t = String(process.hrtime.bigint());
        // Syncs report their own netlink traffic (SyncResult.netlink); start() does not, so it is taken from the sockets.
        const traffic = result?.netlink ?? delta(before, netlink(this));
        emit(`${name}-end`, { t, ...summary, netlink: traffic, ...(error ? { error: String(error?.message ?? error) } : {}) });
      }
    };
  };
  wrap(Controller.prototype, 'start', 'start');
  wrap(Controller.prototype, 'sync', 'sync');
  wrap(Controller.prototype, 'resync', 'resync');
  wrap(Controller.prototype, 'drain', 'drain');
  wrap(ManifestsSource.prototype, 'start', 'source');
  // The collection after bulk work (kube-proxy-ipvs/lib/proxy/heap.ts), synchronous: its memory readings are after it.
  const collect = Proxy.prototype.collectAfterBulk;
  if (typeof collect !== 'function') throw new Error('proxy-instrument: Proxy.collectAfterBulk is not a method any more; update bench/proxy-instrument.mjs');
  Proxy.prototype.collectAfterBulk = function (...args) {
    begin('gc-begin');
    const c = collect.apply(this, args);
    emit('gc-end');
    return c;
  };
  // reload() is synchronous: the whole load and diff of the manifests.
  const reload = ManifestsSource.prototype.reload;
  if (typeof reload !== 'function') throw new Error('proxy-instrument: ManifestsSource.reload is not a method any more; update bench/proxy-instrument.mjs');
  ManifestsSource.prototype.reload = function (...args) {
    begin('reload-begin');
    try {
      return reload.apply(this, args);
    } finally {
      emit('reload-end');
    }
  };
}
