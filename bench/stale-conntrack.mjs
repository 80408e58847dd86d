#!/usr/bin/env node
/**
 * The stale UDP conntrack cleanup at scale, side by side, on the host
 * kernel (conntrack over netlink needs no IPVS):
 *
 *   node bench/stale-conntrack.mjs [--services 10000] [--per-service 10] [--changed-every 10] [--runs 3]
 *     [--tool-sample 100] [--out FILE]
 *
 * A table of UDP services (ClusterIP:53, two serving endpoints each); every
 * --changed-every'th service lost a third endpoint, and a third of its
 * client entries still point there (the stale ones). Each service has
 * --per-service UDP entries and one TCP entry to that removed endpoint (TCP
 * is never touched). The entries are made by the conntrack tool
 * (`conntrack -R`) in a fresh network namespace for every run, and after
 * each run `conntrack -L` must show exactly the stale ones gone. The runs:
 *
 *  - the proxy's cleaner (kube-proxy-ipvs's StaleConntrackCleaner, the
 *    library's Conntrack client) given every service, as after a start or
 *    a resync, and given only the changed ones, as after an ordinary sync;
 *  - kube-proxy's way (bench/kube-proxy-conntrack-cleanup.c: its
 *    CleanStaleEntries with the netlink library it links, request by
 *    request), given every service, as it runs on every sync;
 *  - the conntrack tool, as kube-proxy ran it before it linked a netlink
 *    library: one `conntrack -D --orig-dst SERVICE --reply-src ENDPOINT
 *    -p udp` per removed endpoint of a changed service (it said
 *    `--dst-nat`, which also wants the entry's DST_NAT status bit: iptables
 *    sets it, entries made with `conntrack -I` have none; `--reply-src` is
 *    the same address test), as one shell loop over the first
 *    --tool-sample (100) of them, timed, then again under `strace -f -c`,
 *    both scaled to all (each process reads the same whole table).
 *
 * Writes the figures as JSON (--out, default bench/results/stale-conntrack.json);
 * bench/group-stale-conntrack.mjs turns them into BENCHMARKS.md's table.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';

import { StaleConntrackCleaner } from '../kube-proxy-ipvs/dist/lib/kernel/stale-conntrack.js';
import { endpointKey } from '../kube-proxy-ipvs/dist/lib/plan/kernel-state.js';
import { freshNetns } from './netns-util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: a } = parseArgs({
  options: {
    services: { type: 'string', default: '10000' },
    'per-service': { type: 'string', default: '10' },
    'changed-every': { type: 'string', default: '10' },
    'tool-sample': { type: 'string', default: '100' },
    runs: { type: 'string', default: '3' },
    out: { type: 'string', default: path.join(here, 'results', 'stale-conntrack.json') },
  },
});
const S = Number(a.services), E = Number(a['per-service']), EVERY = Number(a['changed-every']), RUNS = Number(a.runs);
if (!(S >= 1 && S <= 65_536 && E >= 3 && EVERY >= 1 && RUNS >= 1)) throw new Error('--services 1..65536, --per-service 3 or more, --changed-every and --runs 1 or more');
const t0 = Date.now();
const say = (s) => process.stderr.write(`stale-conntrack [${((Date.now() - t0) / 1000).toFixed(0)}s]: ${s}\n`);

// --- the table ---
const service = (i) => `10.96.${i >> 8}.${i & 255}`;
const endpoint = (i, k) => `10.${128 + (i >> 14)}.${(i >> 6) & 255}.${(i & 63) * 4 + k}`;
const client = (i) => `10.1.${i >> 8}.${i & 255}`;
const changed = (i) => i % EVERY === 0;
const serving = (i) => [endpoint(i, 0), endpoint(i, 1)];
/** Where entry j of service i was sent: a changed service's every third entry went to the endpoint since removed. */
const replySource = (i, j) => (changed(i) ? endpoint(i, j % 3) : endpoint(i, j % 2));

// Entries must outlive the slowest run (the tool's loop takes minutes at 10,000 services).
const LIFETIME = 6 * 3600;
const lines = [];
/** "SERVICE ENDPOINT" of each removed endpoint, and how many entries still point there. */
const staleCount = new Map();
for (let i = 0; i < S; i++) {
  for (let j = 0; j < E; j++) {
    const src = client(i), sport = 20_000 + j, ep = replySource(i, j);
    lines.push(`-I -p udp -s ${src} -d ${service(i)} --sport ${sport} --dport 53 -r ${ep} -q ${src} --reply-port-src 53 --reply-port-dst ${sport} -t ${LIFETIME}`);
    const key = `${service(i)} ${ep}`;
    if (!serving(i).includes(ep)) staleCount.set(key, (staleCount.get(key) ?? 0) + 1);
  }
  const src = client(i);
  lines.push(`-I -p tcp -s ${src} -d ${service(i)} --sport 30000 --dport 53 -r ${endpoint(i, 2)} -q ${src} --reply-port-src 53 --reply-port-dst 30000 -t ${LIFETIME} --state ESTABLISHED`);
}
const staleKeys = new Set(staleCount.keys());
const stale = [...staleCount.values()].reduce((x, y) => x + y, 0);
const total = S * (E + 1);

