/**
 * The parts of prom-client the proxy uses, each loaded from its own module.
 * The package's index also loads its Pushgateway client, and with it
 * node:https (tls) and zlib, resident and loaded at every start for a
 * client the proxy never uses (with --manifests nothing else loads tls).
 * prom-client declares no "exports" map, so its files can be required; if
 * a release moves them, the whole package is loaded instead, as before.
 *
 * Its default collectors are registered one by one for the same reason
 * (registerDefaultMetrics): the process CPU one loads @opentelemetry/api,
 * some fifty files, at the top of its module, to label exemplars, which
 * the proxy never turns on.
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

type Parts = Pick<typeof PromClient, 'Counter' | 'Gauge' | 'Histogram' | 'Registry'> & { registerDefaults(registry: PromClient.Registry): void };
/** A default collector's module: it registers its series in the registry given. */
type Collector = (registry: PromClient.Registry, config: object) => void;

const require = createRequire(import.meta.url);

function load(): Parts {
  try {
    const collectors = defaultCollectors();
    return {
      Counter: require('prom-client/lib/counter'),
      Gauge: require('prom-client/lib/gauge'),
      Histogram: require('prom-client/lib/histogram'),
      Registry: require('prom-client/lib/registry'),
      registerDefaults(registry) {
        // collectDefaultMetrics's own default configuration.
        const config = { eventLoopMonitoringPrecision: 10, register: registry };
        for (const collect of collectors) collect(registry, config);
      },
    } as Parts;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    const whole = require('prom-client') as typeof PromClient;
    return { ...whole, registerDefaults: (registry) => whole.collectDefaultMetrics({ register: registry }) };
  }
}

/**
 * prom-client's default collectors in the order its defaultMetrics.js
 * registers them (the order of the scrape), the process CPU one replaced
 * by processCpu() below.
 */
function defaultCollectors(): Collector[] {
  const names = ['processStartTime', 'osMemoryHeap', 'processOpenFileDescriptors', 'processMaxFileDescriptors', 'eventLoopLag'];
  // As defaultMetrics.js: this collector only where Node.js can list its active resources.
  if (typeof process.getActiveResourcesInfo === 'function') names.push('processResources');
  names.push('processHandles', 'processRequests', 'heapSizeAndUsed', 'heapSpacesSizeAndUsed', 'version', 'gc');
  return [processCpu, ...names.map((n) => require(`prom-client/lib/metrics/${n}`) as Collector)];
}

const parts = load();

export const { Counter, Gauge, Histogram, Registry } = parts;
export type Counter<T extends string = string> = PromClient.Counter<T>;
export type Gauge<T extends string = string> = PromClient.Gauge<T>;
export type Histogram<T extends string = string> = PromClient.Histogram<T>;
export type Registry = PromClient.Registry;

/** What prom-client's collectDefaultMetrics({ register: registry }) registers: the same series, names and help. */
export const registerDefaultMetrics: (registry: Registry) => void = parts.registerDefaults;

/**
 * process_cpu_user_seconds_total, process_cpu_system_seconds_total and
 * process_cpu_seconds_total as prom-client's processCpuTotal.js makes them
 * without exemplars (each scrape adds the CPU time since the last one), but
 * counted from the process's start, as Go's process collector reads it for
 * kube-proxy: prom-client's count from when the collector is registered, so
 * they leave out the start's module loading.
 */
function processCpu(registry: Registry): void {
  let last = { user: 0, system: 0 };
  const registers = [registry];
  const user: Counter = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    // One collect sets all three, as prom-client's does.
    collect() {
      const now = process.cpuUsage();
      const userUs = now.user - last.user;
      const systemUs = now.system - last.system;
      last = now;
      user.inc(userUs / 1e6);
      system.inc(systemUs / 1e6);
      total.inc((userUs + systemUs) / 1e6);
    },
  });
  const system: Counter = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers });
  const total: Counter = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers });
}
