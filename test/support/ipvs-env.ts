/**
 * Kernel test environment for IPVS: a fresh network namespace with a dummy
 * link that routes 10.0.1.0/24 and fd00:1::/64 (destinations need a route),
 * an Ipvs handle opened in it, and the ipvsadm views the tests compare with.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { release } from 'node:os';
import { promisify } from 'node:util';
import { Ipvs } from '../../lib/index.js';
import { type Netns, freshNetns } from './netns.js';

interface TapLike {
  teardown(fn: () => unknown): void;
}

export interface IpvsEnv {
  ns: Netns;
  ipvs: Ipvs;
  /** Runs ipvsadm in the namespace; rejects on a non-zero exit. */
  ipvsadm(...args: string[]): Promise<string>;
  /** `ipvsadm -Sn`, lines sorted. */
  save(): Promise<string[]>;
  /** `ipvsadm -R` with these lines. */
  restore(lines: string[]): Promise<void>;
  /** An ipvsadm listing without its two/three header lines, lines sorted. */
  list(...args: string[]): Promise<string[]>;
}

/** Adds the dummy link d0 with 10.0.1.1/24 and fd00:1::1/64 to a namespace. */
export async function addDummyLink(ns: Netns): Promise<void> {
  await ns.exec('ip', ['link', 'add', 'd0', 'type', 'dummy']);
  await ns.exec('ip', ['link', 'set', 'd0', 'up']);
  await ns.exec('ip', ['addr', 'add', '10.0.1.1/24', 'dev', 'd0']);
  await ns.exec('ip', ['-6', 'addr', 'add', 'fd00:1::1/64', 'dev', 'd0', 'nodad']);
}

export async function ipvsEnv(t: TapLike, opts: { timeoutMs?: number } = {}): Promise<IpvsEnv> {
  const ns = await freshNetns(t, 'ipvs');
  await addDummyLink(ns);
  const ipvs = await Ipvs.open({ netns: ns.path, ...opts });
  t.teardown(() => ipvs.close());
  const ipvsadm = (...args: string[]) => ns.exec('ipvsadm', args);
  return {
    ns,
    ipvs,
    ipvsadm,
    save: async () => sortedLines(await ipvsadm('-Sn')),
    restore: async (lines) => {
      await ns.exec('ipvsadm', ['-R'], lines.join('\n') + '\n');
    },
    list: async (...args) => {
      const lines = (await ipvsadm(...args)).split('\n');
      // "IP Virtual Server version ..." and the column headers.
      const body = lines.filter((l) => !/^IP Virtual Server version|^Prot LocalAddress|^ {2}-> RemoteAddress/.test(l));
      return sortedLines(body.join('\n'));
    },
  };
}

/** Non-empty lines, trimmed, runs of spaces collapsed, sorted. */
export function sortedLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim().replace(/ {2,}/g, ' '))
    .filter((l) => l !== '')
    .sort();
}

/**
 * The IPVS scheduler (and persistence engine) modules this kernel has, from
 * the module files the sandbox loads (or the host's /sys/module when IPVS is
 * built in or already loaded there).
 */
export function ipvsModules(): { schedulers: string[]; persistenceEngines: string[] } {
  const names = new Set<string>();
  // Only the running kernel's modules: the sandbox keeps them under
  // /usr/lib/uml/modules, a host under /lib/modules.
  for (const base of ['/usr/lib/uml/modules', '/lib/modules']) {
    try {
      for (const f of readdirSync(`${base}/${release()}/kernel/net/netfilter/ipvs`)) {
        const m = /^ip_vs_(\w+)\.ko/.exec(f);
        if (m) names.add(m[1]);
      }
    } catch {
      // no IPVS modules there
    }
  }
  try {
    for (const f of readdirSync('/sys/module')) {
      const m = /^ip_vs_(\w+)$/.exec(f);
      if (m) names.add(m[1]);
    }
  } catch {
    // no sysfs
  }
  // Application helpers (ftp) are neither schedulers nor persistence engines.
  const helpers = new Set(['ftp']);
  const all = [...names].filter((n) => !helpers.has(n)).sort();
  return {
    schedulers: all.filter((n) => !n.startsWith('pe_')),
    persistenceEngines: all.filter((n) => n.startsWith('pe_')).map((n) => n.slice(3)),
  };
}

/**
 * Tests that unload kernel modules (ip_vs, dummy) run in the sandbox kernel,
 * which exists for them, or on a host only when IPVS_NETLINK_UNLOAD_MODULES=1
 * says this machine may lose those modules for a moment: never by accident
 * on a real node, where unloading ip_vs would drop every virtual service.
 * The skip reason (tap's `skip` option) says so; in the sandbox it is false.
 */
export function moduleUnloadSkip(): string | false {
  if (process.env.IPVS_NETLINK_KERNEL === 'sandbox') return false;
  if (process.env.IPVS_NETLINK_UNLOAD_MODULES === '1') return false;
  return (
    'unloads kernel modules: runs only in the sandbox kernel (scripts/with-kernel.sh sets IPVS_NETLINK_KERNEL=sandbox), ' +
    'or on a host where IPVS_NETLINK_UNLOAD_MODULES=1 allows it'
  );
}

const run = promisify(execFile);

/** modprobe; inside the sandbox the modules live under the tree run.sh links there. */
export function modprobe(args: string[]): Promise<unknown> {
  return run('modprobe', process.env.IPVS_NETLINK_KERNEL === 'sandbox' ? ['-d', '/run/sandbox-modroot', ...args] : args);
}

/** The loaded modules whose names match. */
export function loadedModules(match: (name: string) => boolean): string[] {
  return readFileSync('/proc/modules', 'utf8').split('\n').map((l) => l.split(' ')[0]).filter((m) => m !== '' && match(m));
}

/** ip_vs and every module that uses it (schedulers, persistence engines, xt_ipvs). */
export const isIpvsModule = (m: string) => m === 'ip_vs' || m.startsWith('ip_vs_') || m === 'xt_ipvs';

/**
 * Unloads modules, retrying while they are still in use: a deleted network
 * namespace lets go of its devices a little later (the kernel cleans up
 * namespaces on a work queue).
 */
export async function unloadModules(names: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await modprobe(['-r', '-a', ...names]);
      return;
    } catch (err) {
      if (attempt >= 50) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
