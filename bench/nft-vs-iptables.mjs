#!/usr/bin/env node
/**
 * The proxy's two rules backends side by side: iptables + ipset
 * (kube-proxy's KUBE-* chains and ipsets) and nftables (one table), at
 * 10,000 Services, on this host's kernel: the rules part alone, which
 * needs no IPVS (IPVS and kube-ipvs0 are programmed the same way whichever
 * backend is chosen), each run in a fresh network namespace, through the
 * controller's own code (known objects → desired state → planner →
 * applier; the reader for the read-back). Measured:
 *
 * - cold sync: every set entry (and, for iptables, the restore) into an
 *   empty namespace;
 * - one Service change: a Service with 10 endpoints added, then deleted;
 * - kernel read-back: what a resync reads (the kube-proxy ipsets and
 *   iptables-save; or the tables, one ruleset read each).
 *
 *   node bench/nft-vs-iptables.mjs [--size small|full] [--runs N] [--results DIR] [--markdown FILE]
 *
 * Writes DIR/nft-vs-iptables[-small].json; with --markdown, replaces the
 * section between its own markers in FILE (BENCHMARKS.md).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Ipset, Nftables } from '../dist/lib/index.js';
import { freshNetns } from './netns-util.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const proxyDist = path.join(here, '..', 'kube-proxy-ipvs', 'dist', 'lib');
const { KnownObjects } = await import(path.join(proxyDist, 'desired', 'known-objects.js'));
const { defaultProxyConfig } = await import(path.join(proxyDist, 'kubernetes', 'model.js'));
const { Mirror } = await import(path.join(proxyDist, 'plan', 'mirror.js'));
const { plan } = await import(path.join(proxyDist, 'plan', 'planner.js'));
const { mergeScope } = await import(path.join(proxyDist, 'plan', 'scope.js'));
const { Applier } = await import(path.join(proxyDist, 'kernel', 'applier.js'));
const { IptablesRunner, DEFAULT_IPTABLES } = await import(path.join(proxyDist, 'kernel', 'iptables-runner.js'));
const { execIn } = await import(path.join(proxyDist, 'kernel', 'exec.js'));
const { readKernel } = await import(path.join(proxyDist, 'kernel', 'kernel-reader.js'));

const { values: a } = parseArgs({
  options: { size: { type: 'string', default: 'full' }, runs: { type: 'string' }, results: { type: 'string' }, markdown: { type: 'string' } },
});
const small = a.size === 'small';
const SERVICES = small ? 200 : 10_000;
const RUNS = Number(a.runs ?? (small ? 1 : 3));
const ENDPOINTS = 10;
const t0 = Date.now();
const say = (s) => process.stderr.write(`nft-vs-iptables [${((Date.now() - t0) / 1000).toFixed(0)}s]: ${s}\n`);

const node = { name: 'node-a', addresses: ['192.168.1.10'], families: ['inet'] };

/** Service i: ClusterIP 10.96.x.y:80, every fifth a NodePort; 10 endpoints, the first on this node (a loop-back entry). */
function objects(i) {
  const clusterIP = `10.96.${i >> 8}.${i & 255}`;
  const nodePort = i % 5 === 0 ? 30000 + (i / 5) % 2768 : undefined;
  const service = {
    apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'bench' },
    spec: { type: nodePort ? 'NodePort' : 'ClusterIP', clusterIP, ports: [{ name: 'p', protocol: 'TCP', port: 80, targetPort: 8080, ...(nodePort ? { nodePort } : {}) }] },
  };
  const endpoints = Array.from({ length: ENDPOINTS }, (_, k) => ({
    addresses: [`10.${100 + k}.${i >> 8}.${i & 255}`], conditions: { ready: true }, nodeName: k === 0 ? 'node-a' : 'node-b',
  }));
  const slice = {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
    metadata: { name: `svc-${i}-x`, namespace: 'bench', labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    endpoints, ports: [{ name: 'p', protocol: 'TCP', port: 8080 }],
  };
  return { service, slice };
}

