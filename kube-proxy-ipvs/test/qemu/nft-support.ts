/**
 * For the nftables backend's kernel tests in the QEMU kernel (the UML one
 * has no nf_tables for ip/ip6): a node with two pod networks and a client,
 * the pods answering with busybox's httpd (a node process per pod costs a
 * minute to start under emulation), and views of what nft, iptables-save
 * and ipset show.
 *
 *   client 192.168.10.2 ── 192.168.10.1 node (IPVS, kube-ipvs0) 10.244.1.1 ── 10.244.1.10 pod be1 (on node-a, local)
 *                                                               10.244.2.1 ── 10.244.2.11 pod be2 (on node-b)
 *
 * GET /cgi-bin/who answers "NAME from CLIENT-ADDRESS" (what the pod saw).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { killAtTeardown, type TapLike } from '../../../test/support/connection.js';
import type { Netns } from '../../../test/support/netns.js';
import type { PlanOutput } from '../../lib/plan/plan-json.js';
import { ipvsadmSave, kubeIpvs0Addresses } from '../support/controller-kernel.js';
import { planIpvsadm } from '../support/proxy-plan.js';
import { podNetworks, type Cluster } from '../support/traffic.js';
import { scratchDir } from '../support/scratch.js';

export { NODE_IP, PODS } from '../support/traffic.js';
export const CLIENT_IP = '192.168.10.2';

/** An httpd on `address`:`port` in `ns` whose /cgi-bin/who says `name` and the peer's address. */
export async function httpd(t: TapLike, ns: Netns, name: string, port = 8080, address = '0.0.0.0'): Promise<void> {
  const root = scratchDir(`httpd-${name}-`);
  mkdirSync(join(root, 'cgi-bin'));
  const script = join(root, 'cgi-bin', 'who');
  writeFileSync(script, `#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n%s from %s' '${name}' "$REMOTE_ADDR"\n`);
  chmodSync(script, 0o755);
  const child = spawn('ip', ['netns', 'exec', ns.name, 'busybox', 'httpd', '-f', '-p', `${address}:${port}`, '-h', root], { stdio: 'ignore' });
  killAtTeardown(t, child);
  // Listening once it answers.
  const self = address === '0.0.0.0' ? '127.0.0.1' : address;
  for (let i = 0; i < 200; i++) {
    if ((await ns.tryExec('curl', ['-s', '-o', '/dev/null', '-m', '2', `http://${self}:${port}/cgi-bin/who`])).code === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`httpd ${name} did not start`);
}

/**
 * A line server on `port` in `ns` (busybox nc, a shell per connection): it
 * answers each line with `name`, on the same connection for as long as the
 * client keeps it.
 */
export async function lineServer(t: TapLike, ns: Netns, name: string, port: number): Promise<void> {
  const script = join(scratchDir(`echo-${name}-`), 'answer');
  writeFileSync(script, `#!/bin/sh\nwhile read line; do echo '${name}'; done\n`);
  chmodSync(script, 0o755);
  const child = spawn('ip', ['netns', 'exec', ns.name, 'busybox', 'nc', '-ll', '-p', String(port), '-e', script], { stdio: 'ignore' });
  killAtTeardown(t, child);
  for (let i = 0; i < 200; i++) {
    if ((await ns.tryExec('busybox', ['nc', '-w', '2', '127.0.0.1', String(port)], 'hello\n')).stdout.trim() === name) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`line server ${name} did not start`);
}

/** One TCP connection held open from `ns` (busybox nc): each ask() sends a line and resolves with the answer. */
export function lineConnection(t: TapLike, ns: Netns, host: string, port: number): { ask(): Promise<string> } {
  const child = spawn('ip', ['netns', 'exec', ns.name, 'busybox', 'nc', host, String(port)], { stdio: ['pipe', 'pipe', 'ignore'] });
  killAtTeardown(t, child);
  const lines = createInterface({ input: child.stdout! });
  return {
    async ask() {
      child.stdin!.write('ping\n');
      const answer = await Promise.race([
        once(lines, 'line').then(([l]) => String(l)),
        once(child, 'exit').then(() => 'connection closed'),
        sleep(30_000).then(() => 'no answer within 30 s'),
      ]);
      return answer;
    },
  };
}

/** The node, client and pods of ../support/traffic.ts, the pods answering with httpd. */
export async function nftCluster(t: TapLike): Promise<Cluster> {
  const cluster = await podNetworks(t);
  await httpd(t, cluster.pods.be1, 'be1');
  await httpd(t, cluster.pods.be2, 'be2');
  return cluster;
}

/** One GET of /cgi-bin/who from `ns`: the answer, or the curl exit code (7 refused, 28 timed out). */
export async function who(ns: Netns, hostPort: string): Promise<string | number> {
  const r = await ns.tryExec('curl', ['-sS', '-m', '3', `http://${hostPort}/cgi-bin/who`]);
  return r.code === 0 ? r.stdout : r.code;
}

/** `n` GETs, the distinct answers sorted. */
export async function whoMany(ns: Netns, hostPort: string, n: number): Promise<Array<string | number>> {
  const out = new Set<string | number>();
  for (let i = 0; i < n; i++) out.add(await who(ns, hostPort));
  return [...out].sort();
}

interface NftJson {
  nftables: Array<{ table?: { family: string; name: string }; set?: { family: string; table: string; name: string; elem?: unknown[] } }>;
}

/** A set's elements as nft's JSON gives them, each as JSON text, sorted. */
const elementsOf = (set: { elem?: unknown[] } | undefined) => (set?.elem ?? []).map((e) => JSON.stringify(e)).sort();

/** A set's elements as `nft -j list set` gives them, sorted. */
export async function nftSet(ns: Netns, family: 'ip' | 'ip6', name: string): Promise<unknown[]> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'set', family, 'kube-proxy-ipvs', name])) as NftJson;
  return elementsOf(out.nftables.find((o) => o.set)?.set);
}

