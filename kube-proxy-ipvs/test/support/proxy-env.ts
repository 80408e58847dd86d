/**
 * A small node for end-to-end tests of the kube-proxy-ipvs binary, in
 * fresh network namespaces (the same layout as scripts/demo/guest.sh):
 *
 *   node    192.168.56.10/24 ── client 192.168.56.100   (NodePorts from outside)
 *           10.244.1.1/24    ── pods-a 10.244.1.x        (HTTP backends on :8080)
 *           10.244.2.1/24    ── pods-b 10.244.2.x
 *
 * and the binary itself (`node kube-proxy-ipvs/dist/lib/cli/main.js ... --netns node`),
 * started and stopped like a real process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Netns, freshNetns } from '../../../test/support/netns.js';
import { BINARY_NODE_FLAGS, MAIN } from './binary.mjs';
import { scratchDir } from './scratch.js';

interface TapLike {
  teardown(fn: () => unknown): void;
  passing(): boolean;
  comment(...message: unknown[]): void;
}

/** The binary as an operator's `kube-proxy-ipvs` runs it: this node, its first line's flags, the script. */
export const BINARY: readonly string[] = [process.execPath, ...BINARY_NODE_FLAGS, MAIN];

export interface ProxyNode {
  node: Netns;
  client: Netns;
  podsA: Netns;
  podsB: Netns;
  /** A folder for manifests. */
  dir: string;
  /**
   * Starts an HTTP backend on ip:8080 (in pods-a for 10.244.1.x, pods-b for 10.244.2.x) answering
   * "<name> <ip>", or "<name> <ip> from <client address>" for GET /source (who it saw connect:
   * the real client, or the node when the proxy masqueraded).
   */
  backend(ip: string, name: string): Promise<void>;
  /** One GET from a namespace; the body, or undefined when nothing answered. */
  get(ns: Netns, url: string): Promise<string | undefined>;
  /** The bodies of n GETs. */
  getMany(ns: Netns, url: string, n: number): Promise<Array<string | undefined>>;
  ipvsSave(): Promise<string[]>;
}

async function veth(a: Netns, aName: string, b: Netns, bName: string): Promise<void> {
  await a.exec('ip', ['link', 'add', aName, 'type', 'veth', 'peer', 'name', bName, 'netns', b.name]);
  await a.exec('ip', ['link', 'set', aName, 'up']);
  await b.exec('ip', ['link', 'set', bName, 'up']);
}

const SERVER = `
const [ip, name] = process.argv.slice(1);
const server = require('http').createServer((q, s) => s.end(name + ' ' + ip + (q.url === '/source' ? ' from ' + q.socket.remoteAddress : '')));
// Keep idle keep-alive connections open (default: closed after 5 s), so a test can hold one across a proxy restart.
server.keepAliveTimeout = 0;
server.listen(8080, ip, () => console.log('listening'));
`;

