/**
 * The default command: `kube-proxy-ipvs [flags]` runs the proxy until
 * SIGTERM/SIGINT, then stops within a bounded time (the kernel state is
 * left programmed, so a restart interrupts no connection). `--cleanup`
 * removes what the proxy programs and exits.
 */
import { writeFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { stringify } from 'yaml';
import { Controller } from '../kernel/controller.js';
import type { ControllerFactory, ControllerPort } from '../kernel/controller-port.js';
import type { HostFamilies } from '../kernel/host-families.js';
import { INIT_ONLY } from '../kernel/ipvs-proxier-check.js';
import { encodeConfiguration, sortedKeys } from '../proxy/config-schema.js';
import { watchConfigFile } from '../proxy/config-watch.js';
import { Configz } from '../proxy/configz.js';
import { goPathError, yamlV2Tags } from '../proxy/config-file.js';
import { usage } from '../proxy/flags.js';
import { parseCommandLine, resolveOptions, type ResolvedOptions } from '../proxy/resolve-options.js';
import { makeLogger } from '../logging/logger.js';
import type { ProxyOptions } from '../proxy/options.js';
import { checkPrivileges, explainStartError } from '../proxy/preflight.js';
import { type HostSetup, realHost } from '../proxy/host-setup.js';
import { pinNativeHeapThresholds } from '../proxy/heap.js';
import { Proxy } from '../proxy/proxy.js';
import { controllerOptionsFor } from '../proxy/controller-start.js';
import { checkHostFamilies } from '../proxy/node-ips.js';
import { ManifestsSource } from '../proxy/sources/manifests-source.js';
import type { Source } from '../proxy/sources/source.js';
import type { EventRecorder } from '../proxy/sources/api-events.js';
import { KUBERNETES_VERSION, versionOutput } from './version.js';

/**
 * How long a stop may take before the process exits anyway: within the 30 s
 * a pod is given by default between SIGTERM and SIGKILL, and long enough
 * for a sync in progress to end on a slow machine.
 */
const STOP_TIMEOUT_MS = 25_000;

const factory: ControllerFactory = (options) => new Controller(options);

/** The loggers of failed runs, so that the failure is logged as the run logged (main.ts). */
const failedRuns = new WeakMap<object, Logger>();

/** The logger of the run that threw `err`, once it had one. */
export function loggerOf(err: unknown): Logger | undefined {
  return typeof err === 'object' && err !== null ? failedRuns.get(err) : undefined;
}

/** The run command; argv without the program name. */
export async function run(argv: readonly string[], controllerFactory: ControllerFactory = factory, host?: HostSetup): Promise<void> {
  // --help and --version come first, as upstream: before the config file is read.
  const early = parseCommandLine(argv).control;
  if (early.help) {
    process.stdout.write(usage());
    return;
  }
  const text = versionOutput(early.version);
  if (text !== undefined) {
    process.stdout.write(`${text}\n`);
    return;
  }
  const resolved = resolveOptions(argv);
  const { options, control, notices } = resolved;
  const log = makeLogger(options.logging);
  for (const n of notices) log[n.level](n.fields ?? {}, n.msg);
  try {
    if (control.writeConfigTo !== undefined) return writeConfig(resolved, control.writeConfigTo, log);
    checkPrivileges({ netns: options.netns });
    if (options.cleanup) return await cleanup(options, controllerFactory, log);
    if (control.initOnly) return await initOnly(options, controllerFactory, host ?? realHost(options.netns, options.ipvs.rulesBackend), log);
    await runProxy(options, controllerFactory, log);
  } catch (err) {
    // As kube-proxy's command: its Run's error logged, then returned to cli.Run, which logs it again.
    log.error({ err: err instanceof Error ? err.message : String(err) }, 'Error running ProxyServer');
    if (typeof err === 'object' && err !== null) failedRuns.set(err, log);
    throw err;
  }
}

/** --write-config-to: the merged configuration as v1alpha1 YAML (keys sorted, as upstream's encoder writes them), then exit 0. */
function writeConfig(resolved: ResolvedOptions, path: string, log: Logger): void {
  // With the reader's tags, strings it would read as booleans (y, no, on) are quoted, as upstream's writer quotes them.
  const text = stringify(sortedKeys(encodeConfiguration(resolved.config)), { customTags: yamlV2Tags });
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new Error(goPathError('open', path, e));
  }
  log.info({ file: path }, 'Wrote configuration');
}

/** Where objects come from, and, with an API server, where the node's events go. */
async function makeSource(o: ProxyOptions, log: Logger): Promise<{ source: Source; events?: EventRecorder }> {
  if (o.manifests) return { source: new ManifestsSource({ path: o.manifests, logger: log.child({ component: 'manifests' }) }) };
  // Loaded only when needed, and without client-node's generated API client (client-node-loader.ts).
  const { loadApiServerModules } = await import('../proxy/sources/client-node-loader.js');
  const [{ ApiServerSource }, { loadKubeConfig }] = await loadApiServerModules();
  const { ApiEvents } = await import('../proxy/sources/api-events.js');
  const kubeconfig = loadKubeConfig(o);
  return {
    source: new ApiServerSource({ kubeconfig, nodeName: o.hostnameOverride, resyncPeriodMs: o.configSyncPeriodMs, logger: log.child({ component: 'apiserver' }) }),
    events: new ApiEvents(kubeconfig, o.hostnameOverride, log.child({ component: 'events' })),
  };
}

