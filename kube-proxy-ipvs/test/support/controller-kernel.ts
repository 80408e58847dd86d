/**
 * Kernel views for the controller tests: what `ipvsadm -Sn`, `ipset save`,
 * `ip addr show kube-ipvs0` and `iptables-save` show, and the same views
 * computed from a desired state, so a test can say "the kernel holds
 * exactly the plan".
 */
import { JUMP_RULES } from '../../lib/desired/iptables-rules.js';
import { flagNames } from '../../lib/kubernetes/service-scheduling.js';
import { LEGACY_IPTABLES } from '../../lib/kernel/iptables-runner.js';
import type { Controller } from '../../lib/kernel/controller.js';
import type { ControllerOptions } from '../../lib/kernel/controller-port.js';
import type { DesiredState } from '../../lib/plan/kernel-state.js';
import { Controller as ControllerClass } from '../../lib/kernel/controller.js';
import { sortedLines } from '../../../test/support/ipvs-env.js';
import { freshNetns, type Netns } from '../../../test/support/netns.js';

interface TapLike {
  teardown(fn: () => unknown): void;
}

/** The sandbox kernel has x_tables but not nf_tables: the controller and the tests use the legacy tools. */
export const IPTABLES = LEGACY_IPTABLES.inet;
/** The same for IPv6 (ip6tables-legacy). */
export const IP6TABLES = LEGACY_IPTABLES.inet6;

type Family = 'inet' | 'inet6';
const TOOLS: Record<Family, typeof IPTABLES> = { inet: IPTABLES, inet6: IP6TABLES };

/** A controller in `ns`, closed (not cleaned up) when the test ends. */
export async function startController(t: TapLike, ns: Netns, options: Omit<ControllerOptions, 'netns' | 'iptables'>): Promise<Controller> {
  const c = new ControllerClass({ ...options, netns: ns.path, iptables: LEGACY_IPTABLES });
  t.teardown(() => c.close());
  await c.start();
  return c;
}

/** `ipvsadm -Sn` lines for a desired state, weights as given (1 unless overridden). */
export function expectedIpvsadm(desired: DesiredState, weights: Record<string, number> = {}): string[] {
  const lines: string[] = [];
  for (const { service: s, destinations } of desired.virtualServers.values()) {
    const vip = endpoint(s.address, s.port);
    const flag = s.protocol === 'tcp' ? '-t' : s.protocol === 'udp' ? '-u' : '--sctp-service';
    lines.push(ipvsadmServiceLine(flag, vip, s.scheduler, s.persistent?.timeout, flagNames(s.scheduler, s.flags)));
    for (const d of destinations.values()) {
      const rs = endpoint(d.address, d.port);
      lines.push(`-a ${flag} ${vip} -r ${rs} -m -w ${weights[rs] ?? 1}`);
    }
  }
  return lines.sort();
}

/** A virtual server as `ipvsadm -Sn` prints it: `-A -t VIP -s SCHED [-p TIMEOUT] [-b FLAGS]`. */
export function ipvsadmServiceLine(flag: string, vip: string, scheduler: string, timeout: number | undefined, flags: readonly string[] = []): string {
  return `-A ${flag} ${vip} -s ${scheduler}${timeout !== undefined ? ` -p ${timeout}` : ''}${flags.length ? ` -b ${flags.join(',')}` : ''}`;
}

function endpoint(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export async function ipvsadmSave(ns: Netns): Promise<string[]> {
  return sortedLines(await ns.exec('ipvsadm', ['-Sn']));
}

/** Set name → sorted entries, for the sets whose names start with KUBE-. */
export async function kubeIpsets(ns: Netns): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const line of (await ns.exec('ipset', ['save'])).split('\n')) {
    const [verb, name, entry] = line.split(' ');
    if (!name?.startsWith('KUBE-')) continue;
    if (verb === 'create') out[name] ??= [];
    if (verb === 'add') (out[name] ??= []).push(entry);
  }
  for (const k of Object.keys(out)) out[k].sort();
  return out;
}

export function expectedIpsets(desired: DesiredState): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, set] of desired.ipsets) out[name] = [...set.entries].sort();
  return out;
}

