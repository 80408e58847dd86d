/**
 * The kernel settings kube-proxy's IPVS mode makes (NewProxier in
 * proxier.go). They are per network namespace, and /proc/sys/net shows the
 * namespace of the process that opens it: in the proxy's own namespace
 * they are read and written there, as kube-proxy does; in another
 * (--netns) by a `sysctl` run in it. sysctlAccess() picks the way for both
 * these and the conntrack settings (conntrack-sysctls.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { execError, type Exec } from './exec.js';
import type { ProxyConfig } from '../kubernetes/model.js';

export interface Sysctl {
  key: string;
  value: number;
}

/**
 * conn_reuse_mode=0 only on kernels from 4.1 up to (not including) 5.9
 * (#93297): before 4.1 the knob does not exist, from 5.9 the kernel's own
 * default no longer drops reused connections and 0 would hurt rollouts.
 */
export function kubeProxySysctls(config: Pick<ProxyConfig, 'strictARP'>, kernelRelease: string): Sysctl[] {
  const list: Sysctl[] = [
    // IPVS-NAT'ed packets must go through conntrack for MASQUERADE to see them.
    { key: 'net.ipv4.vs.conntrack', value: 1 },
  ];
  if (connReuseMode(kernelRelease) === 'set') list.push({ key: 'net.ipv4.vs.conn_reuse_mode', value: 0 });
  list.push(
    // Drop connections to a deleted real server at once, so clients retry instead of hanging.
    { key: 'net.ipv4.vs.expire_nodest_conn', value: 1 },
    // Affinity templates pointing at a weight-0 real server expire (#81587).
    { key: 'net.ipv4.vs.expire_quiescent_template', value: 1 },
    { key: 'net.ipv4.ip_forward', value: 1 },
  );
  if (config.strictARP) {
    // Addresses on kube-ipvs0 must not answer ARP on the other interfaces.
    list.push({ key: 'net.ipv4.conf.all.arp_ignore', value: 1 }, { key: 'net.ipv4.conf.all.arp_announce', value: 2 });
  }
  return list;
}

/** What becomes of conn_reuse_mode on this kernel: set to 0, left as the kernel has it, or not there (before 4.1). */
export function connReuseMode(kernelRelease: string): 'set' | 'left' | 'unsupported' {
  const version = kernelVersion(kernelRelease);
  // An unreadable release is taken as a recent kernel's, whose default is right.
  if (version === undefined || atLeast(version, [5, 9])) return 'left';
  return atLeast(version, [4, 1]) ? 'set' : 'unsupported';
}

/** "5.10.0-21-amd64" → [5, 10]; undefined when unreadable. */
export function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function atLeast(v: [number, number], min: [number, number]): boolean {
  return v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);
}

/**
 * Integer settings of the namespace programmed, by key ("net.ipv4.ip_forward").
 * A key that cannot be read is left out of what read() gives, for the
 * caller to write (which then says why); write() tries each, as `sysctl
 * -w` does, and reports the failures together.
 */
export interface SysctlAccess {
  read(keys: readonly string[]): Promise<Map<string, number>>;
  write(sysctls: readonly Sysctl[]): Promise<void>;
}

/** A setting ensureSysctls wrote: what it read before (undefined: unreadable) and what it wrote. */
export interface SysctlChange {
  key: string;
  before: number | undefined;
  after: number;
}

/**
 * Upstream's EnsureSysctl for each: read, and written only where the value
 * differs, so a read-only /proc/sys (an unprivileged container's) whose
 * values the host already set passes, as it does for kube-proxy, and a
 * resync with nothing drifted writes nothing. Every differing one is
 * tried; the failures are named together (write()).
 */
export async function ensureSysctls(access: SysctlAccess, sysctls: readonly Sysctl[]): Promise<SysctlChange[]> {
  const current = await access.read(sysctls.map((s) => s.key));
  const differing = sysctls.filter((s) => current.get(s.key) !== s.value);
  if (differing.length > 0) await access.write(differing);
  return differing.map((s) => ({ key: s.key, before: current.get(s.key), after: s.value }));
}

/**
 * Through /proc/sys in the proxy's own namespace, so no program is run
 * (the resyncs that write the IPVS settings again fork nothing); through
 * `sysctl` run by `exec` in another.
 */
export function sysctlAccess(exec: Exec, where: { ownNamespace: boolean }): SysctlAccess {
  if (where.ownNamespace) return { read: readSysctlFiles, write: writeSysctlFiles };
  return { read: (keys) => readSysctls(exec, keys), write: (sysctls) => writeSysctls(exec, sysctls) };
}

const procSysPath = (key: string) => `/proc/sys/${key.replaceAll('.', '/')}`;

/** Through /proc/sys; a value that is not one integer counts as unreadable. */
async function readSysctlFiles(keys: readonly string[]): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  for (const key of keys) {
    const text = (await readFile(procSysPath(key), 'utf8').catch(() => '')).trim();
    if (/^-?\d+$/.test(text)) values.set(key, Number(text));
  }
  return values;
}

/** Through /proc/sys, each tried; the failures named together. */
async function writeSysctlFiles(sysctls: readonly Sysctl[]): Promise<void> {
  const failed: string[] = [];
  for (const s of sysctls) {
    try {
      await writeFile(procSysPath(s.key), `${s.value}\n`);
    } catch (err) {
      failed.push(`${s.key}=${s.value}: ${(err as Error).message}`);
    }
  }
  if (failed.length > 0) throw new Error(`could not set ${failed.join('; ')}`);
}

/** With one `sysctl` run: its "key = value" lines; a key it cannot read prints none. */
async function readSysctls(exec: Exec, keys: readonly string[]): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  if (keys.length === 0) return values;
  const r = await exec('sysctl', [...keys]);
  for (const line of r.stdout.split('\n')) {
    const m = /^(\S+) = (-?\d+)$/.exec(line.trim());
    if (m && keys.includes(m[1])) values.set(m[1], Number(m[2]));
  }
  return values;
}

/** With one `sysctl -q -w` run. */
async function writeSysctls(exec: Exec, sysctls: readonly Sysctl[]): Promise<void> {
  if (sysctls.length === 0) return;
  const args = ['-q', '-w', ...sysctls.map((s) => `${s.key}=${s.value}`)];
  const r = await exec('sysctl', args);
  if (r.code !== 0) throw execError('sysctl', args, r);
}
