/**
 * Renders the IPVS table the way `ipvsadm -Ln` prints it, so people can
 * read what the library programmed in the form they already know. Kernel
 * tests compare this with ipvsadm's own output.
 */
import type { Destination, Info, ServiceWithDestinations } from './types.js';

const FORWARD_NAME: Record<Destination['forward'], string> = {
  masq: 'Masq',
  local: 'Local',
  tunnel: 'Tunnel',
  route: 'Route',
  bypass: 'Bypass',
};

function hostPort(family: string, address: string, port: number): string {
  return family === 'inet6' ? `[${address}]:${port}` : `${address}:${port}`;
}

function ipv4ToNumber(a: string): number {
  return a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

/** Orders addresses by value (IPv4 before IPv6), as ipvsadm sorts them. */
function compareAddress(a: string, b: string): number {
  const v6a = a.includes(':');
  const v6b = b.includes(':');
  if (v6a !== v6b) return v6a ? 1 : -1;
  if (!v6a) return ipv4ToNumber(a) - ipv4ToNumber(b);
  // Fixed-width hex in one case: text order is numeric order.
  const x = expand6(a);
  const y = expand6(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function expand6(a: string): string {
  const [head, tail = ''] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const mid = a.includes('::') ? Array(8 - h.length - t.length).fill('0') : [];
  return [...h, ...mid, ...t].map((g) => g.toLowerCase().padStart(4, '0')).join(':');
}

const PROTO_ORDER = { tcp: 6, udp: 17, sctp: 132 } as const;

function compareServices(a: ServiceWithDestinations, b: ServiceWithDestinations): number {
  const fa = 'fwmark' in a ? a.fwmark : 0;
  const fb = 'fwmark' in b ? b.fwmark : 0;
  if (fa !== fb) return fa - fb;
  if (a.family !== b.family) return a.family === 'inet' ? -1 : 1;
  if ('protocol' in a && 'protocol' in b) {
    if (a.protocol !== b.protocol) return PROTO_ORDER[a.protocol] - PROTO_ORDER[b.protocol];
    return compareAddress(a.address, b.address) || a.port - b.port;
  }
  return 0;
}

function schedulerFlags(s: ServiceWithDestinations): string {
  // ipvsadm names the flags after the scheduler that reads them.
  const names: Record<string, [string, string, string]> = {
    sh: ['sh-fallback', 'sh-port', 'flag-3'],
    mh: ['mh-fallback', 'mh-port', 'flag-3'],
  };
  const n = names[s.scheduler] ?? ['flag-1', 'flag-2', 'flag-3'];
  const on = [s.flags.sched1, s.flags.sched2, s.flags.sched3].map((f, i) => (f ? n[i] : '')).filter(Boolean);
  return on.length ? ` (${on.join(',')})` : '';
}

export function formatServiceLine(s: ServiceWithDestinations): string {
  let name: string;
  if ('fwmark' in s) name = `FWM  ${s.fwmark}${s.family === 'inet6' ? ' IPv6' : ''}`;
  // ipvsadm pads the protocol to four characters: "TCP  10.0.0.1:80", "SCTP 10.0.0.9:3868".
  else name = `${s.protocol.toUpperCase().padEnd(4)} ${hostPort(s.family, s.address, s.port)}`;
  let line = `${name} ${s.scheduler}${schedulerFlags(s)}`;
  if (s.persistent) {
    line += ` persistent ${s.persistent.timeout}`;
    const nm = s.persistent.netmask;
    if (s.family === 'inet' && nm !== '255.255.255.255') line += ` mask ${nm}`;
    if (s.family === 'inet6' && nm !== 128) line += ` mask ${nm}`;
    if (s.peName) line += ` pe ${s.peName}`;
  }
  if (s.flags.onePacket) line += ' ops';
  return line;
}

export function formatDestinationLine(d: Destination): string {
  const name = hostPort(d.family, d.address, d.port);
  return `  -> ${name.padEnd(28)} ${FORWARD_NAME[d.forward].padEnd(7)} ${String(d.weight).padEnd(6)} ${String(d.activeConns).padEnd(10)} ${String(d.inactiveConns).padEnd(10)}`;
}

/** The whole table as `ipvsadm -Ln` prints it, trailing spaces included. */
export function formatList(info: Info, services: ServiceWithDestinations[]): string {
  const lines = [
    `IP Virtual Server version ${info.version} (size=${info.connTableSize})`,
    'Prot LocalAddress:Port Scheduler Flags',
    '  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn',
  ];
  for (const s of [...services].sort(compareServices)) {
    lines.push(formatServiceLine(s));
    const dests = [...s.destinations].sort((a, b) => compareAddress(a.address, b.address) || a.port - b.port);
    for (const d of dests) lines.push(formatDestinationLine(d));
  }
  return `${lines.join('\n')}\n`;
}
