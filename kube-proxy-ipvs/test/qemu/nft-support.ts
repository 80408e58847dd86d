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
import { mkdtempSync, mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAtTeardown, type TapLike } from '../../../test/support/connection.js';
import type { Netns } from '../../../test/support/netns.js';
import { podNetworks, type Cluster } from '../support/traffic.js';

export { NODE_IP, PODS } from '../support/traffic.js';
export const CLIENT_IP = '192.168.10.2';

/** An httpd on `port` in `ns` whose /cgi-bin/who says `name` and the peer's address. */
export async function httpd(t: TapLike, ns: Netns, name: string, port = 8080): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), `httpd-${name}-`));
  mkdirSync(join(root, 'cgi-bin'));
  const script = join(root, 'cgi-bin', 'who');
  writeFileSync(script, `#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n%s from %s' '${name}' "$REMOTE_ADDR"\n`);
  chmodSync(script, 0o755);
  const child = spawn('ip', ['netns', 'exec', ns.name, 'busybox', 'httpd', '-f', '-p', `0.0.0.0:${port}`, '-h', root], { stdio: 'ignore' });
  killAtTeardown(t, child);
  // Listening once it answers.
  for (let i = 0; i < 200; i++) {
    if ((await ns.tryExec('curl', ['-s', '-o', '/dev/null', '-m', '2', `http://127.0.0.1:${port}/cgi-bin/who`])).code === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`httpd ${name} did not start`);
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

/** A set's elements as `nft -j list set` gives them, sorted. */
export async function nftSet(ns: Netns, family: 'ip' | 'ip6', name: string): Promise<unknown[]> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'set', family, 'kube-proxy-ipvs', name])) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
  return (out.nftables.find((o) => o.set)?.set?.elem ?? []).map((e) => JSON.stringify(e)).sort();
}

/** `nft -j list ruleset`'s tables, as "family name". */
export async function nftTables(ns: Netns): Promise<string[]> {
  const out = JSON.parse(await ns.exec('nft', ['-j', 'list', 'tables'])) as { nftables: Array<{ table?: { family: string; name: string } }> };
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
