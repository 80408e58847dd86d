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
import { familyNodeIP, servedFamilies } from '../desired/node-addresses.js';
import { IP_FAMILY, type NodeInfo } from '../kubernetes/model.js';
import { IPVS_SCHEDULERS } from '../kubernetes/service-scheduling.js';
import type { IpvsClient } from './netlink-clients.js';
import { logV } from '../logging/logger.js';

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

/** What NewProxier logs of each family past --init-only's return. */
export interface ProxierLines {
  /** The configuration named no scheduler. */
  schedulerDefaulted: boolean;
  /** The IPVS sync periods as Go writes a duration ("30s"). */
  minSyncPeriod: string;
  syncPeriod: string;
}

/** Under --init-only NewProxier returns after the sysctls and timeouts, saying so. */
export const INIT_ONLY = 'init-only';

/** The bounded-frequency runner's burst, which upstream logs with the periods (this proxy's runner has none). */
const BURST_SYNCS = 2;

/**
 * The line createProxier logs once the check passed, before NewProxier
 * writes anything, which guides and operators grep to tell the mode in
 * use. (Older kube-proxy releases also said "Creating dualStackProxier for
 * ipvs" on a dual-stack host; the release this proxy follows does not.)
 */
export function logProxierMode(logger: Pick<Logger, 'info'>): void {
  logger.info('Using ipvs Proxier');
}

/**
 * NewProxier's lines of each family, with the family in them as its
 * logger's values put it, once its sysctls and timeouts are written: under
 * --init-only "System initialized and --init-only specified" and nothing
 * more; else at -v 2 "Record nodeIP and family", "IPVS scheduler not
 * specified, use rr by default" when the configuration named none, and at
 * -v 2 "ipvs sync params". None when `lines` is absent (a controller made
 * outside the binary).
 */
export function logProxierFamilies(logger: Pick<Logger, 'info' | 'debug'>, node: Pick<NodeInfo, 'addresses' | 'families'>, lines: ProxierLines | typeof INIT_ONLY | undefined): void {
  if (lines === undefined) return;
  for (const family of servedFamilies(node)) {
    const ipFamily = IP_FAMILY[family];
    if (lines === INIT_ONLY) {
      logger.info({ ipFamily }, 'System initialized and --init-only specified');
      continue;
    }
    logger.debug({ ipFamily, nodeIP: familyNodeIP(node.addresses, family), family: ipFamily }, 'Record nodeIP and family');
    if (lines.schedulerDefaulted) logger.info({ ipFamily }, 'IPVS scheduler not specified, use rr by default');
    logger.debug({ ipFamily, minSyncPeriod: lines.minSyncPeriod, syncPeriod: lines.syncPeriod, burstSyncs: BURST_SYNCS }, 'ipvs sync params');
  }
}

type ProbeClient = Pick<IpvsClient, 'listServices' | 'addService' | 'deleteService'>;

/** Throws IpvsProxierError when the kernel will not take `scheduler` ('' is rr, as upstream's default). */
export async function checkIpvsProxier(ipvs: ProbeClient, scheduler: string, logger: Pick<Logger, 'error' | 'info' | 'debug' | 'trace'>): Promise<void> {
  const name = scheduler === '' ? 'rr' : scheduler;
  let services;
  try {
    services = await ipvs.listServices();
  } catch (err) {
    logger.error({ err: (err as Error).message }, "Can't read the ipvs");
    throw refusal(err, name, 'list', 'could not get IPVS services: ');
  }
  if (services.some((s) => s.scheduler === name)) {
    logV(logger, 5, { count: services.length, scheduler: name }, 'VS exist, Skipping checks');
    return;
  }
  const dummy = { ...DUMMY_VIRTUAL_SERVER, scheduler: name };
  try {
    await ipvs.addService(dummy);
  } catch (err) {
    const answer = refusedBeforeSending(err) ? kernelAnswerTo(err) : err;
    logger.error({ err: (answer as Error).message, scheduler: name }, 'Could not create dummy VS');
    throw refusal(answer, name, 'add');
  }
  try {
    await ipvs.deleteService(DUMMY_VIRTUAL_SERVER);
  } catch (err) {
    logger.error({ err: (err as Error).message }, 'Could not delete dummy VS');
    throw refusal(err, name, 'delete');
  }
  logger.debug({ scheduler: name }, 'the kernel took a dummy virtual server with the scheduler; it was deleted');
}