export async function proxyNode(t: TapLike): Promise<ProxyNode> {
  const node = await freshNetns(t, 'kpnode');
  const client = await freshNetns(t, 'kpcli');
  const podsA = await freshNetns(t, 'kppa');
  const podsB = await freshNetns(t, 'kppb');
  await veth(node, 'eth0', client, 'eth0');
  await node.exec('ip', ['addr', 'add', '192.168.56.10/24', 'dev', 'eth0']);
  await client.exec('ip', ['addr', 'add', '192.168.56.100/24', 'dev', 'eth0']);
  for (const [pods, n] of [[podsA, 1], [podsB, 2]] as const) {
    await veth(node, `pods-${n}`, pods, 'eth0');
    await node.exec('ip', ['addr', 'add', `10.244.${n}.1/24`, 'dev', `pods-${n}`]);
  }
  const children: ChildProcess[] = [];
  t.teardown(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  const dir = scratchDir('kp-e2e-');
  const routed = new Set<Netns>();
  const env: ProxyNode = {
    node,
    client,
    podsA,
    podsB,
    dir,
    async backend(ip, name) {
      const pods = ip.startsWith('10.244.1.') ? podsA : podsB;
      await pods.exec('ip', ['addr', 'add', `${ip}/24`, 'dev', 'eth0']);
      if (!routed.has(pods)) {
        await pods.exec('ip', ['route', 'add', 'default', 'via', pods === podsA ? '10.244.1.1' : '10.244.2.1']);
        routed.add(pods);
      }
      const child = spawn('ip', ['netns', 'exec', pods.name, process.execPath, '-e', SERVER, ip, name], { stdio: ['ignore', 'pipe', 'inherit'] });
      children.push(child);
      // No time limit of its own: node's start in a loaded sandbox guest has taken longer
      // than any fixed wait chosen here, and the test's own timeout still bounds a hang.
      const lines = createInterface({ input: child.stdout! });
      const [first] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(([code]) => [`exit ${code}`])])) as [string];
      if (first !== 'listening') throw new Error(`backend ${name} did not start (${first})`);
    },
    async get(ns, url) {
      // 5 s: one dropped SYN costs 1 s, a second 2 s more, and the sandbox kernel is slow under load.
      const r = await ns.tryExec('curl', ['-sS', '-m', '5', url]);
      return r.code === 0 ? r.stdout.trim() : undefined;
    },
    async getMany(ns, url, n) {
      const out: Array<string | undefined> = [];
      for (let i = 0; i < n; i++) out.push(await env.get(ns, url));
      return out;
    },
    async ipvsSave() {
      return (await node.exec('ipvsadm', ['-Sn'])).split('\n').filter(Boolean).sort();
    },
  };
  return env;
}

export interface RunningProxy {
  child: ChildProcess;
  /** Everything the process wrote to stderr (pino JSON lines). */
  log(): string;
  healthz: string;
  metrics: string;
  /** SIGTERM and wait for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** The environment without tap's loaders and settings, which would make the binary a tap child process. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')));
}

let portBase = 20000 + (process.pid % 1000) * 20;

export interface StartOptions {
  /**
   * How long the first sync may take, ms (default 60 s; a proxy without its Node object first
   * waits 30 s for it, as kube-proxy; under QEMU's emulation node itself starts in tens of seconds).
   */
  waitMs?: number;
  /** Node flags to run the binary with besides its own (heap-probe.ts's INSPECT_FLAG). */
  nodeFlags?: readonly string[];
}

/** How much of a proxy's log a failed test shows. */
const LOG_LINES_ON_FAILURE = 80;

/** Starts the binary on `env.node` and waits until its first sync completed (sync count ≥ 1). */
export async function startProxy(t: TapLike, env: Pick<ProxyNode, 'node'>, args: string[], { waitMs = 60_000, nodeFlags = [] }: StartOptions = {}): Promise<RunningProxy> {
  const hz = `127.0.0.1:${portBase++}`;
  const mx = `127.0.0.1:${portBase++}`;
  // tap injects its process-info loader (NODE_OPTIONS) into every child it sees spawned, which makes
  // the binary start 5× slower; a shell drops it before exec'ing node.
  // NodePorts on the node's network only, as operators often set
  // nodePortAddresses: without it the proxy also (rightly, as kube-proxy)
  // serves them on the pod-side addresses 10.244.x.1, which is not what
  // `plan` describes for the node's one declared address, 192.168.56.10. Tests may pass their own.
  const nodePorts = args.includes('--nodeport-addresses') ? [] : ['--nodeport-addresses', '192.168.56.0/24'];
  const [node, ...binary] = BINARY;
  const child = spawn('sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', node, ...nodeFlags, ...binary, '--netns', env.node.path, '--hostname-override', 'node-a', '--healthz-bind-address', hz, '--metrics-bind-address', mx, '-v', '2', '--logging-format=json', ...nodePorts, ...args], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: cleanEnv(),
  });
  let log = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
  const p: RunningProxy = {
    child,
    log: () => log,
    healthz: `http://${hz}`,
    metrics: `http://${mx}`,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // A failed wait says only what did not happen; the proxy's own log says why (a sync that failed, or never ran).
    if (!t.passing()) t.comment(`the proxy's last log lines:\n${log.split('\n').slice(-LOG_LINES_ON_FAILURE).join('\n')}`);
  });
  const end = Date.now() + waitMs;
  for (const delay of pollDelays()) {
    if (child.exitCode !== null) throw new Error(`kube-proxy-ipvs exited ${child.exitCode}:\n${log}`);
    const count = await syncCount(p).catch(() => 0);
    if (count >= 1) break;
    if (Date.now() > end) throw new Error(`kube-proxy-ipvs did not complete a sync in ${waitMs / 1000} s (pid ${child.pid}, exit ${child.exitCode}, ${log.length} bytes of log):\n${log.slice(-3000)}`);
    await sleep(delay);
  }
  return p;
}

