/**
 * The ControllerPort over the real Controller (lib/kernel/controller.ts):
 * method names mapped, a sync with refused operations turned into an
 * error the runner retries, and the IPVS timeouts (--ipvs-tcp-timeout...)
 * the controller does not set applied at start. The Controller itself is
 * made at start()/cleanup(), once the iptables flavour is known.
 *
 * Each periodic resync also writes kube-proxy's IPVS sysctls again (one
 * `sysctl -w`): they live in the ip_vs module's per-namespace state, so an
 * operator's `modprobe -r ip_vs; modprobe ip_vs` resets them to the
 * kernel's defaults (net.ipv4.vs.conntrack=0 breaks masqueraded IPVS
 * traffic), and the resync that reprograms the flushed table must restore
 * them too.
 */
import { release } from 'node:os';
import { Controller, type SyncResult } from '../kernel/controller.js';
import { execIn } from '../kernel/exec.js';
import type { EndpointSlice, NodeInfo, Service } from '../kubernetes/model.js';
import { namespaceOf } from '../kubernetes/model.js';
import { kubeProxySysctls, writeSysctls } from '../kernel/sysctls.js';
import { Ipvs } from 'ipvs-netlink';
import { detectIptables } from '../kernel/iptables-flavour.js';
import type { ControllerCounters, ControllerFactory, ControllerInit, ControllerPort, SyncReport } from './controller-port.js';

export const kernelControllerFactory: ControllerFactory = (init) => new KernelController(init);

export class KernelController implements ControllerPort {
  private controller?: Controller;

  constructor(private readonly init: ControllerInit) {}

  private get c(): Controller {
    if (!this.controller) throw new Error('the controller is used before start()');
    return this.controller;
  }

  private async make(): Promise<Controller> {
    if (!this.controller) {
      const { tools, mode } = await detectIptables(this.init.netns);
      this.init.logger.info({ iptables: mode }, 'iptables flavour');
      this.controller = new Controller({ netns: this.init.netns, config: this.init.config, node: this.init.node, logger: this.init.logger, iptables: tools });
    }
    return this.controller;
  }

  async start(): Promise<void> {
    await (await this.make()).start();
    const { tcp, tcpFin, udp } = this.init.timeouts;
    if (tcp || tcpFin || udp) {
      // ipvsadm --set semantics: a 0 leaves that timeout as the kernel has it.
      const ipvs = await Ipvs.open({ netns: this.init.netns });
      try {
        await ipvs.setTimeouts({ ...(tcp ? { tcp } : {}), ...(tcpFin ? { tcpFin } : {}), ...(udp ? { udp } : {}) });
      } finally {
        ipvs.close();
      }
    }
  }

  upsertService(svc: Service): void {
    this.c.onServiceChange(svc);
  }

  deleteService(svc: Service): void {
    this.c.onServiceDelete(namespaceOf(svc.metadata), svc.metadata.name);
  }

  upsertEndpointSlice(slice: EndpointSlice): void {
    this.c.onEndpointSliceChange(slice);
  }

  deleteEndpointSlice(slice: EndpointSlice): void {
    this.c.onEndpointSliceDelete(slice);
  }

  setNode(node: NodeInfo): void {
    this.c.onNodeChange(node);
  }

  sync(): Promise<SyncReport> {
    return this.c.sync().then(checked);
  }

  async resync(): Promise<SyncReport> {
    const report = await this.c.resync().then(checked);
    await writeSysctls(execIn(this.init.netns), kubeProxySysctls(this.init.config, release()));
    return report;
  }

  drain(): Promise<SyncReport> {
    return this.c.removeDrainedRealServers().then(checked);
  }

  async cleanup(): Promise<void> {
    await (await this.make()).cleanup();
  }

  counters(): ControllerCounters {
    if (!this.controller) return emptyCounters();
    const c = this.controller.counters();
    const { full, incremental, resync, drain } = c.syncs;
    return {
      virtualServers: c.virtualServers,
      realServers: c.realServers,
      ipsetEntries: c.ipsetEntries,
      operations: c.operations,
      ipsetFailures: c.ipsetFailures,
      netlink: c.netlink,
      syncs: { full, incremental, resync, drain },
      lastSync: c.lastSync,
    };
  }

  async close(): Promise<void> {
    this.controller?.close();
  }
}

export class PartialSyncError extends Error {
  constructor(readonly report: SyncReport) {
    super(`${report.failed} of ${report.planned} operations were refused; they are retried by the next resync`);
    this.name = 'PartialSyncError';
  }
}

function checked(r: SyncResult): SyncReport {
  const report = { planned: r.planned, applied: r.applied, failed: r.failed, netlink: r.netlink };
  if (report.failed > 0) throw new PartialSyncError(report);
  return report;
}

function emptyCounters() {
  const zero = () => ({ ok: 0, failed: 0 });
  return { virtualServers: 0, realServers: 0, ipsetEntries: 0, operations: { ipvs: zero(), ipset: zero(), address: zero(), iptables: zero() }, ipsetFailures: [] };
}
