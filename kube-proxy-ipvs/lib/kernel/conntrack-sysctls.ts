/**
 * The conntrack settings kube-proxy makes at start (pkg/proxy/conntrack
 * SetSysctls), in its order and with its log lines:
 *
 * - nf_conntrack_max = maxPerCore × the host's online CPUs, capped at
 *   1 Mi, at least `min`; only ever raised. The hash size is raised to a
 *   quarter of it when smaller. maxPerCore 0/null leaves both alone.
 * - nf_conntrack_tcp_timeout_established / _close_wait, when > 0.
 * - nf_conntrack_tcp_be_liberal = 1 when asked (never written back to 0).
 * - nf_conntrack_udp_timeout / _stream, when > 0.
 *
 * Each value is read first and written only when it differs ("Set
 * sysctl"); the per-namespace ones are read together and written together
 * (with --netns, one program run in that namespace each). Any failure is
 * fatal, as upstream's: a read-only /sys with a hash size to raise stops
 * the start (kube-proxy 1.35 dropped the old read-only-sysfs skip); set
 * conntrack.maxPerCore to 0 where /sys cannot be written.
 *
 * nf_conntrack_max and the hash size are host-wide and writable only from
 * the initial namespace, so they are written from this process's own; the
 * timeouts are per namespace and written in the one being programmed.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { logV } from '../logging/logger.js';
import type { Exec } from './exec.js';
import { sysctlAccess } from './sysctls.js';

/** conntrack.* of the configuration; null leaves that setting alone, as upstream's nil. */
export interface ConntrackSettings {
  /** nf_conntrack_max = maxPerCore × CPUs (at least min); 0 or null leaves it and the hash size alone. */
  maxPerCore: number | null;
  min: number | null;
  /** 0 or null leaves the kernel's value. */
  tcpEstablishedTimeoutMs: number | null;
  tcpCloseWaitTimeoutMs: number | null;
  /** true sets nf_conntrack_tcp_be_liberal=1; false leaves it. */
  tcpBeLiberal: boolean;
  /** 0 leaves the kernel's value. */
  udpTimeoutMs: number;
  udpStreamTimeoutMs: number;
}

/** Where the values are read and written; conntrackIO() is the real one, tests give their own. */
export interface ConntrackIO {
  cpus(): number;
  /** Entries such as "net/netfilter/nf_conntrack_max"; an unreadable one is missing from the map. */
  get(entries: readonly string[]): Promise<Map<string, number>>;
  /** In order; each is tried, and the failures are reported together. */
  set(values: ReadonlyArray<readonly [string, number]>): Promise<void>;
  getHashsize(): Promise<number>;
  setHashsize(value: number): Promise<void>;
}

/** kube-proxy caps the scaled value so a many-core host does not pin gigabytes of conntrack table. */
const MAX_LIMIT = 1_048_576;
const HASHSIZE = '/sys/module/nf_conntrack/parameters/hashsize';
const MAX = 'net/netfilter/nf_conntrack_max';