/** An element of nft's JSON as nft writes it in text (and `plan` prints it): `10.96.0.10 . tcp . 80`, `10.0.0.0/8`. */
function elementText(e: unknown): string {
  const part = (p: unknown): string => {
    if (typeof p !== 'object' || p === null) return String(p);
    const o = p as { prefix?: { addr: string; len: number }; range?: unknown[] };
    if (o.prefix) return `${o.prefix.addr}/${o.prefix.len}`;
    if (o.range) return o.range.map(part).join('-');
    return JSON.stringify(p);
  };
  const concat = typeof e === 'object' && e !== null ? (e as { concat?: unknown[] }).concat : undefined;
  return concat ? concat.map(part).join(' . ') : part(e);
}

/**
 * Our ip table as nft shows it: every table ("family name", from `nft -j
 * list ruleset`), the table's sets with their elements in nft's text
 * (from the same listing), and its chains with their rules as `nft list
 * table` prints them (a base chain's type line left out).
 */
export async function nftTableView(ns: Netns): Promise<{ tables: string[]; sets: Record<string, string[]>; chains: Record<string, string[]> }> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'ruleset'])) as NftJson;
  const sets: Record<string, string[]> = {};
  for (const { set } of out.nftables) if (set && set.family === 'ip' && set.table === 'kube-proxy-ipvs') sets[set.name] = (set.elem ?? []).map(elementText).sort();
  const chains: Record<string, string[]> = {};
  let chain: string[] | undefined;
  for (const line of (await ns.exec('nft', ['list', 'table', 'ip', 'kube-proxy-ipvs'])).split('\n')) {
    const start = /^\tchain (\S+) \{$/.exec(line);
    if (start) chains[start[1]] = chain = [];
    else if (line === '\t}') chain = undefined;
    else if (chain && line.trim() && !line.trim().startsWith('type ')) chain.push(line.trim());
  }
  return { tables: out.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort(), sets, chains };
}

/** Compares what ipvsadm, ip and nft show in `ns` with `kube-proxy-ipvs plan --ipvs-rules-backend=nftables`'s output. */
export async function kernelMatchesNftPlan(t: TapLike & { same(a: unknown, b: unknown, msg: string): void }, ns: Netns, plan: PlanOutput, what: string): Promise<void> {
  t.same(await ipvsadmSave(ns), planIpvsadm(plan), `${what}: ipvsadm -Sn is the plan's virtual and real servers`);
  t.same(await kubeIpvs0Addresses(ns), [...plan.boundAddresses].sort(), `${what}: kube-ipvs0 holds the plan's addresses`);
  const planned = plan.nftables?.['ip kube-proxy-ipvs'];
  const view = await nftTableView(ns);
  t.same(Object.keys(plan.nftables ?? {}).filter((table) => !view.tables.includes(table)), [], `${what}: nft lists the plan's tables`);
  t.same(
    { sets: view.sets, chains: view.chains },
    {
      sets: Object.fromEntries(Object.entries(planned?.sets ?? {}).map(([name, s]) => [name, [...s.elements].sort()])),
      chains: Object.fromEntries(Object.entries(planned?.chains ?? {}).map(([name, c]) => [name, c.rules])),
    },
    `${what}: nft lists the plan's sets with their elements and its chains with their rules, in order`,
  );
}

/** `nft -j list tables`, as "family name". */
export async function nftTables(ns: Netns): Promise<string[]> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'tables'])) as NftJson;
  return out.nftables.flatMap((o) => (o.table ? [`${o.table.family} ${o.table.name}`] : [])).sort();
}

/** Every rule handle of our ip table, chain by chain: equal before and after means no rule was rewritten. */
export async function ruleHandles(ns: Netns): Promise<string> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'table', 'ip', 'kube-proxy-ipvs'])) as { nftables: Array<{ rule?: { chain: string; handle: number } }> };
  return out.nftables.flatMap((o) => (o.rule ? [`${o.rule.chain}/${o.rule.handle}`] : [])).join(' ');
}

/** What is left of the iptables backend: KUBE-* lines of both iptables flavours, and kube-proxy ipsets. */
export async function iptablesLeftovers(ns: Netns): Promise<string[]> {
  const out: string[] = [];
  for (const save of ['iptables-save', 'ip6tables-save', 'iptables-legacy-save', 'ip6tables-legacy-save']) {
    const r = await ns.tryExec(save, []);
    if (r.code === 0) out.push(...r.stdout.split('\n').filter((l) => l.includes('KUBE-')).map((l) => `${save}: ${l}`));
  }
  const sets = await ns.tryExec('ipset', ['list', '-n']);
  if (sets.code === 0) out.push(...sets.stdout.split('\n').filter((l) => l.startsWith('KUBE-')).map((l) => `ipset: ${l}`));
  return out;
}