export async function metricValue(p: RunningProxy, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${p.metrics}/metrics`)).text();
  // A name without labels also matches its first labelled series (the IPv4 one of a per-family metric).
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || (!name.includes('{') && l.startsWith(`${name}{`)));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** kubeproxy_netlink_operations_total by "family result" (ipvs/ipset/rtnl, or those given; ok/error), from /metrics. */
export async function netlinkOps(p: RunningProxy, families = ['ipvs', 'ipset', 'rtnl']): Promise<Record<string, number | undefined>> {
  const out: Record<string, number | undefined> = {};
  for (const family of families) {
    for (const result of ['ok', 'error']) out[`${family} ${result}`] = await metricValue(p, `kubeproxy_netlink_operations_total{family="${family}",result="${result}"}`);
  }
  return out;
}

export async function syncCount(p: RunningProxy): Promise<number> {
  return (await metricValue(p, 'kubeproxy_sync_proxy_rules_duration_seconds_count')) ?? 0;
}

/** Writes a manifest file (YAML text) into the env's folder. */
export function writeManifest(env: Pick<ProxyNode, 'dir'>, name: string, text: string): void {
  writeFileSync(join(env.dir, name), text);
}

/**
 * Waits for `fn` to hold. The default is long because a change lands at the
 * proxy's next sync, which in a busy user-mode-linux guest may queue behind
 * a periodic resync (the kernel read back, iptables-save run), which on a
 * loaded machine there takes tens of seconds. A wait that succeeds costs no
 * more for it.
 */
export async function until(what: string, fn: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  for (const delay of pollDelays()) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(delay);
  }
}

/**
 * The pauses between two looks at what a test waits for: 100 ms, growing by
 * half each time to a second. The sandbox kernel has one CPU, and each look
 * costs it (ipvsadm started through `ip netns exec`, or /metrics rendered by
 * the proxy): a look every 100 ms took most of that CPU from the proxy whose
 * sync the test was waiting for. A change seen late costs at most a second.
 */
function* pollDelays(): Generator<number> {
  for (let delay = 100; ; delay = Math.min(delay * 1.5, 1000)) yield delay;
}

/** What a health-check node port answers `ns` at `url`: the HTTP status, and the local endpoints it counts. */
export async function serviceHealth(ns: Netns, url: string): Promise<{ code: number; localEndpoints: number | undefined }> {
  const r = await ns.tryExec('curl', ['-sS', '-m', '5', '-w', '\\n%{http_code}', url]);
  const [body, code] = r.stdout.trim().split(/\n(?=\d+$)/);
  return { code: Number(code), localEndpoints: r.code === 0 ? (JSON.parse(body) as { localEndpoints: number }).localEndpoints : undefined };
}

/** A client in the node namespace holding one keep-alive connection to vip:80; each ask() is one request on it. */
const KEEPALIVE_CLIENT = `
const http = require('http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
require('readline').createInterface({ input: process.stdin }).on('line', () => {
  const req = http.get({ host: process.argv[1], port: 80, agent }, (res) => {
    let body = '';
    res.on('data', (d) => (body += d)).on('end', () => console.log(JSON.stringify({ body, port: req.socket.localPort, reused: req.reusedSocket })));
  });
  req.on('error', (e) => console.log(JSON.stringify({ error: e.message })));
});
`;

export interface KeepAliveAnswer {
  body?: string;
  /** The client's local port: the same one means the same TCP connection. */
  port?: number;
  reused?: boolean;
  error?: string;
}

export function keepAliveClient(t: TapLike, env: ProxyNode, vip: string): () => Promise<KeepAliveAnswer> {
  const client = spawn('ip', ['netns', 'exec', env.node.name, process.execPath, '-e', KEEPALIVE_CLIENT, vip], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.teardown(() => {
    client.kill('SIGKILL');
  });
  const lines = createInterface({ input: client.stdout! });
  return async () => {
    client.stdin!.write('go\n');
    const [line] = (await once(lines, 'line')) as [string];
    return JSON.parse(line) as KeepAliveAnswer;
  };
}

/** Runs `kube-proxy-ipvs --cleanup` on `env.node` with `args`; resolves with its exit code and stderr. */
export async function runCleanup(env: Pick<ProxyNode, 'node'>, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('sh', ['-c', 'unset NODE_OPTIONS; exec "$0" "$@"', ...BINARY, '--cleanup', '--netns', env.node.path, ...args], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: cleanEnv(),
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

/** Runs the binary to completion (it must not keep running; killed after 60 s), `prefix` before it (setpriv...): exit code and stderr. */
export async function runBinary(prefix: string[], args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('sh', ['-c', 'unset NODE_OPTIONS; exec "$@"', 'sh', ...prefix, ...BINARY, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: cleanEnv() });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stderr };
}

/** YAML for the node object named node-a with this InternalIP. */
export function nodeYaml(address: string): string {
  return `apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {addresses: [{type: InternalIP, address: ${address}}]}
`;
}

/** The node object of proxyNode()'s layout. */
export const NODE_YAML = nodeYaml('192.168.56.10');

/** A ClusterIP Service (NodePort with `nodePort`) of one TCP port, `port` → `targetPort`. */
export function serviceYaml(name: string, clusterIP: string, nodePort?: number, port = 80, targetPort = 8080): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: e2e}
spec:
  type: ${nodePort ? 'NodePort' : 'ClusterIP'}
  clusterIP: ${clusterIP}
  clusterIPs: [${clusterIP}]
  ports: [{name: http, protocol: TCP, port: ${port}, targetPort: ${targetPort}${nodePort ? `, nodePort: ${nodePort}` : ''}}]
`;
}

/** A NodePort Service, or a LoadBalancer one with `lbIP` (its ingress in the status), with the external parts given. */
export function externalServiceYaml(o: { name: string; clusterIP: string; nodePort: number; lbIP?: string; externalIP?: string; local?: boolean; healthCheckNodePort?: number }): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${o.name}, namespace: e2e}
spec:
  type: ${o.lbIP ? 'LoadBalancer' : 'NodePort'}
  clusterIP: ${o.clusterIP}
  clusterIPs: [${o.clusterIP}]
  externalTrafficPolicy: ${o.local ? 'Local' : 'Cluster'}
${o.healthCheckNodePort ? `  healthCheckNodePort: ${o.healthCheckNodePort}\n` : ''}${o.externalIP ? `  externalIPs: [${o.externalIP}]\n` : ''}  ports: [{name: http, protocol: TCP, port: 80, targetPort: 8080, nodePort: ${o.nodePort}}]
${o.lbIP ? `status: {loadBalancer: {ingress: [{ip: ${o.lbIP}}]}}\n` : ''}`;
}

/** The EndpointSlice of `service`: ready endpoints (on node-a unless said), serving `port`. */
export function sliceYaml(service: string, endpoints: Array<{ ip: string; node?: string }>, port = 8080): string {
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${service}-1, namespace: e2e, labels: {kubernetes.io/service-name: ${service}}}
addressType: IPv4
ports: [{name: http, protocol: TCP, port: ${port}}]
endpoints:
${endpoints.length ? endpoints.map((e) => `  - {addresses: [${e.ip}], conditions: {ready: true}, nodeName: ${e.node ?? 'node-a'}}`).join('\n') : '  []'}
`;
}