export class ConntrackError extends Error {
  constructor(cause: unknown) {
    super(`could not set conntrack parameters from kube-proxy configuration: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ConntrackError';
  }
}

/** getConntrackMax: 0 means leave nf_conntrack_max and the hash size alone. */
export function conntrackMax(c: Pick<ConntrackSettings, 'maxPerCore' | 'min'>, cpus: number, log?: Logger): number {
  if (!c.maxPerCore || c.maxPerCore <= 0) return 0;
  const floor = c.min ?? 0;
  const scaled = c.maxPerCore * cpus;
  if (scaled > MAX_LIMIT) {
    if (log) logV(log, 3, { scaled, limit: MAX_LIMIT }, 'GetConntrackMax: capping scaled conntrack-max-per-core');
    return MAX_LIMIT;
  }
  if (scaled > floor) {
    if (log) logV(log, 3, {}, 'GetConntrackMax: using scaled conntrack-max-per-core');
    return scaled;
  }
  if (log) logV(log, 3, {}, 'GetConntrackMax: using conntrack-min');
  return floor;
}

export async function setConntrackSysctls(c: ConntrackSettings, io: ConntrackIO, log: Logger): Promise<void> {
  try {
    /** setIntSysCtl: the ones that differ from what the kernel has, logged, then written. */
    const set = async (wanted: ReadonlyArray<readonly [string, number]>) => {
      const current = await io.get(wanted.map(([e]) => e));
      const changes = wanted.filter(([entry, value]) => current.get(entry) !== value);
      for (const [entry, value] of changes) log.info({ entry, value }, 'Set sysctl');
      if (changes.length) await io.set(changes);
    };
    const max = conntrackMax(c, io.cpus(), log);
    if (max > 0) {
      // Written on every start that manages the limit, whether or not it is raised (kube-proxy's SetMax).
      log.info({ nfConntrackMax: max }, 'Setting nf_conntrack_max');
      const current = (await io.get([MAX]).catch(() => new Map<string, number>())).get(MAX);
      if (current === undefined || current < max) await set([[MAX, max]]);
      if ((await io.getHashsize()) < Math.floor(max / 4)) {
        log.info({ conntrackHashsize: Math.floor(max / 4) }, 'Setting conntrack hashsize');
        await io.setHashsize(Math.floor(max / 4));
      }
    }
    const seconds = (ms: number | null) => Math.trunc((ms ?? 0) / 1000);
    const perNamespace: Array<[string, number]> = [];
    const want = (name: string, value: number, when = value > 0) => {
      if (when) perNamespace.push([`net/netfilter/${name}`, value]);
    };
    want('nf_conntrack_tcp_timeout_established', seconds(c.tcpEstablishedTimeoutMs));
    want('nf_conntrack_tcp_timeout_close_wait', seconds(c.tcpCloseWaitTimeoutMs));
    want('nf_conntrack_tcp_be_liberal', 1, c.tcpBeLiberal);
    want('nf_conntrack_udp_timeout', seconds(c.udpTimeoutMs));
    want('nf_conntrack_udp_timeout_stream', seconds(c.udpStreamTimeoutMs));
    if (perNamespace.length) await set(perNamespace);
  } catch (err) {
    throw new ConntrackError(err);
  }
}

/**
 * The real values. nf_conntrack_max and the hash size are host-wide and
 * read and written from this process's namespace. The per-namespace ones
 * go as sysctlAccess() says: through /proc/sys when the proxy programs its
 * own namespace, as kube-proxy's sysctl helper does, and through `sysctl`
 * run by `exec` in another (--netns).
 */
export function conntrackIO(exec: Exec, where: { ownNamespace: boolean }): ConntrackIO {
  // nf_conntrack_max: this process's /proc/sys, whichever namespace is programmed.
  const hostWide = sysctlAccess(exec, { ownNamespace: true });
  const perNamespace = sysctlAccess(exec, where);
  const isMax = (entries: readonly string[]) => entries.length === 1 && entries[0] === MAX;
  return {
    cpus: onlineCPUs,
    async get(entries) {
      const read = await (isMax(entries) ? hostWide : perNamespace).read(entries.map(keyOf));
      const out = new Map<string, number>();
      for (const e of entries) {
        const v = read.get(keyOf(e));
        if (v !== undefined) out.set(e, v);
      }
      return out;
    },
    set: (values) => (isMax(values.map(([e]) => e)) ? hostWide : perNamespace).write(values.map(([e, value]) => ({ key: keyOf(e), value }))),
    async getHashsize() {
      const n = intOf(await readFile(HASHSIZE, 'utf8'));
      if (n === undefined) throw new Error(`${HASHSIZE}: not a number`);
      return n;
    },
    setHashsize: (value) => writeFile(HASHSIZE, String(value), { mode: 0o640 }),
  };
}

// Entries are paths under /proc/sys ("net/netfilter/nf_conntrack_max"); sysctl names them with dots.
const keyOf = (entry: string) => entry.replaceAll('/', '.');

/**
 * The host's online CPUs (/sys/devices/system/cpu/online, "0-3,6"), not
 * this process's affinity or cgroup: nf_conntrack_max is host-wide.
 */
export function onlineCPUs(text?: string): number {
  try {
    const list = (text ?? readFileSync('/sys/devices/system/cpu/online', 'utf8')).trim();
    let n = 0;
    for (const part of list.split(',')) {
      const [a, b] = part.split('-').map(Number);
      n += b === undefined ? 1 : b - a + 1;
    }
    if (Number.isInteger(n) && n > 0) return n;
  } catch {
    // fall through
  }
  return availableParallelism();
}

function intOf(text: string): number | undefined {
  const n = Number.parseInt(text.trim(), 10);
  return Number.isNaN(n) ? undefined : n;
}
