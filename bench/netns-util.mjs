/**
 * Fresh network namespaces, timed commands in them, and what the kernel
 * holds there as the reference tools print it (ipvsadm -Sn, ipset list -t,
 * ip addr) — for the controller benchmarks, inside the IPVS sandbox.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A new namespace with lo up; returns { name, path, remove() }. The name
 * has a random part: pids repeat from one boot of the sandbox to the next,
 * and a run killed before its cleanup leaves its names behind.
 */
export function freshNetns(prefix) {
  const name = `${prefix}-${process.pid}-${randomBytes(3).toString('hex')}`;
  execFileSync('ip', ['netns', 'add', name]);
  execFileSync('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  return { name, path: `/run/netns/${name}`, remove: () => spawnSync('ip', ['netns', 'delete', name]) };
}

/**
 * Runs argv in the namespace under /usr/bin/time; wall, user and system
 * time (10 ms resolution, process start included), minor page faults, peak
 * resident set and stdout.
 */
export function timed(ns, argv, input) {
  const tf = path.join(os.tmpdir(), `bench-time-${process.pid}.txt`);
  const r = spawnSync('ip', ['netns', 'exec', ns, '/usr/bin/time', '-f', '%e %U %S %R %M', '-o', tf, ...argv], { input, maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${String(r.stdout).slice(0, 300)} ${String(r.stderr).slice(0, 1000)}`);
  const [wall, user, sys, minorFaults, maxRssKb] = readFileSync(tf, 'utf8').trim().split('\n').pop().split(/\s+/).map(Number);
  rmSync(tf, { force: true });
  return { wallMs: wall * 1000, userUs: user * 1e6, systemUs: sys * 1e6, minorFaults, maxRssKb, stdout: String(r.stdout) };
}

const run = (ns, argv) => execFileSync('ip', ['netns', 'exec', ns, ...argv], { maxBuffer: 1 << 30 }).toString();

/**
 * What the kernel holds, read with the reference tools: IPVS services and
 * destinations (ipvsadm -Sn), entries per ipset (ipset list -t), IPv4
 * addresses on kube-ipvs0 (ip addr).
 */
export function kernelCounts(ns) {
  let services = 0, destinations = 0;
  for (const l of run(ns, ['ipvsadm', '-Sn']).split('\n')) {
    if (l.startsWith('-A ')) services++;
    else if (l.startsWith('-a ')) destinations++;
  }
  const sets = {};
  let name;
  for (const l of run(ns, ['ipset', 'list', '-t']).split('\n')) {
    const n = /^Name: (\S+)/.exec(l);
    if (n) name = n[1];
    const e = /^Number of entries: (\d+)/.exec(l);
    if (e && name) sets[name] = Number(e[1]);
  }
  const ipsetEntries = Object.values(sets).reduce((a, b) => a + b, 0);
  const link = spawnSync('ip', ['-n', ns, '-4', '-o', 'addr', 'show', 'dev', 'kube-ipvs0'], { maxBuffer: 1 << 30 });
  const addresses = link.status === 0 ? String(link.stdout).split('\n').filter((l) => l.includes(' inet ')).length : 0;
  return { services, destinations, ipsetEntries, sets, addresses };
}

/** Throws unless the kernel holds exactly the planned counts. */
export function expectKernel(ns, counts, who) {
  const k = kernelCounts(ns);
  const want = { services: counts.virtualServers, destinations: counts.realServers, ipsetEntries: counts.ipsetEntries, addresses: counts.addresses };
  const got = { services: k.services, destinations: k.destinations, ipsetEntries: k.ipsetEntries, addresses: k.addresses };
  if (JSON.stringify(want) !== JSON.stringify(got)) throw new Error(`${who}: the kernel holds ${JSON.stringify(got)} (sets ${JSON.stringify(k.sets)}), expected ${JSON.stringify(want)}`);
  return k;
}