const silent = { warn: () => undefined, debug: () => undefined, info: () => undefined };
const rulesOps = (ops) => ops.filter((o) => o.kind === 'ipset' || o.kind === 'iptables' || o.kind === 'nftables');

/** One backend's run in a fresh namespace: cold sync, one Service added and deleted, a read-back. */
async function runBackend(backend) {
  const ns = freshNetns(`bench-${backend}`);
  const opts = { netns: ns.path };
  const nft = backend === 'nftables';
  const client = nft ? await Nftables.open(opts) : await Ipset.open(opts);
  const clients = nft ? { nftables: client } : { ipset: client };
  const iptables = new IptablesRunner(execIn(ns.path), DEFAULT_IPTABLES);
  const applier = new Applier(clients, iptables, silent);
  const known = new KnownObjects(node, defaultProxyConfig({ rulesBackend: backend }));
  for (let i = 1; i <= SERVICES; i++) {
    const { service, slice } = objects(i);
    known.upsertService(service);
    known.upsertEndpointSlice(slice);
  }
  const mirror = new Mirror();
  const timed = async (ops) => {
    const before = client.counters();
    const cpu = process.cpuUsage();
    const start = performance.now();
    const report = await applier.apply(ops);
    const ms = performance.now() - start;
    // This process's CPU: user (JavaScript, the addon) and system (the kernel doing the work, in the sending thread); iptables' programs are not in it.
    const { user, system } = process.cpuUsage(cpu);
    if (report.failed.length > 0) throw new Error(`${backend}: ${report.failed[0].error.message}`);
    mirror.record(report.applied);
    const after = client.counters();
    return { ms, userMs: user / 1000, systemMs: system / 1000, messages: after.messagesSent - before.messagesSent, sendmsg: after.sendmsgCalls - before.sendmsgCalls, programs: ops.filter((o) => o.kind === 'iptables').length * 2 };
  };
  try {
    const coldOps = rulesOps(plan(known.desired, mirror));
    const elements = [...known.desired.ipsets.values()].reduce((n, s) => n + s.entries.size, 0);
    const cold = { ...(await timed(coldOps)), elements };
    // The read-back of the last write (a save) runs behind the sync: not counted in it, waited for here.
    await iptables.settled('inet');
    const { service, slice } = objects(SERVICES + 1);
    const addScope = known.upsertService(service);
    mergeScope(addScope, known.upsertEndpointSlice(slice));
    const add = await timed(rulesOps(plan(known.desired, mirror, { scope: addScope })));
    const delScope = known.deleteService('bench', service.metadata.name);
    const del = await timed(rulesOps(plan(known.desired, mirror, { scope: delScope })));
    await iptables.settled('inet');
    // What a resync reads: the sets (or tables), and for iptables whether the chains are as written.
    const cpu = process.cpuUsage();
    const start = performance.now();
    const read = await readKernel({ ...clients, ipvs: { dump: async () => [] }, rtnl: { splitAddresses: async () => ({ on: [], elsewhere: [] }) } },
      new Set(known.desired.ipsets.keys()), nft ? ['inet'] : undefined);
    if (!nft) for (const [family, payload] of mirror.iptables) if (!(await iptables.holds(family, payload))) throw new Error('iptables rules not as written');
    const readMs = performance.now() - start;
    const readCpu = process.cpuUsage(cpu);
    const readEntries = read.snapshot.ipsets.reduce((n, s) => n + s.entries.length, 0);
    if (readEntries !== elements) throw new Error(`${backend}: read back ${readEntries} entries, programmed ${elements}`);
    return { cold, add, del, read: { ms: readMs, userMs: readCpu.user / 1000, systemMs: readCpu.system / 1000, entries: readEntries } };
  } finally {
    client.close();
    ns.remove();
  }
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const out = { services: SERVICES, endpoints: ENDPOINTS, runs: RUNS, kernel: os.release(), node: process.version, cpu: os.cpus()[0]?.model, backends: {} };
for (const backend of ['iptables', 'nftables']) {
  const runs = [];
  for (let r = 0; r < RUNS; r++) {
    say(`${backend}: ${SERVICES} Services, run ${r + 1}/${RUNS}`);
    runs.push(await runBackend(backend));
  }
  out.backends[backend] = runs;
}
const results = a.results ? path.resolve(a.results) : path.join(here, 'results');
mkdirSync(results, { recursive: true });
const file = path.join(results, `nft-vs-iptables${small ? '-small' : ''}.json`);
writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
say(`wrote ${file}`);

/** The section of BENCHMARKS.md: one table, medians of the runs. */
function table(r) {
  const m = (backend, pick) => median(r.backends[backend].map(pick));
  const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const cell = (backend, phase, cost) => {
    const p = (x) => x[phase];
    const split = `user ${ms(m(backend, (x) => p(x).userMs))} ms, system ${ms(m(backend, (x) => p(x).systemMs))} ms`;
    return `${ms(m(backend, (x) => p(x).ms))} ms (${split}${cost ? `; ${cost(backend)}` : ''})`;
  };
  const row = (what, phase, cost) => `| ${what} | ${cell('iptables', phase, cost)} | ${cell('nftables', phase, cost)} |`;
  const msgs = (phase) => (backend) => {
    const p = (x) => x[phase];
    const programs = m(backend, (x) => p(x).programs);
    return `${m(backend, (x) => p(x).messages).toLocaleString('en')} netlink messages${programs ? `, ${programs} iptables programs` : ''}`;
  };
  const elements = r.backends.nftables[0].cold.elements;
  return [
    '## The proxy\'s rules backends: iptables + ipset against nftables',
    '',
    `Generated by \`node bench/nft-vs-iptables.mjs --size ${small ? 'small' : 'full'}\` (\`node bench/run.mjs --only nft\`) on ${new Date().toISOString().slice(0, 10)}, `
      + `on the host kernel (${r.kernel}, ${r.cpu}, node ${r.node}): the rules part alone, which needs no IPVS (IPVS and \`kube-ipvs0\` are programmed the same way with either backend; the user-mode-linux kernel has no nf_tables, and under QEMU's emulation the node code, the same for both, would dominate). `
      + `${r.services.toLocaleString('en')} Services (ClusterIP, every fifth a NodePort) of ${r.endpoints} endpoints, one of them on the node: ${elements.toLocaleString('en')} set entries. `
      + `Each run in a fresh network namespace through the controller's code (desired state, planner, applier, reader); median of ${r.runs} run(s). `
      + 'The iptables path is kube-proxy\'s: the KUBE-* ipsets over netlink, the chains with iptables-restore (iptables-nft here), the last write read back by an iptables-save that the sync does not wait for; the nftables path is one transaction per sync. '
      + 'Wall time, then this process\'s CPU time: user (JavaScript and the addon: planning is not in it, the translation to netlink is) and system (the kernel doing the work, in the sending thread; iptables-restore\'s own time is in neither). The machine was shared (2 cores, other work running): compare within a row.',
    '',
    '| | iptables + ipset | nftables |',
    '|---|---|---|',
    row('cold sync (every set entry, the rules)', 'cold', msgs('cold')),
    row('one Service added (10 endpoints)', 'add', msgs('add')),
    row('that Service deleted', 'del', msgs('del')),
    row(`kernel read-back (${elements.toLocaleString('en')} entries)`, 'read'),
    '',
  ].join('\n');
}

if (a.markdown) {
  const begin = '<!-- nft-vs-iptables:begin (generated by bench/nft-vs-iptables.mjs; edits inside are overwritten) -->';
  const end = '<!-- nft-vs-iptables:end -->';
  const md = existsSync(a.markdown) ? readFileSync(a.markdown, 'utf8') : '';
  const section = `${begin}\n${table(out)}${end}`;
  const at = md.indexOf(begin);
  const next = at >= 0 ? md.slice(0, at) + section + md.slice(md.indexOf(end, at) + end.length) : `${md.trimEnd()}\n\n${section}\n`;
  writeFileSync(a.markdown, next);
  say(`wrote ${a.markdown}`);
} else {
  process.stdout.write(table(out));
}
