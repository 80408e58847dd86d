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
 * sysctl"). Any failure is fatal, as upstream's: a read-only /sys with a
 * hash size to raise stops the start (kube-proxy 1.35 dropped the old
 * read-only-sysfs skip); set conntrack.maxPerCore to 0 where /sys cannot
 * be written.
 *
 * nf_conntrack_max and the hash size are host-wide and writable only from
 * the initial namespace, so they are written from this process's own; the
 * timeouts are per namespace and written in the one being programmed.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import { execError, type Exec } from './exec.js';

export interface ConntrackSettings {
  maxPerCore: number | null;
  min: number | null;
  tcpEstablishedTimeoutMs: number | null;
  tcpCloseWaitTimeoutMs: number | null;
  tcpBeLiberal: boolean;
  udpTimeoutMs: number;
  udpStreamTimeoutMs: number;
}

/** Where the values are read and written; conntrackIO() is the real one, tests give their own. */
export interface ConntrackIO {
  cpus(): number;
  /** entry: "net/netfilter/nf_conntrack_max"; undefined when unreadable. */
  get(entry: string): Promise<number | undefined>;
  set(entry: string, value: number): Promise<void>;
  getHashsize(): Promise<number>;
  setHashsize(value: number): Promise<void>;
}

/** kube-proxy caps the scaled value so a many-core host does not pin gigabytes of conntrack table. */
const MAX_LIMIT = 1_048_576;
const HASHSIZE = '/sys/module/nf_conntrack/parameters/hashsize';

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
    log?.debug({ scaled, limit: MAX_LIMIT }, 'GetConntrackMax: capping scaled conntrack-max-per-core');
    return MAX_LIMIT;
  }
  if (scaled > floor) {
    log?.debug('GetConntrackMax: using scaled conntrack-max-per-core');
    return scaled;
  }
  log?.debug('GetConntrackMax: using conntrack-min');
  return floor;
}

export async function setConntrackSysctls(c: ConntrackSettings, io: ConntrackIO, log: Logger): Promise<void> {
  try {
    const set = async (name: string, value: number) => {
      const entry = `net/netfilter/${name}`;
      if ((await io.get(entry)) === value) return;
      log.info({ entry, value }, 'Set sysctl');
      await io.set(entry, value);
    };
    const max = conntrackMax(c, io.cpus(), log);
    if (max > 0) {
      const current = await io.get('net/netfilter/nf_conntrack_max').catch(() => undefined);
      if (current === undefined || current < max) await set('nf_conntrack_max', max);
      if ((await io.getHashsize()) < Math.floor(max / 4)) {
        log.info({ conntrackHashsize: Math.floor(max / 4) }, 'Setting conntrack hashsize');
        await io.setHashsize(Math.floor(max / 4));
      }
    }
    const seconds = (ms: number | null) => Math.trunc((ms ?? 0) / 1000);
    if (seconds(c.tcpEstablishedTimeoutMs) > 0) await set('nf_conntrack_tcp_timeout_established', seconds(c.tcpEstablishedTimeoutMs));
    if (seconds(c.tcpCloseWaitTimeoutMs) > 0) await set('nf_conntrack_tcp_timeout_close_wait', seconds(c.tcpCloseWaitTimeoutMs));
    if (c.tcpBeLiberal) await set('nf_conntrack_tcp_be_liberal', 1);
    if (seconds(c.udpTimeoutMs) > 0) await set('nf_conntrack_udp_timeout', seconds(c.udpTimeoutMs));
    if (seconds(c.udpStreamTimeoutMs) > 0) await set('nf_conntrack_udp_timeout_stream', seconds(c.udpStreamTimeoutMs));
  } catch (err) {
    throw new ConntrackError(err);
  }
}

/**
 * The real values: nf_conntrack_max and the hash size in this process's
 * namespace; the rest through `sysctl` run by `exec` (the target namespace).
 */
export function conntrackIO(exec: Exec): ConntrackIO {
  const proc = (entry: string) => `/proc/sys/${entry}`;
  const hostWide = (entry: string) => entry === 'net/netfilter/nf_conntrack_max';
  return {
    cpus: onlineCPUs,
    async get(entry) {
      if (hostWide(entry)) return intOf(await readFile(proc(entry), 'utf8').catch(() => ''));
      const r = await exec('sysctl', ['-n', entry.replaceAll('/', '.')]);
      return r.code === 0 ? intOf(r.stdout) : undefined;
    },
    async set(entry, value) {
      if (hostWide(entry)) return writeFile(proc(entry), String(value));
      const args = ['-q', '-w', `${entry.replaceAll('/', '.')}=${value}`];
      const r = await exec('sysctl', args);
      if (r.code !== 0) throw execError('sysctl', args, r);
    },
    async getHashsize() {
      const n = intOf(await readFile(HASHSIZE, 'utf8'));
      if (n === undefined) throw new Error(`${HASHSIZE}: not a number`);
      return n;
    },
    setHashsize: (value) => writeFile(HASHSIZE, String(value), { mode: 0o640 }),
  };
}

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
