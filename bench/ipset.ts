/**
 * ipset benchmark: 100,000 hash:ip,port entries loaded with addMany() vs
 * `ipset restore`, and read back with list() vs `ipset save`, each run in a
 * fresh network namespace; median of 3 runs. Prints a table and writes
 * bench/results/ipset.json. Needs root.
 *
 *   node --import=./node_modules/@tapjs/typescript/dist/esm/import.mjs bench/ipset.ts
 *
 * The tool's times include starting the process (as a user of the tool
 * pays them); the set is created beforehand on both sides, so only the
 * loading and the listing are timed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Ipset } from '../lib/ipset/index.js';
import { createNetns, deleteNetns } from '../test/support/netns.js';

// --entries N (default 100,000), --runs R (default 3), --out FILE (default
// bench/results/ipset.json): bench/run.mjs passes smaller ones for --size small.
const { values: args } = parseArgs({ options: { entries: { type: 'string' }, runs: { type: 'string' }, out: { type: 'string' } } });
const N = Number(args.entries ?? 100_000);
const RUNS = Number(args.runs ?? 3);
const CREATE = ['create', 'big', 'hash:ip,port', 'hashsize', '65536', 'maxelem', '200000'];
const entries = Array.from({ length: N }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255},tcp:${1 + (i % 60000)}`);
const restoreInput = entries.map((e) => `add big ${e}`).join('\n') + '\n';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function ours(): Promise<{ load: number; list: number; messages: number }> {
  const ns = await createNetns('ipsetbench');
  try {
    const ipset = await Ipset.open({ netns: ns.path });
    try {
      await ipset.create('big', 'hash:ip,port', { hashSize: 65536, maxElem: 200000 });
      const before = ipset.counters().messagesSent;
      let t = process.hrtime.bigint();
      const applied = await ipset.addMany('big', entries);
      const load = ms(t);
      const messages = ipset.counters().messagesSent - before;
      if (applied !== N) throw new Error(`applied ${applied}`);
      t = process.hrtime.bigint();
      const listed = await ipset.list('big');
      const list = ms(t);
      if (listed.entries.length !== N) throw new Error(`listed ${listed.entries.length}`);
      return { load, list, messages };
    } finally {
      ipset.close();
    }
  } finally {
    await deleteNetns(ns);
  }
}

async function tool(): Promise<{ load: number; list: number }> {
  const ns = await createNetns('ipsetbench');
  try {
    await ns.exec('ipset', CREATE);
    let t = process.hrtime.bigint();
    await ns.exec('ipset', ['restore'], restoreInput);
    const load = ms(t);
    t = process.hrtime.bigint();
    const out = await ns.exec('ipset', ['save', 'big']);
    const list = ms(t);
    const lines = out.split('\n').filter((l) => l.startsWith('add ')).length;
    if (lines !== N) throw new Error(`ipset save printed ${lines} entries`);
    return { load, list };
  } finally {
    await deleteNetns(ns);
  }
}

const runs: Array<{ ours: Awaited<ReturnType<typeof ours>>; tool: Awaited<ReturnType<typeof tool>> }> = [];
for (let i = 0; i < RUNS; i++) runs.push({ ours: await ours(), tool: await tool() });

const row = (name: string, o: number, x: number) => ({ name, oursMs: +o.toFixed(1), toolMs: +x.toFixed(1), speedup: +(x / o).toFixed(2) });
const rows = [
  row(`load ${N} hash:ip,port (addMany vs ipset restore)`, median(runs.map((r) => r.ours.load)), median(runs.map((r) => r.tool.load))),
  row(`list ${N} (list vs ipset save)`, median(runs.map((r) => r.ours.list)), median(runs.map((r) => r.tool.list))),
];

console.log(`ipset, ${N} entries, median of ${RUNS} runs`);
console.log('| case | ours (ms) | tool (ms) | tool/ours |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${r.oursMs} | ${r.toolMs} | ${r.speedup}x |`);

const here = path.dirname(fileURLToPath(import.meta.url));
const outFile = args.out ?? path.join(here, 'results', 'ipset.json');
mkdirSync(path.dirname(outFile), { recursive: true });
writeFileSync(
  outFile,
  JSON.stringify({ entries: N, runs: RUNS, date: new Date().toISOString(), rows, raw: runs, messagesPerLoad: runs[0].ours.messages }, null, 2) + '\n',
);