const work = mkdtempSync(path.join(os.tmpdir(), 'stale-conntrack-'));
const entriesFile = path.join(work, 'entries');
writeFileSync(entriesFile, lines.join('\n') + '\n');
const servicesFile = path.join(work, 'services');
writeFileSync(servicesFile, Array.from({ length: S }, (_, i) => [service(i), ...serving(i)].join(' ')).join('\n') + '\n');
const targetOf = (i) => ({ address: service(i), port: 53, endpoints: new Set(serving(i).map((ep) => endpointKey(ep, 53))) });
const allTargets = new Map([['inet', Array.from({ length: S }, (_, i) => targetOf(i))]]);
const changedTargets = new Map([['inet', Array.from({ length: S }, (_, i) => i).filter(changed).map(targetOf)]]);

const probe = path.join(here, '.build', 'kube-proxy-conntrack-cleanup');
mkdirSync(path.dirname(probe), { recursive: true });
execFileSync('cc', ['-O2', '-Wall', '-o', probe, path.join(here, 'kube-proxy-conntrack-cleanup.c')]);

const inNs = (ns, argv, opts = {}) => spawnSync('ip', ['netns', 'exec', ns.name, ...argv], { maxBuffer: 1 << 30, encoding: 'utf8', ...opts });

/** A fresh namespace holding the table, checked with `conntrack -C`. */
function loaded() {
  const ns = freshNetns('stalect');
  const r = inNs(ns, ['conntrack', '-R', entriesFile]);
  const count = Number(inNs(ns, ['conntrack', '-C']).stdout.trim());
  if (r.status !== 0 || count !== total) {
    ns.remove();
    throw new Error(`conntrack -R made ${count} of ${total} entries (exit ${r.status}): ${r.stderr.slice(0, 300)}; is nf_conntrack_max (${readFileSync('/proc/sys/net/netfilter/nf_conntrack_max', 'utf8').trim()}) large enough?`);
  }
  return ns;
}

/** What `conntrack -L` shows afterwards: exactly the stale entries gone, TCP untouched. */
function check(ns, what) {
  const out = inNs(ns, ['conntrack', '-L']).stdout.split('\n').filter(Boolean);
  let udp = 0, tcp = 0, left = 0;
  for (const l of out) {
    const dst = /dst=(\S+)/.exec(l)?.[1];
    const replySrc = / src=(\S+).* src=(\S+)/.exec(l)?.[2];
    if (l.startsWith('udp')) {
      udp++;
      if (staleKeys.has(`${dst} ${replySrc}`)) left++;
    } else if (l.startsWith('tcp')) tcp++;
  }
  if (left !== 0 || udp !== S * E - stale || tcp !== S) throw new Error(`${what}: conntrack -L shows ${udp} UDP entries (${left} stale) and ${tcp} TCP, not ${S * E - stale} UDP (0 stale) and ${S} TCP`);
}

async function ours(targets, what) {
  const ns = loaded();
  try {
    const cleaner = new StaleConntrackCleaner({ netns: ns.path }, pino({ level: 'silent' }));
    // Its socket open and its code warm, as in a running proxy: a first clean of an address nothing was sent to.
    await cleaner.clean(new Map([['inet', [{ address: '192.0.2.1', port: 9, endpoints: new Set([endpointKey('192.0.2.2', 9)]) }]]]));
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    const r = await cleaner.clean(targets);
    const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
    const used = process.cpuUsage(cpu);
    cleaner.close();
    if (!r || r.deleted !== stale || r.failed !== 0) throw new Error(`${what}: deleted ${r?.deleted} of ${stale} (${r?.failed} failed)`);
    check(ns, what);
    return { listed: r.listed, deleted: r.deleted, ...r.netlink, wallMs, cpuMs: (used.user + used.system) / 1000 };
  } finally {
    ns.remove();
  }
}

function kubeProxy() {
  const ns = loaded();
  try {
    const r = inNs(ns, [probe, '4', servicesFile]);
    if (r.status !== 0) throw new Error(`kube-proxy's way exited ${r.status}: ${r.stderr}`);
    const x = JSON.parse(r.stdout);
    if (x.deleted !== stale) throw new Error(`kube-proxy's way deleted ${x.deleted} of ${stale}`);
    check(ns, "kube-proxy's way");
    return x;
  } finally {
    ns.remove();
  }
}

