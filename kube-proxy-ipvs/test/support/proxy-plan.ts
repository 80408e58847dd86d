/**
 * "The kernel holds exactly what `kube-proxy-ipvs plan` says" for the
 * end-to-end proxy tests: the plan command runs as a process on a folder of
 * manifests (the same flags the proxy under test uses), and each of its
 * parts is compared with what the reference tools read back from the
 * node: `ipvsadm -Sn`, `ipset save`, `ip addr show kube-ipvs0` and
 * `iptables-save` (the planned restore payload is written into a scratch
 * namespace and read back with iptables-save, so rules compare as the tool
 * prints them).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PlanOutput } from '../../lib/plan/plan-json.js';
import { expectedJumps, iptablesOfPayload, ipvsadmSave, ipvsadmServiceLine, kubeIpsets, kubeIptables, kubeIpvs0Addresses } from './controller-kernel.js';
import type { Netns } from '../../../test/support/netns.js';
import { BINARY, cleanEnv } from './proxy-env.js';
import { scratchDir } from './scratch.js';

interface TapLike {
  teardown(fn: () => unknown): void;
}

/** Runs `kube-proxy-ipvs plan --manifests DIR --hostname-override node-a ...` and parses its JSON. */
export async function runPlan(dir: string, args: string[] = []): Promise<PlanOutput> {
  const child = spawn('sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', ...BINARY, 'plan', '--manifests', dir, '--hostname-override', 'node-a', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: cleanEnv(),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`plan exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as PlanOutput;
}

/** Writes Kubernetes objects (one JSON file each) into a fresh folder for `plan`. */
export function manifestsFolder(objects: ReadonlyArray<{ kind?: unknown; metadata: { name: string; namespace?: string } }>): string {
  const dir = scratchDir('kp-plan-');
  objects.forEach((o, i) => writeFileSync(join(dir, `${String(i).padStart(4, '0')}-${String(o.kind)}-${o.metadata.namespace ?? ''}-${o.metadata.name}.json`), JSON.stringify(o)));
  return dir;
}

/** The `ipvsadm -Sn` lines a plan stands for (every real server at weight 1). */
export function planIpvsadm(plan: PlanOutput): string[] {
  const hostPort = (a: string, p: number) => (a.includes(':') ? `[${a}]:${p}` : `${a}:${p}`);
  const lines: string[] = [];
  for (const vs of plan.virtualServers) {
    const flag = vs.protocol === 'TCP' ? '-t' : vs.protocol === 'UDP' ? '-u' : '--sctp-service';
    const vip = hostPort(vs.address, vs.port);
    lines.push(ipvsadmServiceLine(flag, vip, vs.scheduler, vs.persistent ? vs.timeout : undefined, vs.flags));
    for (const rs of vs.realServers) lines.push(`-a ${flag} ${vip} -r ${hostPort(rs.address, rs.port)} -m -w ${rs.weight}`);
  }
  return lines.sort();
}

/** Compares all four kernel views of `ns` with the plan. */
export async function kernelMatchesPlan(
  t: TapLike & { same(a: unknown, b: unknown, msg: string): void },
  ns: Netns,
  plan: PlanOutput,
  what: string,
): Promise<void> {
  t.same(await ipvsadmSave(ns), planIpvsadm(plan), `${what}: ipvsadm -Sn is the plan's virtual and real servers`);
  const sets: Record<string, string[]> = {};
  for (const [name, set] of Object.entries(plan.ipsets)) sets[name] = [...set.entries].sort();
  t.same(await kubeIpsets(ns), sets, `${what}: ipset save is the plan's sets and entries`);
  t.same(await kubeIpvs0Addresses(ns), [...plan.boundAddresses].sort(), `${what}: kube-ipvs0 holds the plan's addresses`);
  const kernel = await kubeIptables(ns);
  const planned = await iptablesOfPayload(t, ns, plan.iptables!);
  t.same({ chains: kernel.chains, rules: kernel.rules }, { chains: planned.chains, rules: planned.rules }, `${what}: iptables-save shows the plan's KUBE-* chains and rules, in order`);
  t.same(kernel.jumps, expectedJumps(), `${what}: each built-in chain jumps to its KUBE-* chain once`);
}
