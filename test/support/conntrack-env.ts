/**
 * A node that NATs real traffic, for the conntrack kernel tests:
 *
 *   client 192.168.10.2 ── 192.168.10.1 node 10.244.1.1 ── 10.244.1.10 pod (TCP and UDP :8080)
 *
 * The node DNATs UDP 10.96.0.10:53 and TCP 10.96.0.10:80 to the pod's
 * :8080 (iptables-legacy: the sandbox kernel has no nf_tables for IPv4),
 * so its conntrack table holds entries whose reply source is the pod, as
 * kube-proxy's do. Accounting is on. One server process answers both
 * protocols (each process is seconds in the sandbox). The conntrack tool
 * reads the node's table for comparison.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

import { freshNetns, type Netns, vethLink } from './netns.js';
import { parseToolList, type ToolEntry } from './conntrack-tool.js';

interface TapLike {
  teardown(fn: () => unknown): void;
}

export const SERVICE_IP = '10.96.0.10';
export const POD_IP = '10.244.1.10';

export interface NatNode {
  node: Netns;
  client: Netns;
  pod: Netns;
}

// TCP: each line is answered with "pod"; UDP: each datagram with "pod".
const SERVER = `
const net = require('net'), dgram = require('dgram');
net.createServer((s) => { s.on('error', () => {}); s.on('data', () => s.write('pod\\n')); }).listen(8080, '0.0.0.0', () => {
  const u = dgram.createSocket('udp4');
  u.on('message', (m, from) => u.send('pod', from.port, from.address));
  u.bind(8080, '0.0.0.0', () => console.log('listening'));
});
`;

/**
 * The environment for node processes the tests start: without the
 * sanitizer run's preloaded runtime, whose leak check at exit would report
 * V8's own allocations (the addon is not in those processes).
 */
function plainEnv(): NodeJS.ProcessEnv {
  const { LD_PRELOAD: _preload, ...env } = process.env;
  return env;
}

/** Runs a node script in `ns`; resolves with what it printed. */
function nodeIn(ns: Netns, script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns.name, process.execPath, '-e', script, ...args], { env: plainEnv() }, (err, stdout, stderr) =>
      err ? reject(new Error(`node in ${ns.name} failed: ${String(stderr).trim() || err.message}`)) : resolve(String(stdout)),
    );
  });
}

export async function natNode(t: TapLike): Promise<NatNode> {
  const node = await freshNetns(t, 'ctnode');
  const client = await freshNetns(t, 'ctcli');
  const pod = await freshNetns(t, 'ctpod');
  await vethLink(node, 'eth0', '192.168.10.1/24', client, 'c0', '192.168.10.2/24');
  await vethLink(node, 'pod1', '10.244.1.1/24', pod, 'eth0', `${POD_IP}/24`);
  await client.exec('ip', ['route', 'add', 'default', 'via', '192.168.10.1']);
  await pod.exec('ip', ['route', 'add', 'default', 'via', '10.244.1.1']);
  // Through /proc, not sysctl(8): under the sanitizer run, children inherit
  // the leak checker, and sysctl's own leaks would fail the step. A UDP
  // entry with one reply lives 30 s by default, less than a test on a slow
  // kernel may need it: 10 minutes here.
  await node.exec('sh', ['-c', 'echo 1 >/proc/sys/net/ipv4/ip_forward && echo 1 >/proc/sys/net/netfilter/nf_conntrack_acct && echo 600 >/proc/sys/net/netfilter/nf_conntrack_udp_timeout']);
  for (const [proto, port] of [['udp', '53'], ['tcp', '80']])
    await node.exec('iptables-legacy', ['-t', 'nat', '-A', 'PREROUTING', '-d', SERVICE_IP, '-p', proto, '--dport', port, '-j', 'DNAT', '--to-destination', `${POD_IP}:8080`]);
  const child: ChildProcess = spawn('ip', ['netns', 'exec', pod.name, process.execPath, '-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'], env: plainEnv() });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
  });
  const [first] = (await Promise.race([once(createInterface({ input: child.stdout! }), 'line'), once(child, 'exit').then(() => [undefined])])) as [string | undefined];
  if (first !== 'listening') throw new Error('the pod\'s server did not start');
  return { node, client, pod };
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
 * `n` UDP datagrams to host:port from `n` sockets in `ns` (a new conntrack
 * entry each), in one process; resolves with how many were answered
 * within `waitMs` (0: do not wait for answers).
 */
export async function udpBurst(ns: Netns, host: string, port: number, n: number, waitMs = 0): Promise<number> {
  const script = `
const dgram = require('dgram');
const [host, port, n, wait] = process.argv.slice(1).map((v, i) => i ? Number(v) : v);
let sent = 0, answered = 0;
const sockets = [];
for (let i = 0; i < n; i++) {
  const s = dgram.createSocket('udp4');
  sockets.push(s);
  s.on('message', () => { if (++answered === n) { console.log(answered); process.exit(0); } });
  s.send('x', port, host, () => { if (++sent === n) setTimeout(() => { console.log(answered); process.exit(0); }, wait); });
}`;
  return Number((await nodeIn(ns, script, [host, String(port), String(n), String(waitMs)])).trim());
}
