/**
 * The network namespace the Controller programs, as it reaches it: the
 * netlink handles of the chosen rules backend and the applier over them
 * (opened together on first use), the iptables programs (their flavour
 * found once), and the namespace's kernel settings, kube-proxy's sysctls
 * and the IPVS timeouts, set through those same handles. The Controller
 * keeps the plans and the mirror; this keeps the handles.
 */
import { release } from 'node:os';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../kubernetes/model.js';
import { logV } from '../logging/logger.js';
import { DUMMY_DEVICE, type DesiredState } from '../plan/kernel-state.js';
import { Applier } from './applier.js';
import type { ControllerOptions } from './controller-port.js';
import { execIn, type Exec } from './exec.js';
import { detectIptables } from './iptables-flavour.js';
import { loadIpvsModule } from './ipvs-module.js';
import { IptablesRunner } from './iptables-runner.js';
import { readKernel, type KernelRead } from './kernel-reader.js';
import { closeClients, openClients, type Clients } from './netlink-clients.js';
import { connReuseMode, ensureSysctls, kubeProxySysctls, sysctlAccess, type SysctlAccess } from './sysctls.js';

/** Upstream's name for it, as its lines give it. */
const CONN_REUSE = 'net/ipv4/vs/conn_reuse_mode';

/** The handles of the namespace, opened together. */
export interface Kernel {
  clients: Clients;
  applier: Applier;
}

export class NamespaceSession {
  /** Runs a program in the namespace (iptables, sysctl). */
  readonly exec: Exec;
  private readonly sysctls: SysctlAccess;
  private kernel?: Kernel;
  /** The iptables programs, once their flavour is found (the iptables backend, cleanup, a switch from it). */
  private iptablesRunner?: Promise<IptablesRunner>;
  /** kube-ipvs0 was found to be no dummy link, and that was logged. */
  private foreignDummyLogged = false;

  constructor(
    private readonly options: ControllerOptions,
    private readonly config: ProxyConfig,
    private readonly logger: Logger,
  ) {
    this.exec = execIn(options.netns);
    this.sysctls = sysctlAccess(this.exec, { ownNamespace: options.netns === undefined });
  }

  /** The handles if open: what counters and traffic figures read, never opening anything. */
  get opened(): Kernel | undefined {
    return this.kernel;
  }

  /**
   * The namespace's handles: the ipset one for the iptables backend, the
   * nftables one for the nftables backend, which runs no iptables program
   * (the flavour is not even looked for). `loadIpvs`: for the first open,
   * as upstream's handle runs modprobe when it is made (ipvs-module.ts).
   */
  async open(loadIpvs = false): Promise<Kernel> {
    if (!this.kernel) {
      const nft = this.config.rulesBackend === 'nftables';
      const iptables = nft ? undefined : await this.iptables();
      const load = loadIpvs ? () => loadIpvsModule(execIn(undefined), this.logger) : undefined;
      const clients = await openClients(this.netlinkOptions(), { ipset: !nft, nftables: nft }, load);
      const noIptables = { apply: () => Promise.reject(new Error('the nftables backend runs no iptables program')) };
      this.kernel = { clients, applier: new Applier(clients, iptables ?? noIptables, this.logger) };
    }
    return this.kernel;
  }

  netlinkOptions(): { netns?: string; timeoutMs?: number } {
    return { netns: this.options.netns, timeoutMs: this.options.timeoutMs };
  }

  /** The iptables flavour in use in the namespace (found once, unless given) and its runner. */
  iptables(): Promise<IptablesRunner> {
    this.iptablesRunner ??= (async () => {
      let tools = this.options.iptables;
      if (!tools) {
        const found = await detectIptables(this.exec);
        this.logger.info({ iptables: found.mode }, 'iptables flavour');
        tools = found.tools;
      }
      return new IptablesRunner(this.exec, tools);
    })();
    // A failed detection is tried again next time.
    this.iptablesRunner.catch(() => (this.iptablesRunner = undefined));
    return this.iptablesRunner;
  }

  /**
   * kube-proxy's IPVS sysctls, each written only where it differs; a change
   * is logged as upstream's EnsureSysctl logs it, at V(1). `atStart`:
   * also NewProxier's lines about conn_reuse_mode, once.
   */
  async writeSysctls(atStart = false): Promise<void> {
    const kernel = release();
    if (atStart) {
      const reuse = connReuseMode(kernel);
      if (reuse === 'left') this.logger.debug({ sysctl: CONN_REUSE }, 'Left as-is');
      if (reuse === 'unsupported') this.logger.error({ sysctl: CONN_REUSE, minimumKernelVersion: '4.1' }, "Can't set sysctl, kernel version doesn't satisfy minimum version requirements");
    }
    for (const c of await ensureSysctls(this.sysctls, kubeProxySysctls(this.config, kernel))) {
      logV(this.logger, 1, { name: c.key.replaceAll('.', '/'), before: c.before ?? 0, after: c.after }, 'Changed sysctl');
    }
  }

  /** ipvsadm --set semantics: a 0 leaves that timeout as the kernel has it. */
  async setIpvsTimeouts(clients: Pick<Clients, 'ipvs'>): Promise<void> {
    const { tcp, tcpFin, udp } = this.options.ipvsTimeouts ?? {};
    if (!tcp && !tcpFin && !udp) return;
    try {
      await clients.ipvs.setTimeouts({ ...(tcp ? { tcp } : {}), ...(tcpFin ? { tcpFin } : {}), ...(udp ? { udp } : {}) });
    } catch (err) {
      // As upstream's NewProxier: the proxy runs with the kernel's timeouts rather than not at all.
      this.logger.error({ err: (err as Error).message }, 'Failed to configure IPVS timeouts');
    }
  }

  /**
   * The kernel read shared by start() and resync(); kube-ipvs0 is made
   * only when it is missing, and a dummy one brought up when it is down.
   */
  async read(clients: Clients, desired: DesiredState): Promise<KernelRead> {
    // The nftables backend reads both families' tables: one of a family no longer served is removed.
    const nftFamilies = desired.nftables ? (['inet', 'inet6'] as const) : undefined;
    const read = await readKernel(clients, new Set(desired.ipsets.keys()), nftFamilies);
    const link = read.dummyLink;
    if (link && link.kind !== 'dummy') {
      // As upstream's EnsureDummyDevice: a link of that name, whatever its
      // kind, is the one the addresses go on, left as it is (not brought
      // up, not replaced: it is someone else's). Said once, not every resync.
      if (!this.foreignDummyLogged) this.logger.warn({ interface: DUMMY_DEVICE, kind: link.kind || 'device' }, 'Interface is not a dummy device; binding service addresses to it as it is');
      this.foreignDummyLogged = true;
    } else if (!link || !link.up) {
      await clients.rtnl.ensureDummyLink(DUMMY_DEVICE);
    }
    return read;
  }

  close(): void {
    if (this.kernel) closeClients(this.kernel.clients);
    this.kernel = undefined;
  }
}