const loopOver = (file) => `while read s e; do conntrack -D --orig-dst "$s" --reply-src "$e" -p udp >/dev/null 2>&1 || :; done < ${file}`;
const SAMPLE = Math.min(Number(a['tool-sample']), staleKeys.size);

/**
 * The tool's loop over the first SAMPLE removed endpoints, timed, then again
 * under strace for its system calls (strace's overhead kept out of the
 * time); both scaled to every removed endpoint: each process reads the same
 * whole table, so each costs about the same (a full loop at 10,000 services
 * takes most of an hour on a loaded machine).
 */
function tool() {
  let ns = loaded();
  try {
    const sampleFile = path.join(work, 'pairs-sample');
    writeFileSync(sampleFile, [...staleKeys].slice(0, SAMPLE).join('\n') + '\n');
    const start = process.hrtime.bigint();
    const r = inNs(ns, ['bash', '-c', loopOver(sampleFile)]);
    const sampleMs = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`the conntrack loop exited ${r.status}`);
    const left = Number(inNs(ns, ['conntrack', '-C']).stdout.trim());
    const gone = [...staleKeys].slice(0, SAMPLE).reduce((n, k) => n + staleCount.get(k), 0);
    if (left !== total - gone) throw new Error(`conntrack -D of ${SAMPLE} removed endpoints left ${left} entries, not ${total - gone}`);
    if (SAMPLE === staleKeys.size) check(ns, 'conntrack -D');
    ns.remove();
    ns = loaded();
    const summary = path.join(work, 'strace');
    const st = inNs(ns, ['strace', '-f', '-c', '-o', summary, '-e', 'trace=socket,sendto,sendmsg,recvfrom,recvmsg', 'bash', '-c', loopOver(sampleFile)]);
    if (st.status !== 0) throw new Error(`strace of the conntrack loop exited ${st.status}: ${st.stderr.slice(0, 300)}`);
    const calls = {};
    for (const l of readFileSync(summary, 'utf8').split('\n')) {
      const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(l);
      if (m) calls[m[2]] = Math.round((Number(m[1]) * staleKeys.size) / SAMPLE);
    }
    return { processes: staleKeys.size, sampled: SAMPLE, sampleMs, wallMs: (sampleMs * staleKeys.size) / SAMPLE, calls };
  } finally {
    ns.remove();
  }
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const result = {
  kernel: os.release(),
  cores: os.cpus().length,
  // The machine's load when the runs started and ended: on a shared machine wall times stretch with it, CPU times less.
  loadAverage: { start: os.loadavg()[0] },
  services: S, udpPerService: E, tcpPerService: 1, changedServices: changedTargets.get('inet').length, entries: total, stale, runs: RUNS,
  oursAll: [], oursChanged: [], kubeProxy: [], tool: undefined,
};
try {
  say(`${S} UDP services, ${total} entries (${stale} stale, in ${result.changedServices} changed services); ${RUNS} run(s) each`);
  for (let run = 1; run <= RUNS; run++) {
    say(`run ${run}: the proxy's cleaner, every service`);
    result.oursAll.push(await ours(allTargets, "the proxy's cleaner, every service"));
    say(`run ${run}: the proxy's cleaner, the changed services`);
    result.oursChanged.push(await ours(changedTargets, "the proxy's cleaner, the changed services"));
    say(`run ${run}: kube-proxy's way`);
    result.kubeProxy.push(kubeProxy());
    const last = (k) => result[k].at(-1);
    say(`run ${run}: wall ms: cleaner (every service) ${last('oursAll').wallMs.toFixed(0)}, (changed) ${last('oursChanged').wallMs.toFixed(0)}, kube-proxy's way ${last('kubeProxy').wallMs.toFixed(0)}`);
  }
  say(`conntrack -D, the first ${SAMPLE} of ${staleKeys.size} processes (then again under strace)`);
  result.tool = tool();
  result.loadAverage.end = os.loadavg()[0];
  result.medianWallMs = {
    oursAll: median(result.oursAll.map((x) => x.wallMs)),
    oursChanged: median(result.oursChanged.map((x) => x.wallMs)),
    kubeProxy: median(result.kubeProxy.map((x) => x.wallMs)),
    tool: result.tool.wallMs,
  };
  mkdirSync(path.dirname(path.resolve(a.out)), { recursive: true });
  writeFileSync(a.out, JSON.stringify(result, null, 2) + '\n');
  say(`wrote ${a.out}: ${JSON.stringify(result.medianWallMs)}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
