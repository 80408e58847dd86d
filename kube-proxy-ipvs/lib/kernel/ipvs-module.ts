/**
 * Loading ip_vs when the kernel has not. Kernels since 5.16 load it on the
 * first generic-netlink request for its family; older ones (the 5.4, 5.10
 * and 4.18 of many long-lived distributions) do not, and kube-proxy's IPVS
 * library runs `modprobe -va ip_vs` when it makes its handle, so upstream
 * starts on a node where nothing loaded the module. The proxy runs it only
 * when opening IPVS finds no family, then opens again; a failure (no
 * modprobe, no module tree in the container) is logged as upstream logs it
 * and the open's own error stands.
 */
import type { Logger } from 'pino';
import { NetlinkError } from 'ipvs-netlink';
import type { Exec } from './exec.js';

/** The kernel has no IPVS family: not built, not loaded (and, before 5.16, not loaded on demand). The library says so with EPROTONOSUPPORT only. */
export function ipvsFamilyMissing(err: unknown): boolean {
  return err instanceof NetlinkError && err.code === 'EPROTONOSUPPORT';
}

/** Runs `modprobe -va ip_vs` in the host's mount namespace (modules are the kernel's, not a network namespace's). */
export async function loadIpvsModule(exec: Exec, logger: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  const r = await exec('modprobe', ['-va', 'ip_vs']);
  const output = `${r.stdout}${r.stderr}`.trim();
  if (r.code === 0) logger.info({ output }, 'IPVS was not loaded: loaded it with modprobe ip_vs');
  else logger.warn({ message: output, error: `exit status ${r.code}` }, 'Running modprobe ip_vs failed');
}
