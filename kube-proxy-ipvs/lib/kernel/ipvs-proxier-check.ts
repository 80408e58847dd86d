/**
 * Upstream's CanUseIPVSProxier (pkg/proxy/ipvs/supported.go), asked of the
 * kernel in the proxy's network namespace when the IPVS proxier is made
 * (the Controller's start, so --init-only too; --cleanup and
 * --write-config-to never get there):
 *
 *  1. the virtual servers are listed; if one already uses the scheduler (a
 *     restart), the check passes there;
 *  2. otherwise a dummy virtual server 198.51.100.0:20000/TCP (TEST-NET-2,
 *     RFC 5737) is added with the scheduler and deleted again.
 *
 * The kernel refuses a scheduler it has no module for (and cannot load
 * one for) with ENOENT, so a bad --ipvs-scheduler fails the start as
 * upstream's does: "can't use the IPVS proxier: no such file or
 * directory" (exit 1); we add which field, which module, and what to do.
 * Any refusal fails it the same way with that errno's text, as upstream:
 * a leftover dummy with another scheduler ("file exists") included.
 *
 * Not copied: upstream's ipset version check (this proxy speaks netlink
 * to ipset, not the ipset program) and its re-read after the add (a
 * work-around for moby/ipvs#27, a handle that reports success without
 * IPVS; Ipvs.open refuses a kernel without IPVS).
 */
import type { Logger } from 'pino';
import { IPVS_SCHEDULERS } from '../kubernetes/service-scheduling.js';
import type { IpvsClient } from './netlink-clients.js';

/** The dummy virtual server, as upstream's. */
export const DUMMY_VIRTUAL_SERVER = { protocol: 'tcp', address: '198.51.100.0', port: 20000 } as const;

/** The start failure; explainStartError leaves it as it is. */
export class IpvsProxierError extends Error {
  constructor(
    message: string,
    /** The errno's name of the refusal, when it was one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'IpvsProxierError';
  }
}

type ProbeClient = Pick<IpvsClient, 'listServices' | 'addService' | 'deleteService'>;

/** Throws IpvsProxierError when the kernel will not take `scheduler` ('' is rr, as upstream's default). */
export async function checkIpvsProxier(ipvs: ProbeClient, scheduler: string, logger: Pick<Logger, 'error' | 'debug'>): Promise<void> {
  const name = scheduler === '' ? 'rr' : scheduler;
  let services;
  try {
    services = await ipvs.listServices();
  } catch (err) {
    logger.error({ err: (err as Error).message }, "Can't read the ipvs");
    throw refusal(err, name, 'could not get IPVS services: ');
  }
  if (services.some((s) => s.scheduler === name)) {
    logger.debug({ count: services.length, scheduler: name }, 'VS exist, Skipping checks');
    return;
  }
  const dummy = { ...DUMMY_VIRTUAL_SERVER, scheduler: name };
  try {
    await ipvs.addService(dummy);
  } catch (err) {
    logger.error({ err: (err as Error).message, scheduler: name }, 'Could not create dummy VS');
    throw refusal(err, name);
  }
  try {
    await ipvs.deleteService(DUMMY_VIRTUAL_SERVER);
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'Could not delete dummy VS');
    throw refusal(err, name);
  }
  logger.debug({ scheduler: name }, 'the kernel took a dummy virtual server with the scheduler; it was deleted');
}

/** "can't use the IPVS proxier: <Go's text for the errno>", and what it means here. */
function refusal(err: unknown, scheduler: string, prefix = ''): IpvsProxierError {
  const e = err as { code?: unknown; text?: unknown; message?: string };
  const code = typeof e.code === 'string' ? e.code : undefined;
  // Go's syscall.Errno text is strerror's with a lower-case first letter ("no such file or directory").
  const text = typeof e.text === 'string' && e.text !== '' ? e.text[0].toLowerCase() + e.text.slice(1) : undefined;
  const what = `can't use the IPVS proxier: ${prefix}${text ?? e.message ?? String(err)}`;
  const hint = code === undefined ? undefined : hintFor(code, scheduler, e.message);
  return new IpvsProxierError(hint ? `${what} (${hint})` : what, code);
}

function hintFor(code: string, scheduler: string, detail: string | undefined): string | undefined {
  const vs = `${DUMMY_VIRTUAL_SERVER.address}:${DUMMY_VIRTUAL_SERVER.port}`;
  switch (code) {
    case 'ENOENT': {
      const field = `--ipvs-scheduler (ipvs.scheduler) "${scheduler}": the kernel has no IPVS scheduler of that name`;
      if ((IPVS_SCHEDULERS as readonly string[]).includes(scheduler)) {
        return `${field}: module ip_vs_${scheduler} is not loaded and could not be loaded; load it on the node (modprobe ip_vs_${scheduler}) or choose another scheduler`;
      }
      return `${field} (no module ip_vs_${scheduler}); Linux's IPVS schedulers are ${IPVS_SCHEDULERS.join(', ')}`;
    }
    case 'EEXIST':
      return `a virtual server ${vs}/TCP exists with another scheduler than "${scheduler}": the start-up check adds and deletes one there (TEST-NET-2, which no Service should use); delete it (ipvsadm -D -t ${vs}) and start again`;
    case 'EPERM':
    case 'EACCES':
      return 'the process lacks CAP_NET_ADMIN in the target network namespace (run as root or privileged)';
    default:
      return detail;
  }
}