async function runProxy(options: ProxyOptions, factory: ControllerFactory, log: Logger): Promise<void> {
  if (!pinNativeHeapThresholds()) log.debug('the C library keeps its own malloc thresholds');
  const effective = options.kubeProxyConfiguration;
  // kube-proxy's registered internal configuration, with the node IPs the start settles on (configz.ts).
  const cz = effective ? new Configz(effective) : undefined;
  const { source, events } = await makeSource(options, log);
  const proxy = new Proxy(options, { source, controllerFactory: cz?.observing(factory) ?? factory, logger: log, configz: cz?.value });
  proxy.metrics.setBuildInfo(KUBERNETES_VERSION);
  log.info({ version: KUBERNETES_VERSION }, 'Version info');
  let stopping: Promise<void> | undefined;
  const stop = (signal: string) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    log.info({ signal }, 'stopping');
    const timer = setTimeout(() => {
      log.error({ timeoutMs: STOP_TIMEOUT_MS, waitingFor: proxy.stopStage }, 'stop took too long; exiting');
      process.exit(1);
    }, STOP_TIMEOUT_MS);
    timer.unref();
    events?.close();
    // The timer stays set (unref'd) until the process ends: a start still finishing after the stop is bounded too.
    stopping = proxy.stop();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (options.configFile !== undefined) {
    // As kube-proxy: a changed config file ends the process (exit 1) so its pod restarts with the new file.
    watchConfigFile(options.configFile, (reason) => {
      log.error({ err: reason }, 'Error running ProxyServer');
      log.error({ err: reason }, 'command failed');
      process.exitCode = 1;
      stop('config file changed');
    });
  }
  try {
    await proxy.start();
  } catch (err) {
    await proxy.stop().catch(() => undefined);
    throw err;
  }
  // kube-proxy's birth cry, once its informers run and before its first sync: an Event on its Node.
  if (!stopping) events?.record({ type: 'Normal', reason: 'Starting', action: 'StartKubeProxy' });
  // Runs until a signal: the servers, source watchers and timers keep the event loop alive.
  await new Promise<void>((resolve) => {
    const wait = setInterval(() => {
      if (stopping) {
        clearInterval(wait);
        stopping.then(resolve, resolve);
      }
    }, 100);
  });
}

/**
 * A controller for a one-shot job (--init-only, --cleanup): no objects and
 * no node addresses, closed when the job ends, start errors explained.
 * `found`: the host's families, when the job makes the proxier.
 */
async function oneShot(options: ProxyOptions, factory: ControllerFactory, log: Logger, job: (c: ControllerPort) => Promise<void>, found?: HostFamilies): Promise<void> {
  const node = { name: options.hostnameOverride, addresses: [], ...(found ? { families: found.families } : {}) };
  // Upstream's NewProxier returns under --init-only before its lines of each family (the scheduler, the sync periods).
  const controller = factory({ ...controllerOptionsFor(options, node, log, found), proxierLines: found ? INIT_ONLY : undefined });
  try {
    await job(controller);
  } catch (err) {
    throw explainStartError(err);
  } finally {
    await controller.close();
  }
}

/**
 * --init-only: the steps that need full privileges (the conntrack sysctls;
 * the host's families, as upstream's platform check finds them; open
 * IPVS, which loads it; the scheduler check, which loads its module;
 * IPVS's sysctls and timeouts), then exit 0, as upstream's IPVS mode does
 * before its proxier would start, having logged so for each family. The
 * OOM score is not set: upstream sets it only when it runs. Nor is the
 * API server asked for the Node: no step here needs its addresses (so the
 * primary family is neither checked nor logged, as upstream does first).
 */
async function initOnly(options: ProxyOptions, factory: ControllerFactory, host: HostSetup, log: Logger): Promise<void> {
  let found: HostFamilies;
  try {
    await host.setConntrack(options.conntrack, log);
    found = await host.families();
    checkHostFamilies(found, log);
  } catch (err) {
    throw explainStartError(err);
  }
  await oneShot(options, factory, log, (controller) => controller.start(), found);
}

/** --cleanup: removes by ownership, read from the kernel. */
function cleanup(options: ProxyOptions, factory: ControllerFactory, log: Logger): Promise<void> {
  return oneShot(options, factory, log, async (controller) => {
    await controller.cleanup();
    log.info('cleanup done: IPVS virtual servers, kube-proxy ipsets, kube-ipvs0 and KUBE-* chains removed');
  });
}
