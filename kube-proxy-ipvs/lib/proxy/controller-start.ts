/**
 * The controller as the proxy and its one-shot jobs (--init-only,
 * --cleanup) make it from the options, and its start: it adopts the
 * kernel, and is closed again when that fails or a stop came meanwhile.
 */
import type { Logger } from 'pino';
import type { HostFamilies } from '../kernel/host-families.js';
import type { ControllerOptions, ControllerPort } from '../kernel/controller-port.js';
import type { NodeInfo } from '../kubernetes/model.js';
import { formatDuration } from './duration.js';
import { type ProxyOptions, proxyConfigOf } from './options.js';
import { explainStartError } from './preflight.js';

/** For `node`, with the iptables flavour the host has (when known) and the IPVS timeouts of the flags. */
export function controllerOptionsFor(o: ProxyOptions, node: NodeInfo, log: Logger, found?: HostFamilies): ControllerOptions {
  return {
    node,
    // Without the host's families (a one-shot job) no --random-fully judgement is made.
    config: found === undefined ? proxyConfigOf(o) : proxyConfigOf(o, found.iptables ?? {}),
    netns: o.netns,
    ...(found?.iptables ? { iptables: found.iptables.tools } : {}),
    ipvsTimeouts: { tcp: o.ipvs.tcpTimeoutMs / 1000, tcpFin: o.ipvs.tcpFinTimeoutMs / 1000, udp: o.ipvs.udpTimeoutMs / 1000 },
    logger: log.child({ component: 'controller' }),
    proxierLines: {
      schedulerDefaulted: o.kubeProxyConfiguration?.ipvs.scheduler === '',
      minSyncPeriod: formatDuration(o.ipvs.minSyncPeriodMs),
      syncPeriod: formatDuration(o.ipvs.syncPeriodMs),
    },
  };
}

/**
 * Starts `controller`; a failure closes it and is thrown explained
 * (preflight.ts). Undefined when `stopped()` by the time it started: it is
 * closed, and nothing is to sync.
 */
export async function startedController(controller: ControllerPort, stopped: () => boolean): Promise<ControllerPort | undefined> {
  try {
    await controller.start();
  } catch (err) {
    await controller.close().catch(() => undefined);
    throw explainStartError(err);
  }
  if (!stopped()) return controller;
  await controller.close().catch(() => undefined);
  return undefined;
}