/** Addresses on kube-ipvs0 without prefix, sorted; undefined when the link is missing. */
export async function kubeIpvs0Addresses(ns: Netns): Promise<string[] | undefined> {
  const r = await ns.tryExec('ip', ['-o', 'addr', 'show', 'dev', 'kube-ipvs0']);
  if (r.code !== 0) return undefined;
  return r.stdout
    .split('\n')
    .map((l) => /\binet6? (\S+)\/\d+ .*scope (\w+)/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && m[2] !== 'link')
    .map((m) => m[1])
    .sort();
}

/** The rules of the KUBE-* chains and the jumps to them, as iptables-save (ip6tables-save for inet6) prints them. */
export async function kubeIptables(ns: Netns, family: Family = 'inet'): Promise<{ chains: string[]; rules: string[]; jumps: string[] }> {
  const out = await ns.exec(TOOLS[family].save, []);
  const chains: string[] = [];
  const rules: string[] = [];
  const jumps: string[] = [];
  let table = '';
  for (const line of out.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1);
    else if (line.startsWith(':KUBE-')) chains.push(`${table} ${line.slice(1).split(' ')[0]}`);
    else if (line.startsWith('-A KUBE-')) rules.push(`${table} ${line}`);
    else if (line.startsWith('-A ') && / -j KUBE-/.test(line)) jumps.push(`${table} ${line}`);
  }
  return { chains: chains.sort(), rules, jumps: jumps.sort() };
}

/**
 * What iptables-save prints for a restore payload: written into a scratch
 * namespace holding the kube-proxy sets (rules reference them by name),
 * then read back. Comparing that with the real namespace checks rule for
 * rule, in order. One scratch namespace per test; results cached by payload.
 */
const scratches = new WeakMap<object, { ns: Netns; seen: Map<string, Awaited<ReturnType<typeof kubeIptables>>> }>();

export async function iptablesOfPayload(t: TapLike, real: Netns, payload: string, family: Family = 'inet') {
  let scratch = scratches.get(t);
  if (!scratch) {
    const ns = await freshNetns(t, 'ipt');
    const creates = (await real.exec('ipset', ['save'])).split('\n').filter((l) => l.startsWith('create KUBE-'));
    await ns.exec('ipset', ['restore'], creates.join('\n') + '\n');
    scratch = { ns, seen: new Map() };
    scratches.set(t, scratch);
  }
  let result = scratch.seen.get(`${family}\n${payload}`);
  if (!result) {
    // --noflush with the chains declared replaces their rules: each payload starts from empty chains.
    await scratch.ns.exec(TOOLS[family].restore, ['--noflush'], payload);
    result = await kubeIptables(scratch.ns, family);
    scratch.seen.set(`${family}\n${payload}`, result);
  }
  return result;
}

/** The jump rules as iptables-save prints them: one per JUMP_RULES entry. */
export function expectedJumps(): string[] {
  return JUMP_RULES.map((j) => `${j.table} -A ${j.chain} -m comment --comment "${j.comment}" -j ${j.target}`).sort();
}

/** Checks all four views against the desired state (RS weights overridable for draining ones); iptables and ip6tables for a dual-stack one. */
export async function kernelMatches(
  t: { same(a: unknown, b: unknown, msg: string): void; teardown(fn: () => unknown): void },
  scratchOwner: TapLike,
  ns: Netns,
  desired: DesiredState,
  what: string,
  extra: { ipvsadm?: string[] } = {},
): Promise<void> {
  t.same(await ipvsadmSave(ns), [...expectedIpvsadm(desired), ...(extra.ipvsadm ?? [])].sort(), `${what}: ipvsadm -Sn holds every VS and RS of the plan`);
  t.same(await kubeIpsets(ns), expectedIpsets(desired), `${what}: ipset save holds every planned set with exactly its entries`);
  t.same(await kubeIpvs0Addresses(ns), [...desired.boundAddresses].sort(), `${what}: kube-ipvs0 holds exactly the bound addresses`);
  for (const family of desired.families) {
    const tool = family === 'inet' ? 'iptables-save' : 'ip6tables-save';
    const kernel = await kubeIptables(ns, family);
    const planned = await iptablesOfPayload(scratchOwner, ns, desired.iptables.get(family)!, family);
    t.same(kernel.chains, planned.chains, `${what}: ${tool}: the KUBE-* chains are present`);
    t.same(kernel.rules, planned.rules, `${what}: ${tool}: the KUBE-* chains hold the planned rules, in order`);
    t.same(kernel.jumps, expectedJumps(), `${what}: ${tool}: each built-in chain jumps to its KUBE-* chain exactly once`);
  }
}
