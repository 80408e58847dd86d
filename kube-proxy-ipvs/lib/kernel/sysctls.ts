/**
 * The kernel settings kube-proxy's IPVS mode makes (NewProxier in
 * proxier.go). They are per network namespace, and /proc/sys/net shows the
 * namespace of the process that opens it: in the proxy's own namespace
 * they are written there, as kube-proxy writes them; in another (--netns)
 * by a `sysctl` run in it. The conntrack settings (conntrack-sysctls.ts)
 * go the same two ways.
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
  const version = kernelVersion(kernelRelease);
  if (version !== undefined && atLeast(version, [4, 1]) && !atLeast(version, [5, 9])) list.push({ key: 'net.ipv4.vs.conn_reuse_mode', value: 0 });
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

/** "5.10.0-21-amd64" → [5, 10]; undefined when unreadable. */
export function kernelVersion(release: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function atLeast(v: [number, number], min: [number, number]): boolean {
  return v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);
}

const procSysPath = (key: string) => `/proc/sys/${key.replaceAll('.', '/')}`;

/**
 * Reads integer settings through /proc/sys, in the proxy's own namespace;
 * a key that cannot be read, or does not hold one integer, is left out of
 * the map (as `sysctl` prints nothing for it), for the caller to write.
 */
export async function readSysctlFiles(keys: readonly string[]): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  for (const key of keys) {
    const text = (await readFile(procSysPath(key), 'utf8').catch(() => '')).trim();
    if (/^-?\d+$/.test(text)) values.set(key, Number(text));
  }
  return values;
}

/**
 * Writes them through /proc/sys, for the proxy's own namespace: no program
 * is run, so the resyncs that write them again fork nothing. Each is tried,
 * as `sysctl -w` tries each, and the failures are reported together.
 */
export async function writeSysctlFiles(sysctls: readonly Sysctl[]): Promise<void> {
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

/** Writes them all with one `sysctl -w` in the namespace. */
export async function writeSysctls(exec: Exec, sysctls: readonly Sysctl[]): Promise<void> {
  if (sysctls.length === 0) return;
  const args = ['-q', '-w', ...sysctls.map((s) => `${s.key}=${s.value}`)];
  const r = await exec('sysctl', args);
  if (r.code !== 0) throw execError('sysctl', args, r);
}
