/**
 * Loaded into the real kube-proxy-ipvs binary by the controller benchmarks
 * (`node --import ./bench/proxy-instrument.mjs kube-proxy-ipvs/dist/lib/cli/main.js ...`):
 * reports, as JSON lines on the file descriptor BENCH_PROXY_EVENTS_FD,
 * when the controller starts and when each sync, resync and drain begins
 * and ends, with the netlink traffic of each (messages and system calls
 * per socket, from the clients' own counters), the process's CPU time and
 * its memory. Nothing else changes: it wraps the methods of the very
 * module instances the binary loads (ES modules are cached by URL).
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

  /** How long the main thread has waited, runnable, for a CPU (/proc/PID/schedstat's second field). */
  const runDelayNs = () => Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]);
  // Profiling aid (not used by the benchmark's figures): BENCH_PROXY_TRACE=PREFIX writes every event to PREFIX.PID
  // too, with V8's garbage-collection pauses, the arrival of each object event and the main thread's wait for a CPU,
  // to see where a slow change's time went.
  const traceFd = process.env.BENCH_PROXY_TRACE ? openSync(`${process.env.BENCH_PROXY_TRACE}.${process.pid}`, 'w') : undefined;
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
    writeSync(fd, JSON.stringify(line) + '\n');
    if (traceFd !== undefined) writeSync(traceFd, JSON.stringify({ ...line, runDelayNs: runDelayNs() }) + '\n');
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

  /** Per-socket counters; the clients are private to the Controller, read here without the O(services) walk counters() makes. */
  const netlink = (controller) => {
    const c = controller.kernel?.clients;
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
      emit(`${name}-begin`);
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
    emit('gc-begin');
    const c = collect.apply(this, args);
    emit('gc-end');
    return c;
  };
  // reload() is synchronous: the whole load and diff of the manifests.
  const reload = ManifestsSource.prototype.reload;
  if (typeof reload !== 'function') throw new Error('proxy-instrument: ManifestsSource.reload is not a method any more; update bench/proxy-instrument.mjs');
  ManifestsSource.prototype.reload = function (...args) {
    emit('reload-begin');
    try {
      return reload.apply(this, args);
    } finally {
      emit('reload-end');
    }
  };
}