/** The library's own refusal of an argument (a TypeError or RangeError naming the field), made before anything is sent. */
function refusedBeforeSending(err: unknown): err is { code: string; message: string } {
  const e = err as { code?: unknown; field?: unknown };
  return typeof e.field === 'string' && typeof e.code === 'string' && e.code.startsWith('ERR_');
}

/**
 * The kernel's answer to a scheduler name the library will not send.
 * Upstream sends any name: one longer than the kernel's 15 bytes fails
 * its attribute policy (EINVAL); any other it cannot find a module for
 * (ENOENT).
 */
function kernelAnswerTo(err: { code: string; message: string }): { code: string; text: string; message: string } {
  return err.code === 'ERR_OUT_OF_RANGE'
    ? { code: 'EINVAL', text: 'Invalid argument', message: err.message }
    : { code: 'ENOENT', text: 'No such file or directory', message: err.message };
}

type Step = 'list' | 'add' | 'delete';

/** "can't use the IPVS proxier: <Go's text for the errno>", and what it means here. */
function refusal(err: unknown, scheduler: string, step: Step, prefix = ''): IpvsProxierError {
  const e = err as { code?: unknown; text?: unknown; message?: string };
  const code = typeof e.code === 'string' ? e.code : undefined;
  // Go's syscall.Errno text is strerror's with a lower-case first letter ("no such file or directory").
  const text = typeof e.text === 'string' && e.text !== '' ? e.text[0].toLowerCase() + e.text.slice(1) : undefined;
  const what = `can't use the IPVS proxier: ${prefix}${text ?? e.message ?? String(err)}`;
  // Without an errno's text the message is already the whole story.
  const hint = code === undefined ? undefined : hintFor(code, scheduler, step, text === undefined ? undefined : e.message);
  return new IpvsProxierError(hint ? `${what} (${hint})` : what, code);
}

function hintFor(code: string, scheduler: string, step: Step, detail: string | undefined): string | undefined {
  if (code === 'EPERM' || code === 'EACCES') return 'the process lacks CAP_NET_ADMIN in the target network namespace (run as root or privileged)';
  // Only the add names the scheduler: a failed list or delete says nothing about it.
  if (step !== 'add') return detail;
  const vs = `${DUMMY_VIRTUAL_SERVER.address}:${DUMMY_VIRTUAL_SERVER.port}`;
  const field = `--ipvs-scheduler (ipvs.scheduler) "${scheduler}"`;
  const known = `Linux's IPVS schedulers are ${IPVS_SCHEDULERS.join(', ')}`;
  switch (code) {
    case 'EINVAL':
      return `${field}: a scheduler's name is at most 15 bytes; ${known}`;
    case 'ENOENT':
      return (IPVS_SCHEDULERS as readonly string[]).includes(scheduler)
        ? `${field}: the kernel has no IPVS scheduler of that name: module ip_vs_${scheduler} is not loaded and could not be loaded; load it on the node (modprobe ip_vs_${scheduler}) or choose another scheduler`
        : `${field}: the kernel has no IPVS scheduler of that name (no module ip_vs_${scheduler}); ${known}`;
    case 'EEXIST':
      return `a virtual server ${vs}/TCP exists with another scheduler than "${scheduler}": the start-up check adds and deletes one there (TEST-NET-2, which no Service should use); delete it (ipvsadm -D -t ${vs}) and start again`;
    default:
      return detail;
  }
}
