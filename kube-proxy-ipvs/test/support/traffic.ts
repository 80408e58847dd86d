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
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { killAtTeardown, type TapLike } from '../../../test/support/connection.js';
import { freshNetns, type Netns, vethLink } from '../../../test/support/netns.js';

export { openConnection, type Connection } from '../../../test/support/connection.js';

export const NODE_IP = '192.168.10.1';
export const PODS = { be1: '10.244.1.10', be2: '10.244.2.11' } as const;

export interface Cluster {
  node: Netns;
  client: Netns;
  /** The pods' namespaces (for more servers, e.g. startUdpServer). */
  pods: Record<keyof typeof PODS, Netns>;
}

export async function nodeWithPods(t: TapLike): Promise<Cluster> {
  const cluster = await podNetworks(t);
  await startServer(t, cluster.pods.be1, 'be1');
  await startServer(t, cluster.pods.be2, 'be2');
  return cluster;
}

/** The namespaces and links alone, for tests that run other servers in the pods. */
export async function podNetworks(t: TapLike): Promise<Cluster> {
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


const UDP_SERVER = `
const [name, port] = process.argv.slice(1);
const s = require('dgram').createSocket('udp4');
s.on('message', (m, from) => s.send(name, from.port, from.address));
s.bind(Number(port), '0.0.0.0', () => console.log('listening'));
`;

/** A UDP server on :8080 (or `port`) in `ns` that answers every datagram with `name`. */
export async function startUdpServer(t: TapLike, ns: Netns, name: string, port = 8080): Promise<void> {
  const child = spawn('ip', ['netns', 'exec', ns.name, process.execPath, '-e', UDP_SERVER, name, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
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
