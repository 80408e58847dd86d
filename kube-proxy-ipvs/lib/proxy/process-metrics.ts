/**
 * The process series Go's process collector gives kube-proxy that
 * prom-client's defaults have not: the address-space limit and the network
 * byte counters (client_golang reads them from /proc/self/limits and the
 * IpExt line of /proc/self/net/netstat, so the bytes are those of the
 * process's network namespace, not of the process alone). The rest of the
 * process_* series come from prom-client with the same names and meanings.
 */
import { readFileSync } from 'node:fs';
import { Counter, Gauge, type Registry } from './prom-client-parts.js';

/** "unlimited" is read as the largest 64-bit value, as Go's procfs reads it (1.8446744073709552e+19 printed). */
const UNLIMITED = 2 ** 64;

/** The soft "Max address space" limit of a /proc/PID/limits text, in bytes; undefined where the line is missing. */
export function addressSpaceLimit(limits: string): number | undefined {
  const line = limits.split('\n').find((l) => l.startsWith('Max address space'));
  const soft = line?.slice('Max address space'.length).trim().split(/\s+/)[0];
  if (soft === undefined || soft === '') return undefined;
  if (soft === 'unlimited') return UNLIMITED;
  const n = Number(soft);
  return Number.isFinite(n) ? n : undefined;
}

/** InOctets and OutOctets of a /proc/PID/net/netstat text's IpExt lines; undefined where they are missing. */
export function ipExtOctets(netstat: string): { in: number; out: number } | undefined {
  const lines = netstat.split('\n').filter((l) => l.startsWith('IpExt:'));
  if (lines.length < 2) return undefined;
  const names = lines[0].split(/\s+/).slice(1);
  const values = lines[1].split(/\s+/).slice(1);
  const get = (name: string) => {
    const i = names.indexOf(name);
    return i < 0 ? undefined : Number(values[i]);
  };
  const inOctets = get('InOctets');
  const outOctets = get('OutOctets');
  if (inOctets === undefined || outOctets === undefined || !Number.isFinite(inOctets) || !Number.isFinite(outOctets)) return undefined;
  return { in: inOctets, out: outOctets };
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** Registers the three series, each read when scraped; one whose file cannot be read shows 0 (Go's collector leaves it out). */
export function registerGoProcessExtras(registry: Registry, proc = '/proc/self'): void {
  new Gauge({
    name: 'process_virtual_memory_max_bytes',
    help: 'Maximum amount of virtual memory available in bytes.',
    registers: [registry],
    collect() {
      this.reset();
      const limit = addressSpaceLimit(read(`${proc}/limits`) ?? '');
      if (limit !== undefined) this.set(limit);
    },
  });
  const octets = () => ipExtOctets(read(`${proc}/net/netstat`) ?? '');
  new Counter({
    name: 'process_network_receive_bytes_total',
    help: 'Number of bytes received by the process over the network.',
    registers: [registry],
    collect() {
      this.reset();
      const o = octets();
      if (o !== undefined) this.inc(o.in);
    },
  });
  new Counter({
    name: 'process_network_transmit_bytes_total',
    help: 'Number of bytes sent by the process over the network.',
    registers: [registry],
    collect() {
      this.reset();
      const o = octets();
      if (o !== undefined) this.inc(o.out);
    },
  });
}
