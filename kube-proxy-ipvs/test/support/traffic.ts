/**
 * A node with pods, for real packets through the controller's services:
 *
 *   client 192.168.10.2 ── 192.168.10.1 node (IPVS, kube-ipvs0) 10.244.1.1 ── 10.244.1.10 pod be1
 *                                                               10.244.2.1 ── 10.244.2.11 pod be2
 *
 * Each pod runs a TCP server that answers an HTTP GET with its name (for
 * curl) and any other line with its name on the same connection (for a
 * client that keeps one connection open). Every child is killed at teardown.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshNetns, type Netns, vethLink } from '../../../test/support/netns.js';

interface TapLike {
  teardown(fn: () => unknown): void;
}

export const NODE_IP = '192.168.10.1';
export const PODS = { be1: '10.244.1.10', be2: '10.244.2.11' } as const;

export interface Cluster {
  node: Netns;
  client: Netns;
  /** The pods' namespaces (for more servers, e.g. startUdpServer). */
  pods: Record<keyof typeof PODS, Netns>;
}

export async function nodeWithPods(t: TapLike): Promise<Cluster> {
  const node = await freshNetns(t, 'node');
  const client = await freshNetns(t, 'cli');
  const be1 = await freshNetns(t, 'be1');
  const be2 = await freshNetns(t, 'be2');
  await vethLink(node, 'eth0', `${NODE_IP}/24`, client, 'c0', '192.168.10.2/24');
  await vethLink(node, 'pod1', '10.244.1.1/24', be1, 'eth0', `${PODS.be1}/24`);
  await vethLink(node, 'pod2', '10.244.2.1/24', be2, 'eth0', `${PODS.be2}/24`);
  await client.exec('ip', ['route', 'add', 'default', 'via', NODE_IP]);
  await be1.exec('ip', ['route', 'add', 'default', 'via', '10.244.1.1']);
  await be2.exec('ip', ['route', 'add', 'default', 'via', '10.244.2.1']);
  await startServer(t, be1, 'be1');
  await startServer(t, be2, 'be2');
  return { node, client, pods: { be1, be2 } };
}

const SERVER = `
const name = process.argv[1];
require('net').createServer((s) => {
  s.on('error', () => {});
  s.setEncoding('utf8');
  s.on('data', (d) => {
    if (d.startsWith('GET ')) s.end('HTTP/1.1 200 OK\\r\\nContent-Length: ' + name.length + '\\r\\nConnection: close\\r\\n\\r\\n' + name);
    else s.write(name + '\\n');
  });
}).listen(8080, '0.0.0.0', () => console.log('listening'));
`;

function killAtTeardown(t: TapLike, child: ChildProcess): void {
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = once(child, 'exit');
      child.kill('SIGKILL');
      await gone;
    }
  });
}

async function startServer(t: TapLike, ns: Netns, name: string): Promise<void> {
  // `ip netns exec` execs the program, so the child is node itself.
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', SERVER, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  killAtTeardown(t, child);
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(() => [undefined])])) as [string | undefined];
  if (first !== 'listening') throw new Error(`${name} server did not start`);
}

/** One new connection per request: who answered each (or the curl error). */
export async function requests(client: Netns, url: string, n: number): Promise<string[]> {
  const answers: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await client.tryExec('curl', ['-s', '--max-time', '10', url]);
    answers.push(r.code === 0 ? r.stdout : `curl exit ${r.code}`);
  }
  return answers;
}

const CLIENT = `
const [host, port] = process.argv.slice(1);
const s = require('net').connect(Number(port), host, () => console.log('connected'));
s.setEncoding('utf8');
s.on('data', (d) => process.stdout.write(d));
s.on('error', (e) => { console.log('error ' + e.code); process.exit(1); });
s.on('close', () => { console.log('closed'); process.exit(0); });
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { for (const l of d.split('\\n')) if (l === 'close') s.end(); else if (l === 'reset') s.resetAndDestroy(); else if (l) s.write(l + '\\n'); });
`;

export interface Connection {
  /** Sends a line on the open connection; resolves with the answer (the server's name). */
  ask(): Promise<string>;
  close(): Promise<void>;
  /** Aborts the connection with a RST: IPVS moves it to CLOSE, which expires in 10 s (a FIN leaves TIME_WAIT for 2 minutes). */
  reset(): Promise<void>;
}

/** A TCP connection kept open by a client process in `ns`. */
export async function openConnection(t: TapLike, ns: Netns, host: string, port: number): Promise<Connection> {
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', CLIENT, host, String(port)], { stdio: ['pipe', 'pipe', 'inherit'] });
  killAtTeardown(t, child);
  const lines = createInterface({ input: child.stdout! });
  const queue: string[] = [];
  const waiters: Array<(l: string) => void> = [];
  lines.on('line', (l) => (waiters.length ? waiters.shift()!(l) : queue.push(l)));
  const next = () =>
    Promise.race([
      new Promise<string>((resolve) => (queue.length ? resolve(queue.shift()!) : waiters.push(resolve))),
      sleep(15000).then(() => 'no answer within 15 s'),
    ]);
  const hello = await next();
  if (hello !== 'connected') throw new Error(`client could not connect: ${hello}`);
  return {
    async ask() {
      child.stdin!.write('ping\n');
      return next();
    },
    async close() {
      child.stdin!.write('close\n');
      await next();
    },
    async reset() {
      child.stdin!.write('reset\n');
      await next();
    },
  };
}

const UDP_SERVER = `
const name = process.argv[1];
const s = require('dgram').createSocket('udp4');
s.on('message', (m, from) => s.send(name, from.port, from.address));
s.bind(8080, '0.0.0.0', () => console.log('listening'));
`;

/** A UDP server on :8080 in `ns` that answers every datagram with `name`. */
export async function startUdpServer(t: TapLike, ns: Netns, name: string): Promise<void> {
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', UDP_SERVER, name], { stdio: ['ignore', 'pipe', 'inherit'] });
  killAtTeardown(t, child);
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(() => [undefined])])) as [string | undefined];
  if (first !== 'listening') throw new Error(`${name} UDP server did not start`);
}

const UDP_CLIENT = `
const [host, port] = process.argv.slice(1);
const s = require('dgram').createSocket('udp4');
const timer = setTimeout(() => { console.log('no answer'); process.exit(0); }, 5000);
s.on('message', (m) => { clearTimeout(timer); console.log(String(m)); s.close(); });
s.send('ping', Number(port), host);
`;

/** One datagram from a new socket (a new IPVS UDP connection each): who answered, or 'no answer'. */
export async function udpRequest(client: Netns, host: string, port: number): Promise<string> {
  return (await client.exec(process.execPath, ['-e', UDP_CLIENT, host, String(port)])).trim();
}
