/**
 * A node that NATs real traffic, for the conntrack kernel tests:
 *
 *   client 192.168.10.2 ── node 192.168.10.1 ── pod be1 10.244.1.10 (UDP and TCP :8080)
 *                                            └─ pod be2 10.244.2.11 (TCP :8080)
 *
 * The node DNATs UDP 10.96.0.10:53 to be1:8080 and TCP 10.96.0.10:80 to
 * be2:8080 (iptables-legacy: the sandbox kernel has no nf_tables for
 * IPv4), so its conntrack table holds entries whose reply source is the
 * pod, as kube-proxy's do. Accounting is on. The conntrack tool reads the
 * node's table for comparison.
 */
import { nodeWithPods, startUdpServer, type Cluster } from './traffic.js';
import type { Netns } from './netns.js';
import { parseToolList, type ToolEntry } from './conntrack-tool.js';

interface TapLike {
  teardown(fn: () => unknown): void;
}

export const SERVICE_IP = '10.96.0.10';

export async function natNode(t: TapLike): Promise<Cluster> {
  const c = await nodeWithPods(t);
  await c.node.exec('sysctl', ['-qw', 'net.ipv4.ip_forward=1', 'net.netfilter.nf_conntrack_acct=1']);
  const nat = (proto: string, port: string, to: string) =>
    c.node.exec('iptables-legacy', ['-t', 'nat', '-A', 'PREROUTING', '-d', SERVICE_IP, '-p', proto, '--dport', port, '-j', 'DNAT', '--to-destination', to]);
  await nat('udp', '53', '10.244.1.10:8080');
  await nat('tcp', '80', '10.244.2.11:8080');
  await startUdpServer(t, c.pods.be1, 'be1');
  return c;
}

/** `conntrack -L -o extended,id ARGS...` in `ns`, parsed. */
export async function toolList(ns: Netns, ...args: string[]): Promise<ToolEntry[]> {
  const r = await ns.tryExec('conntrack', ['-L', '-o', 'extended,id', ...args]);
  if (r.code !== 0) throw new Error(`conntrack -L ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`);
  return parseToolList(r.stdout);
}

/** The ids of what the tool lists, sorted, to compare sets of entries. */
export async function toolIds(ns: Netns, ...args: string[]): Promise<string[]> {
  return (await toolList(ns, ...args)).map((e) => e.rest.id).sort();
}

/**
 * `n` UDP datagrams to host:port from `n` sockets in `ns` (a new
 * conntrack entry each), in one process.
 */
export async function udpBurst(ns: Netns, host: string, port: number, n: number): Promise<void> {
  const script = `
const dgram = require('dgram');
const [host, port, n] = process.argv.slice(1);
let left = Number(n);
for (let i = 0; i < Number(n); i++) {
  const s = dgram.createSocket('udp4');
  s.send('x', Number(port), host, () => { s.close(); if (--left === 0) process.exit(0); });
}`;
  await ns.exec(process.execPath, ['-e', script, host, String(port), String(n)]);
}
