/**
 * `npm start`'s guest half (scripts/demo/guest.sh), run as the product's
 * main job runs it, for a few seconds: it must show the IPVS table of the
 * examples/ manifests, requests answered by both api pods through the
 * ClusterIP and by both web pods through the NodePort, healthz, and then
 * stop by itself, exit 0 and remove the namespaces it made.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cleanEnv } from '../support/proxy-env.js';
import { scratchDir } from '../support/scratch.js';

/** The text under each "== title" header the demo prints. */
function sections(out: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of out.split(/^== /m).slice(1)) {
    const nl = part.indexOf('\n');
    map.set(part.slice(0, nl).trim(), part.slice(nl + 1));
  }
  return map;
}

function section(all: Map<string, string>, prefix: string): string {
  const key = [...all.keys()].find((k) => k.startsWith(prefix));
  if (key === undefined) throw new Error(`the demo printed no "${prefix}" section; it printed: ${[...all.keys()].join(' | ')}`);
  return all.get(key)!;
}

t.test('the demo guest shows the table and answers through a ClusterIP and a NodePort, then exits cleanly', async (t) => {
  const log = join(scratchDir('kp-demo-'), 'proxy.log');
  const child = spawn('bash', ['scripts/demo/guest.sh'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cleanEnv(), IPVS_NETLINK_DEMO_DURATION: '5', IPVS_NETLINK_DEMO_LOG: log },
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0, `exits 0 after its duration${code === 0 ? '' : `\n${out}\n--- proxy log ---\n${readFileSync(log, 'utf8').slice(-3000)}`}`);

  const s = sections(out);
  const table = section(s, 'IPVS table in the node');
  t.match(table, /^TCP {2}10\.96\.100\.10:80 rr$/m, 'the api ClusterIP virtual server');
  t.match(table, /^TCP {2}192\.168\.56\.10:30080 rr$/m, 'the web NodePort virtual server');
  for (const rs of ['10.244.1.10', '10.244.2.11', '10.244.1.20', '10.244.2.21']) t.match(table, new RegExp(`^ {2}-> ${rs.replace(/\./g, '\\.')}:8080 +Masq +1 `, 'm'), `real server ${rs}`);
  t.match(section(s, 'addresses on kube-ipvs0'), /10\.96\.100\.10\/32/);

  const viaClusterIP = section(s, 'requests from the node to the api ClusterIP').trim().split('\n');
  t.same([...new Set(viaClusterIP)].sort(), ['api-pod-1 10.244.1.10', 'api-pod-2 10.244.2.11'], 'four requests through the ClusterIP, answered by both api pods');
  const viaNodePort = section(s, 'requests from an outside client to the web NodePort').trim().split('\n');
  t.same([...new Set(viaNodePort)].sort(), ['web-pod-1 10.244.1.20', 'web-pod-2 10.244.2.21'], 'four requests through the NodePort, answered by both web pods');
  t.match(section(s, 'healthz and a few metrics'), /"lastUpdated"[\s\S]*^kubeproxy_ipvs_virtual_servers 3$/m, 'healthz and the programmed-state gauges');
  t.match(out, /running for 5s/);
  t.match(out, /demo: stopped; namespaces removed/, 'it says it cleaned up');
  const left = await new Promise<string>((resolve) => {
    const ip = spawn('ip', ['netns', 'list'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let text = '';
    ip.stdout!.setEncoding('utf8').on('data', (d: string) => (text += d));
    ip.on('exit', () => resolve(text));
  });
  t.notMatch(left, /kpdemo-/, 'and it did: no demo namespace is left');
  t.match(readFileSync(log, 'utf8'), /"kube-proxy-ipvs stopped; the programmed state is left in place"/, 'the proxy stopped on its SIGTERM, not killed');
});
